package dev.kdelay.topology.internals;

import dev.kdelay.schemas.CronSpec;
import dev.kdelay.schemas.Misfire;
import java.util.OptionalLong;

/**
 * What a recurring schedule does when an occurrence comes due: whether it fires, and which
 * occurrence comes next. An occurrence is <em>missed</em> when it comes due more than the misfire
 * threshold late, because nothing could fire it (every instance down, a long stop of the stream
 * thread). Then the schedule's {@link Misfire} policy decides:
 *
 * <ul>
 *   <li>{@code fire-once}: the missed occurrence fires as the one catch-up; the schedule resumes
 *       with the first occurrence at or after now;
 *   <li>{@code fire-all}: every missed occurrence fires, in order, one after the other; those older
 *       than the catch-up window are dropped so a long outage of a per-second schedule does not
 *       flood the target;
 *   <li>{@code skip}: the missed occurrence does not fire; the schedule resumes with the first
 *       occurrence at or after now.
 * </ul>
 */
final class Recurrence {

  private final Occurrences occurrences;
  private final long misfireThresholdMs;
  private final long catchUpWindowMs;

  Recurrence(Occurrences occurrences, long misfireThresholdMs, long catchUpWindowMs) {
    this.occurrences = occurrences;
    this.misfireThresholdMs = misfireThresholdMs;
    this.catchUpWindowMs = catchUpWindowMs;
  }

  /** The decision for an occurrence due at {@code dueMs}, seen at {@code nowMs}. */
  record Step(boolean fire, OptionalLong next) {}

  /**
   * Decides what the occurrence does.
   *
   * @param spec the schedule
   * @param dueMs when the occurrence was due
   * @param firesSoFar how many occurrences fired before this one
   * @param nowMs the current time
   */
  Step onDue(CronSpec spec, long dueMs, long firesSoFar, long nowMs) {
    boolean missed = nowMs - dueMs > misfireThresholdMs;
    boolean fire = !missed || firesWhenMissed(spec.misfire(), nowMs - dueMs);
    long fired = firesSoFar + (fire ? 1 : 0);
    if (spec.maxFires() != CronSpec.UNLIMITED && fired >= spec.maxFires()) {
      return new Step(fire, OptionalLong.empty());
    }
    return new Step(fire, next(spec, dueMs, missed, nowMs));
  }

  private boolean firesWhenMissed(Misfire misfire, long lateMs) {
    return switch (misfire) {
      case FIRE_ONCE -> true;
      case FIRE_ALL -> lateMs <= catchUpWindowMs;
      case SKIP -> false;
    };
  }

  /** The first occurrence after a resume: what was missed while paused is skipped. */
  OptionalLong onResume(CronSpec spec, long nowMs) {
    return occurrences.first(spec, nowMs);
  }

  /** The first occurrence of a new schedule. */
  OptionalLong first(CronSpec spec, long nowMs) {
    return occurrences.first(spec, nowMs);
  }

  private OptionalLong next(CronSpec spec, long dueMs, boolean missed, long nowMs) {
    if (!missed) {
      return occurrences.after(spec, dueMs, nowMs);
    }
    // Missed: continue with the first occurrence inside the catch-up window (fire-all), or the
    // first at or after now (fire-once, whose one catch-up stood for all the missed; skip).
    long from = spec.misfire() == Misfire.FIRE_ALL ? nowMs - catchUpWindowMs : nowMs;
    return occurrences.after(spec, Math.max(dueMs, from - 1), nowMs);
  }
}

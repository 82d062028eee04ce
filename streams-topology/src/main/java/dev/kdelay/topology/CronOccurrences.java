package dev.kdelay.topology;

import static java.util.Objects.requireNonNull;

import com.cronutils.model.time.ExecutionTime;
import dev.kdelay.schemas.CronExpressions;
import dev.kdelay.schemas.CronSpec;
import dev.kdelay.topology.internals.Occurrences;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The next occurrences of a recurring schedule, computed by the code that fires them, with the
 * daylight-saving changes that shape them marked: for people to check a cron expression before they
 * schedule it.
 *
 * <pre>{@code
 * CronSpec spec = new CronSpec("0 30 2 * * ?", CronFlavor.QUARTZ, ZoneId.of("Europe/Berlin"),
 *     CronSpec.NO_START, CronSpec.NO_END, CronSpec.UNLIMITED, Misfire.FIRE_ONCE);
 * for (CronOccurrences.Occurrence next : CronOccurrences.next(spec, now, 10, horizonMs)) {
 *   System.out.println(next.local() + " " + next.offset() + next.transition().orElse(""));
 * }
 * }</pre>
 */
public final class CronOccurrences {

  private CronOccurrences() {}

  /** How an occurrence relates to a daylight-saving change of its zone. */
  public enum Transition {
    /** Its local time does not exist (the clocks skip it): it fires at the end of the gap. */
    IN_GAP,
    /** Its local time happens twice (the clocks go back); this is the first time. */
    IN_OVERLAP_FIRST,
    /** Its local time happens twice; this is the second time (every-hour schedules fire both). */
    IN_OVERLAP_SECOND,
    /** The clocks went forward since the occurrence before. */
    AFTER_SPRING_FORWARD,
    /** The clocks went back since the occurrence before. */
    AFTER_FALL_BACK
  }

  /**
   * One occurrence.
   *
   * @param atMs when it fires, epoch milliseconds
   * @param local its wall-clock time in the schedule's zone
   * @param offset the zone's offset from UTC then
   * @param transition how a daylight-saving change shapes it, if one does
   */
  public record Occurrence(
      long atMs, LocalDateTime local, ZoneOffset offset, Optional<Transition> transition) {}

  /**
   * The first occurrences after a time, within the schedule's bounds and the horizon (its fire
   * limit is not applied: a preview does not know how many have fired).
   *
   * @param spec the recurring schedule
   * @param afterMs list occurrences strictly after this, epoch milliseconds
   * @param count most occurrences to list
   * @param horizonMs how far after {@code afterMs} an occurrence may be
   * @return up to {@code count} occurrences, in order
   * @throws IllegalArgumentException if the expression is invalid or count is not positive
   */
  public static List<Occurrence> next(CronSpec spec, long afterMs, int count, long horizonMs) {
    requireNonNull(spec, "spec cannot be null");
    if (count < 1) {
      throw new IllegalArgumentException("count must be positive, got " + count);
    }
    Occurrences occurrences = new Occurrences(horizonMs);
    ExecutionTime cron =
        ExecutionTime.forCron(CronExpressions.parse(spec.expression(), spec.flavor()));
    ZoneRules rules = spec.zone().getRules();
    List<Occurrence> listed = new ArrayList<>();
    long previous = afterMs;
    OptionalLong next = occurrences.after(spec, afterMs, afterMs);
    while (next.isPresent() && listed.size() < count) {
      long at = next.getAsLong();
      listed.add(occurrence(cron, rules, previous, at));
      previous = at;
      next = occurrences.after(spec, at, afterMs);
    }
    return listed;
  }

  private static Occurrence occurrence(
      ExecutionTime cron, ZoneRules rules, long previousMs, long atMs) {
    Instant at = Instant.ofEpochMilli(atMs);
    ZoneOffset offset = rules.getOffset(at);
    LocalDateTime local = LocalDateTime.ofInstant(at, offset);
    return new Occurrence(
        atMs, local, offset, transition(cron, rules, previousMs, at, local, offset));
  }

  private static Optional<Transition> transition(
      ExecutionTime cron,
      ZoneRules rules,
      long previousMs,
      Instant at,
      LocalDateTime local,
      ZoneOffset offset) {
    List<ZoneOffset> offsets = rules.getValidOffsets(local);
    if (offsets.size() == 2) {
      return Optional.of(
          offset.equals(offsets.get(0))
              ? Transition.IN_OVERLAP_FIRST
              : Transition.IN_OVERLAP_SECOND);
    }
    ZoneOffsetTransition change = rules.nextTransition(Instant.ofEpochMilli(previousMs));
    if (change == null || change.getInstant().isAfter(at)) {
      return Optional.empty();
    }
    // At the end of a gap: moved there, unless the expression asks for that local time itself.
    if (change.isGap()
        && change.getInstant().equals(at)
        && !cron.isMatch(local.atZone(ZoneOffset.UTC))) {
      return Optional.of(Transition.IN_GAP);
    }
    return Optional.of(
        change.isGap() ? Transition.AFTER_SPRING_FORWARD : Transition.AFTER_FALL_BACK);
  }
}

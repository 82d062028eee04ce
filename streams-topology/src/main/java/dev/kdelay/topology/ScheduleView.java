package dev.kdelay.topology;

import dev.kdelay.schemas.StoredTask;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What kdelay holds for one schedule id, as {@link ReadableSchedules#view} reads it.
 *
 * <p>kdelay remembers a fired one-shot for {@code delay.fired.retention.ms} and a cancel for {@code
 * delay.cancel.retention.ms}, then forgets the id; a recurring schedule is forgotten when it ends.
 * Those, and ids never seen, are {@link Status#UNKNOWN}.
 *
 * @param id the schedule id
 * @param status where the schedule stands
 * @param nextDueMs for {@link Status#PENDING}: when it fires next, epoch milliseconds
 * @param forgottenAtMs for {@link Status#CANCELLED} and {@link Status#FIRED}: when the id is
 *     forgotten and becomes {@link Status#UNKNOWN}, epoch milliseconds
 * @param task for {@link Status#PENDING} and {@link Status#PAUSED}: the stored task, with its
 *     target, payload, carried headers, timing and the number of the occurrence it fires as next
 */
public record ScheduleView(
    String id,
    Status status,
    OptionalLong nextDueMs,
    OptionalLong forgottenAtMs,
    Optional<StoredTask> task) {

  /** Where a schedule stands. */
  public enum Status {
    /** Waiting to fire (a recurring schedule: its next occurrence). */
    PENDING,
    /** A recurring schedule that is paused. */
    PAUSED,
    /** Cancelled; remembered for {@code delay.cancel.retention.ms}. */
    CANCELLED,
    /** A one-shot that fired; remembered for {@code delay.fired.retention.ms}. */
    FIRED,
    /**
     * Nothing is held: never seen, a one-shot that fired longer ago than the fired retention, a
     * recurring schedule that ended, or a cancel longer ago than the cancel retention.
     */
    UNKNOWN
  }

  /** Creates a view. */
  public ScheduleView {
    Objects.requireNonNull(id, "id cannot be null");
    Objects.requireNonNull(status, "status cannot be null");
    Objects.requireNonNull(nextDueMs, "nextDueMs cannot be null");
    Objects.requireNonNull(forgottenAtMs, "forgottenAtMs cannot be null");
    Objects.requireNonNull(task, "task cannot be null");
  }

  /** The view of an id kdelay holds nothing for. */
  public static ScheduleView unknown(String id) {
    return new ScheduleView(
        id, Status.UNKNOWN, OptionalLong.empty(), OptionalLong.empty(), Optional.empty());
  }
}

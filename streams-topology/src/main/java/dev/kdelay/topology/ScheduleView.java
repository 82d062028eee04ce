package dev.kdelay.topology;

import dev.kdelay.schemas.StoredTask;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What kdelay holds for one schedule id, as {@link ScheduleStores#view} reads it.
 *
 * <p>kdelay forgets an id once nothing more can happen to it: a one-shot that fired, a recurring
 * schedule that ended, a cancel whose retention passed. Those, and ids never seen, are {@link
 * Status#UNKNOWN}: remembering fired ids would cost a write per fire.
 *
 * @param id the schedule id
 * @param status where the schedule stands
 * @param nextDueMs for {@link Status#PENDING}: when it fires next, epoch milliseconds
 * @param forgottenAtMs for {@link Status#CANCELLED}: when the cancel is forgotten and the id
 *     becomes {@link Status#UNKNOWN}, epoch milliseconds
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
    /** Nothing is held: never seen, fired (one-shot), ended (recurring), or cancelled long ago. */
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

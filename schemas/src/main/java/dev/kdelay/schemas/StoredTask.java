package dev.kdelay.schemas;

import java.util.Objects;
import java.util.OptionalLong;

/**
 * A pending task as kept in the schedule store, inside the entry of its schedule id.
 *
 * @param schedule what to deliver, where, and the timing it came from
 * @param occurrence the 1-based number of the occurrence this entry fires as (1 for one-shots)
 * @param deferredDueMs the due time of that occurrence when a fire-rate limit deferred it to a
 *     later slot (the entry's time); empty when the entry fires at its own due time. A deferred
 *     task fires with this due time: its idempotency key and {@code delay-due-at} are those it
 *     would have had on time.
 */
public record StoredTask(Schedule schedule, long occurrence, OptionalLong deferredDueMs) {

  /**
   * Creates a stored task.
   *
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if occurrence is not positive
   */
  public StoredTask {
    Objects.requireNonNull(schedule, "schedule cannot be null");
    Objects.requireNonNull(deferredDueMs, "deferredDueMs cannot be null");
    if (occurrence < 1) {
      throw new IllegalArgumentException("occurrence must be >= 1, got " + occurrence);
    }
  }

  /**
   * Creates a stored task that fires at its own due time.
   *
   * @throws NullPointerException if schedule is null
   * @throws IllegalArgumentException if occurrence is not positive
   */
  public StoredTask(Schedule schedule, long occurrence) {
    this(schedule, occurrence, OptionalLong.empty());
  }

  /**
   * This task deferred by a fire-rate limit: it fires later, as the occurrence due at {@code
   * dueMs}.
   *
   * @param dueMs the due time of the occurrence deferred
   * @return the deferred task
   */
  public StoredTask deferredFrom(long dueMs) {
    return new StoredTask(schedule, occurrence, OptionalLong.of(dueMs));
  }

  /**
   * The due time this task fires as: the deferred occurrence's, or else the time of the entry that
   * holds it.
   *
   * @param entryTimeMs the time of the store entry that holds this task
   * @return the due time its fire carries
   */
  public long firesAsDueMs(long entryTimeMs) {
    return deferredDueMs.orElse(entryTimeMs);
  }

  /**
   * This task as it fires at its own due time: what a resume leaves of a deferred task, whose
   * occurrence the pause skipped.
   *
   * @return the task without its deferral
   */
  public StoredTask undeferred() {
    return deferredDueMs.isEmpty() ? this : new StoredTask(schedule, occurrence);
  }
}

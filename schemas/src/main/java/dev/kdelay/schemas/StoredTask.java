package dev.kdelay.schemas;

import java.util.Objects;

/**
 * A pending task as kept in the schedule store, inside the entry of its schedule id.
 *
 * @param schedule what to deliver, where, and the timing it came from
 * @param occurrence the 1-based number of the occurrence this entry fires as (1 for one-shots)
 */
public record StoredTask(Schedule schedule, long occurrence) {

  /**
   * Creates a stored task.
   *
   * @throws NullPointerException if schedule is null
   * @throws IllegalArgumentException if occurrence is not positive
   */
  public StoredTask {
    Objects.requireNonNull(schedule, "schedule cannot be null");
    if (occurrence < 1) {
      throw new IllegalArgumentException("occurrence must be >= 1, got " + occurrence);
    }
  }
}

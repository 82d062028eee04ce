package dev.kdelay.schemas;

import java.util.Objects;

/**
 * A validated request from the request topic.
 *
 * @param action what the request asks for
 * @param id the schedule id (the record key)
 * @param timestamp the request record's timestamp, epoch ms; orders requests for one id
 * @param schedule what to schedule; present exactly when the action is {@link Action#SCHEDULE}
 * @param newTiming the time to move the schedule to; present exactly when the action is {@link
 *     Action#RESCHEDULE}
 */
public record DelayRequest(
    Action action, String id, long timestamp, Schedule schedule, Timing newTiming) {

  /**
   * Creates a request.
   *
   * @throws NullPointerException if action or id is null
   * @throws IllegalArgumentException if a schedule or a new timing is given for another action, or
   *     missing
   */
  public DelayRequest {
    Objects.requireNonNull(action, "action cannot be null");
    Objects.requireNonNull(id, "id cannot be null");
    if ((action == Action.SCHEDULE) != (schedule != null)) {
      throw new IllegalArgumentException(
          "a schedule is required for action schedule and only for it, got action " + action);
    }
    if ((action == Action.RESCHEDULE) != (newTiming != null)) {
      throw new IllegalArgumentException(
          "a new timing is required for action reschedule and only for it, got action " + action);
    }
  }

  /** A request that is not a reschedule. */
  public DelayRequest(Action action, String id, long timestamp, Schedule schedule) {
    this(action, id, timestamp, schedule, null);
  }
}

package dev.kdelay.schemas;

import java.util.Optional;

/** What a request asks for, from its {@link DelayHeaders#ACTION} header. */
public enum Action {
  /** Create or replace the schedule with the request's id. */
  SCHEDULE("schedule"),
  /** Remove the schedule with the request's id; nothing more fires for it. */
  CANCEL("cancel"),
  /** Stop firing a recurring schedule until it is resumed. */
  PAUSE("pause"),
  /** Continue a paused recurring schedule. */
  RESUME("resume"),
  /**
   * Fire a pending or paused schedule's next occurrence at once, as that occurrence (its usual
   * idempotency key); a recurring schedule goes on from the occurrence after it.
   */
  TRIGGER("trigger"),
  /** Move a live schedule to a new due time or cron expression, keeping its target and payload. */
  RESCHEDULE("reschedule");

  private final String wireName;

  Action(String wireName) {
    this.wireName = wireName;
  }

  /** The header value that names this action. */
  public String wireName() {
    return wireName;
  }

  /**
   * Looks an action up by its header value.
   *
   * @param value the header value, case-sensitive
   * @return the action, or empty if the value names none
   */
  public static Optional<Action> fromWireName(String value) {
    for (Action action : values()) {
      if (action.wireName.equals(value)) {
        return Optional.of(action);
      }
    }
    return Optional.empty();
  }
}

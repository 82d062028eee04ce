package dev.kdelay.schemas;

/**
 * Why a request was rejected. The name is the stable code written to the dead-letter record's
 * {@link DelayHeaders#ERROR} header; clients may match on it.
 */
public enum RejectionReason {
  /** The key is missing, not UTF-8, empty or longer than the id limit. */
  BAD_ID,
  /** {@code delay-action} names no known action. */
  UNKNOWN_ACTION,
  /** A schedule without {@code delay-target-topic}. */
  MISSING_TARGET,
  /** The target topic name is not a legal Kafka topic name. */
  BAD_TARGET,
  /** The target topic is not allowed: internal, kdelay's own, or outside the allowlist. */
  TARGET_NOT_ALLOWED,
  /** The target topic does not exist. */
  UNKNOWN_TOPIC,
  /** {@code delay-target-partition} is not a non-negative integer. */
  BAD_PARTITION,
  /** A schedule with none of {@code delay-fire-at}, {@code delay-after}, {@code delay-cron}. */
  MISSING_TIME,
  /** A time or duration header that cannot be parsed, or is out of range. */
  BAD_TIME,
  /** More than one of {@code delay-fire-at}, {@code delay-after}, {@code delay-cron}. */
  CONFLICTING_TIMES,
  /** The due time lies beyond the configured horizon. */
  TOO_FAR,
  /** The cron expression or cron type is invalid. */
  BAD_CRON,
  /** {@code delay-zone} is not a known time zone id. */
  BAD_ZONE,
  /** A header value that is not valid UTF-8, a repeated request header, or a bad option value. */
  BAD_HEADER,
  /** The payload or the headers exceed the configured limits. */
  TOO_LARGE,
  /**
   * A tenant's new schedule (not a replacement of one it holds) while the tenant holds as many
   * pending schedules as {@code delay.tenant.<tenant>.max.pending} allows. Cancel or let some fire,
   * then send it again.
   */
  TOO_MANY_PENDING,
  /**
   * A newer request for the same id already applied (requests for an id apply in timestamp order;
   * this one arrived late, typically through the reroute topic), or one stamped the same fired or
   * cancelled the id (a retry or a replay of what already fired).
   */
  SUPERSEDED,
  /**
   * A schedule moved here by {@code kdelay move} from a deployment this one does not take moved
   * schedules from ({@code delay.import.from}). Replay the dead letter once it does.
   */
  IMPORT_REFUSED,
  /** The action does not apply to the schedule's current state (pausing a one-shot, say). */
  NOT_APPLICABLE,
  /**
   * Not a request's fault: a stored task came due but could not be decoded (a corrupted state
   * store, or state written by a newer kdelay). The dead letter carries the stored bytes, keyed by
   * the schedule id, so that nothing is dropped silently and an operator can recover it. Also the
   * code of a request refused because the state it needs cannot be read: a pause or resume of an
   * unreadable stored task, or any request for an id whose schedules-store entry is unreadable.
   */
  UNREADABLE_TASK,
  /**
   * Not a request's fault: a task came due but its target refuses the fired record (too large for
   * the topic's {@code max.message.bytes} or the producer's {@code max.request.size}, no write
   * permission, a timestamp the topic no longer accepts). The message names the broker's error. The
   * dead letter carries the fired record's key, payload and headers and {@code delay-target-topic}.
   */
  UNDELIVERABLE,
  /**
   * Not a request's fault: kdelay failed unexpectedly on this request or task (a bug). The request,
   * or the task as it would have fired (its stored bytes, if it cannot be built), is dead-lettered
   * instead of stopping the stream thread; {@code delay-error-id} names the ERROR log line that has
   * the stack trace.
   */
  INTERNAL
}

package dev.kdelay.service;

import dev.kdelay.schemas.LogValues;
import dev.kdelay.topology.internals.delivery.DeliveryQuarantine;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Replaces a stream thread that died of an unexpected exception, so that one bad moment does not
 * stop the instance; its tasks are revived from their changelogs and, under exactly-once, nothing
 * it had not committed is visible. A failure that keeps repeating is not a bad moment: past {@code
 * maxFailures} within {@code window} the instance shuts down instead of spinning. A failure caused
 * by a record the broker refused, which the {@link DeliveryQuarantine} learned, does not count: the
 * replaced thread dead-letters that record instead of sending it again, so each such failure is
 * progress, however many bad records are due together.
 */
final class ReplaceThreadHandler implements StreamsUncaughtExceptionHandler {

  private static final Logger log = LoggerFactory.getLogger(ReplaceThreadHandler.class);

  private final int maxFailures;
  private final Duration window;
  private final Clock clock;
  private final Deque<Instant> failures = new ArrayDeque<>();
  private final DeliveryQuarantine quarantine;

  ReplaceThreadHandler(
      int maxFailures, Duration window, Clock clock, DeliveryQuarantine quarantine) {
    this.maxFailures = maxFailures;
    this.window = window;
    this.clock = clock;
    this.quarantine = quarantine;
  }

  /** Runs on the failing stream thread; several may fail at once, hence synchronized. */
  @Override
  public synchronized StreamThreadExceptionResponse handle(Throwable exception) {
    // A target that refused kdelay's write for want of permission is fatal to Kafka Streams: hold
    // that topic's fires back, or the replaced thread would fire into the same refusal.
    DeliveryQuarantine.Learned learned = quarantine.learn(exception);
    if (!learned.topics().isEmpty()) {
      log.warn(
          "event=target-topics-quarantined topics={} reason=TOPIC_AUTHORIZATION_FAILED",
          LogValues.quote(String.join(",", learned.topics())));
    }
    if (learned.handled()) {
      // A refusal the quarantine learned: the replaced thread dead-letters that record instead,
      // so this failure is progress, not the loop the limit is there to stop.
      log.error(
          "event=stream-thread-failed thread={} cause=record-refused response=replace-thread",
          LogValues.quote(Thread.currentThread().getName()),
          exception);
      return StreamThreadExceptionResponse.REPLACE_THREAD;
    }
    Instant now = clock.instant();
    failures.addLast(now);
    while (failures.peekFirst().isBefore(now.minus(window))) {
      failures.removeFirst();
    }
    if (failures.size() > maxFailures) {
      log.error(
          "event=stream-thread-failed thread={} failures={} window_s={} response=shutdown-client",
          LogValues.quote(Thread.currentThread().getName()),
          failures.size(),
          window.toSeconds(),
          exception);
      return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
    }
    log.error(
        "event=stream-thread-failed thread={} response=replace-thread",
        LogValues.quote(Thread.currentThread().getName()),
        exception);
    return StreamThreadExceptionResponse.REPLACE_THREAD;
  }
}

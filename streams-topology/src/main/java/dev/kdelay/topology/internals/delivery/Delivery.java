package dev.kdelay.topology.internals.delivery;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.LogValues;
import dev.kdelay.schemas.Rejection;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.topology.DelayMetrics;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends what a due entry produces: the fired record to its target, or, if the target would refuse
 * it, its dead letter; and the dead letter of a stored entry kdelay cannot fire (it cannot be read,
 * or kdelay failed on it). The one way out for a fire, whether the fire punctuator found the entry
 * due or a trigger request asked for it now. Either way it notes the fire for the commit that makes
 * it visible ({@link FireCommits}), which the punctuation, or the trigger request, asks for when it
 * ends.
 *
 * <p>Runs on the stream thread only.
 */
public final class Delivery implements Firing {

  private static final Logger log = LoggerFactory.getLogger(Delivery.class);

  private final ProcessorContext<Object, Object> context;
  private final DeliveryCheck check;
  private final DeadLetters deadLetters;
  private final DelayMetrics metrics;
  private final FireCommits commits;

  public Delivery(
      ProcessorContext<Object, Object> context,
      DeliveryCheck check,
      DeadLetters deadLetters,
      DelayMetrics metrics,
      FireCommits commits) {
    this.context = context;
    this.check = check;
    this.deadLetters = deadLetters;
    this.metrics = metrics;
    this.commits = commits;
  }

  @Override
  public void fire(Record<FiredKey, byte[]> record, long nowMs, long readyMs) {
    // The record's timestamp is its due time (or the fire time, when triggered before it).
    long lateMs = Math.max(0, nowMs - record.timestamp());
    Optional<Rejection> undeliverable = check.atFire(record, nowMs);
    commits.fired(nowMs - readyMs);
    if (undeliverable.isPresent()) {
      // Never hand the producer a record the broker would refuse: under exactly-once that fails
      // the transaction of every task of the thread. The task is not lost: it goes to the
      // dead-letter topic with its fired headers and the reason, in this same transaction, which
      // also removes it from the store.
      deadLetters.write(OutputRecords.undeliverable(record, undeliverable.get(), nowMs));
      afterward(
          () -> {
            metrics.taskUndeliverable(undeliverable.get().reason());
            if (log.isDebugEnabled()) {
              log.debug(
                  "event=undeliverable id={} topic={} reason={} message={}",
                  scheduleId(record),
                  LogValues.quote(record.key().topic()),
                  undeliverable.get().reason(),
                  LogValues.quote(undeliverable.get().message()));
            }
          });
      return;
    }
    String sink =
        record.key().partition() == FiredKey.ANY_PARTITION ? Sinks.FIRE : Sinks.FIRE_PARTITIONED;
    context.forward(record, sink);
    afterward(
        () -> {
          metrics.taskFired(lateMs);
          if (check.hasTenants()) {
            String tenant = Causes.tenant(record.headers());
            if (!tenant.isEmpty()) {
              metrics.tenantTaskFired(tenant, lateMs);
            }
          }
          if (log.isDebugEnabled()) {
            log.debug(
                "event=fired id={} topic={} due={} late_ms={}",
                scheduleId(record),
                LogValues.quote(record.key().topic()),
                record.timestamp(),
                lateMs);
          }
        });
  }

  @Override
  public void deadLetter(Record<byte[], byte[]> deadLetter, RejectionReason reason) {
    commits.fired(0);
    deadLetters.write(deadLetter);
    afterward(() -> metrics.taskUndeliverable(reason));
  }

  /**
   * Runs what follows a record handed to Kafka Streams: metrics and logging, which must not turn a
   * record already sent into a failure of the task that sent it.
   */
  public static void afterward(Runnable reporting) {
    try {
      reporting.run();
    } catch (RuntimeException e) {
      log.warn("event=reporting-failed error={}", LogValues.quote(e.toString()), e);
    }
  }

  /** The schedule id a fired record carries in its {@code delay-id} header, quoted for a log. */
  private static String scheduleId(Record<FiredKey, byte[]> record) {
    Header id = record.headers().lastHeader(DelayHeaders.ID);
    return LogValues.quote(
        id == null || id.value() == null ? null : new String(id.value(), StandardCharsets.UTF_8));
  }
}

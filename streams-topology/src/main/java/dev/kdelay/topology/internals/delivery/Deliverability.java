package dev.kdelay.topology.internals.delivery;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.Rejection;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.schemas.Schedule;
import dev.kdelay.schemas.StoredTask;
import dev.kdelay.schemas.StoredTaskCodec;
import dev.kdelay.topology.DelayConfig;
import dev.kdelay.topology.StreamsTuning;
import dev.kdelay.topology.TargetTopic;
import dev.kdelay.topology.internals.store.ScheduleEntry;
import java.util.Optional;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.processor.api.Record;

/**
 * Whether a target would accept a fired record, checked before the producer sees it. Under
 * exactly-once a record the broker refuses fails the whole transaction and stops the stream thread,
 * so everything that can be known beforehand is checked here: the topic exists and has the
 * partition, kdelay may write to it, the record fits both the producer's {@code max.request.size}
 * and the topic's {@code max.message.bytes}, and its timestamp (the due time) is not older than the
 * topic accepts.
 *
 * <p>At intake a refusal is the request's fault and gets the request's code ({@code TOO_LARGE},
 * {@code TARGET_NOT_ALLOWED}, ...); at fire time it is {@code UNDELIVERABLE}, with the broker's
 * name for the error the record would have met. Sizes are {@link RecordSize} upper bounds; with a
 * compressing producer a batch is smaller than its records, so only {@code max.request.size}, which
 * the producer checks uncompressed, is enforced then.
 */
public final class Deliverability {

  // Wider than any due time, fire time or occurrence a fired record's headers will hold.
  private static final long WIDEST = Long.MAX_VALUE;

  private final int maxRequestBytes;
  private final boolean compresses;

  Deliverability(int maxRequestBytes, boolean compresses) {
    this.maxRequestBytes = maxRequestBytes;
    this.compresses = compresses;
  }

  public static Deliverability of(DelayConfig config) {
    return new Deliverability(
        StreamsTuning.producerMaxRequestBytes(config), StreamsTuning.producerCompresses(config));
  }

  /** The most bytes a record to this topic may have, as far as kdelay can tell. */
  long limit(TargetTopic topic) {
    return compresses ? maxRequestBytes : Math.min(maxRequestBytes, topic.maxMessageBytes());
  }

  /** Why a schedule request's target would refuse it, or empty. */
  Optional<Rejection> atIntake(String id, Schedule schedule, TargetTopic topic) {
    String name = schedule.target().topic();
    Optional<Rejection> missing =
        missing(
            name,
            schedule.target().partition().orElse(-1),
            topic,
            "target topic '" + name + "' does not exist; create it first");
    if (missing.isPresent()) {
      return missing;
    }
    if (!topic.writable()) {
      return rejection(
          RejectionReason.TARGET_NOT_ALLOWED,
          "kdelay may not write to topic '" + name + "': its principal lacks WRITE there");
    }
    long fired = size(OutputRecords.fired(id, schedule, WIDEST, WIDEST, WIDEST));
    if (fired > limit(topic)) {
      return rejection(
          RejectionReason.TOO_LARGE,
          "the fired record would be up to "
              + fired
              + " bytes; "
              + limitText(name, topic)
              + ". Send a smaller payload or fewer headers");
    }
    long stored =
        RecordSize.BATCH_OVERHEAD
            + RecordSize.MAX_RECORD_OVERHEAD
            + Utils.utf8Length(id)
            + ScheduleEntry.FORMAT_3_HEADER_BYTES
            // the widest it is kept as: deferred by a fire-rate limit, it carries its due time
            + StoredTaskCodec.encodedLength(new StoredTask(schedule, WIDEST).deferredFrom(WIDEST))
            + 10;
    if (stored > maxRequestBytes) {
      return rejection(
          RejectionReason.TOO_LARGE,
          "the task would be kept as a "
              + stored
              + "-byte changelog record, over the producer's max.request.size ("
              + maxRequestBytes
              + ")");
    }
    return Optional.empty();
  }

  /** Why a fired record's target would refuse it now, or empty. */
  Optional<Rejection> atFire(Record<FiredKey, byte[]> fired, TargetTopic topic, long nowMs) {
    String name = fired.key().topic();
    Optional<Rejection> missing =
        missing(
            name,
            fired.key().partition(),
            topic,
            "target topic '" + name + "' no longer exists; the task could not be fired");
    if (missing.isPresent()) {
      return missing;
    }
    if (!topic.writable()) {
      return undeliverable(
          "TOPIC_AUTHORIZATION_FAILED: kdelay may not write to topic '" + name + "'");
    }
    long size = size(fired);
    if (size > limit(topic)) {
      return undeliverable(
          "MESSAGE_TOO_LARGE: the fired record is " + size + " bytes; " + limitText(name, topic));
    }
    long dueMs = dueOf(fired);
    if (dueMs < 0) {
      // Stored by a kdelay that took such times in: no Kafka record can carry it.
      return undeliverable(
          "INVALID_TIMESTAMP: the task is due at "
              + dueMs
              + ", before the Unix epoch; no Kafka record can be stamped with that time");
    }
    long age = nowMs - fired.timestamp();
    if (age > topic.maxTimestampAgeMs()) {
      return undeliverable(
          "INVALID_TIMESTAMP: the fired record is stamped with its due time, "
              + age
              + " ms ago; topic '"
              + name
              + "' refuses timestamps older than "
              + topic.maxTimestampAgeMs()
              + " ms (message.timestamp.before.max.ms)");
    }
    return Optional.empty();
  }

  private String limitText(String name, TargetTopic topic) {
    if (compresses || maxRequestBytes <= topic.maxMessageBytes()) {
      return "the producer's max.request.size is " + maxRequestBytes;
    }
    return "topic '"
        + name
        + "' accepts at most "
        + topic.maxMessageBytes()
        + " (max.message.bytes)";
  }

  /** A topic that does not exist, or lacks the partition asked for (-1: none asked for). */
  private static Optional<Rejection> missing(
      String name, int partition, TargetTopic topic, String absent) {
    if (topic.status() == TargetTopic.Status.ABSENT) {
      return rejection(RejectionReason.UNKNOWN_TOPIC, absent);
    }
    if (topic.status() == TargetTopic.Status.PRESENT && partition >= topic.partitions()) {
      return rejection(
          RejectionReason.BAD_PARTITION,
          "target topic '"
              + name
              + "' has "
              + topic.partitions()
              + " partitions; partition "
              + partition
              + " does not exist");
    }
    return Optional.empty();
  }

  /** The due time a fired record carries in {@code delay-due-at}. */
  private static long dueOf(Record<FiredKey, byte[]> fired) {
    org.apache.kafka.common.header.Header due = fired.headers().lastHeader(DelayHeaders.DUE_AT);
    try {
      return Long.parseLong(new String(due.value(), java.nio.charset.StandardCharsets.UTF_8));
    } catch (RuntimeException e) {
      return fired.timestamp(); // written by OutputRecords, so always there: never happens
    }
  }

  private static long size(Record<FiredKey, byte[]> fired) {
    return RecordSize.of(fired.key().key(), fired.value(), fired.headers());
  }

  private static Optional<Rejection> undeliverable(String message) {
    return rejection(RejectionReason.UNDELIVERABLE, message);
  }

  private static Optional<Rejection> rejection(RejectionReason reason, String message) {
    return Optional.of(new Rejection(reason, message));
  }
}

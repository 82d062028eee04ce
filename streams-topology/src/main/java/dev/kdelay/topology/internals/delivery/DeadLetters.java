package dev.kdelay.topology.internals.delivery;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.topology.LogValues;
import dev.kdelay.topology.TargetTopic;
import dev.kdelay.topology.TargetTopics;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes dead letters, each fitted to what the dead-letter topic and the producer accept, so that
 * no dead letter can fail a transaction for its size. A dead letter that does not fit whole leaves
 * out, in this order, as little as it must:
 *
 * <ol>
 *   <li>its value;
 *   <li>its carried headers, keeping kdelay's own ({@code delay-error}, {@code
 *       delay-error-message}, {@code delay-id}, {@code delay-due-at}, ...) and the target topic;
 *   <li>its key.
 * </ol>
 *
 * <p>{@code delay-error-omitted} then says what was left out and how large it was. A dead letter
 * the producer refused all the same (the {@link DeliveryQuarantine} remembers) is written in the
 * smallest form on the retry; refused again, it is dropped with an ERROR log line naming it.
 *
 * <p>Runs on the stream thread only.
 */
public final class DeadLetters {

  private static final Logger log = LoggerFactory.getLogger(DeadLetters.class);

  private final ProcessorContext<Object, Object> context;
  private final Deliverability deliverability;
  private final TargetTopics topics;
  private final String dlqTopic;
  private final DeliveryQuarantine quarantine;

  public DeadLetters(
      ProcessorContext<Object, Object> context,
      Deliverability deliverability,
      TargetTopics topics,
      String dlqTopic,
      DeliveryQuarantine quarantine) {
    this.context = context;
    this.deliverability = deliverability;
    this.topics = topics;
    this.dlqTopic = dlqTopic;
    this.quarantine = quarantine;
  }

  /** Writes a dead letter, fitted to the dead-letter topic. */
  public void write(Record<byte[], byte[]> deadLetter) {
    String cause = Causes.deadLetter(deadLetter.headers());
    Optional<DeliveryQuarantine.Refusal> refused = quarantine.refusal(cause);
    TargetTopic topic = topics.cached(dlqTopic);
    Record<byte[], byte[]> fitted;
    if (refused.isEmpty()) {
      fitted = fitted(deadLetter, deliverability.limit(topic));
    } else if (refused.get().count() == 1) {
      fitted = smallest(deadLetter);
    } else {
      log.error(
          "event=dead-letter-dropped topic={} code={} error={} reason=\"the dead-letter topic"
              + " refused even its smallest form\"",
          LogValues.quote(dlqTopic),
          LogValues.quote(code(deadLetter.headers())),
          LogValues.quote(refused.get().error()));
      return;
    }
    if (fitted.key() == null && topic.compacted()) {
      // A compacted topic refuses a record without a key: the one of a request that had none, or
      // a smallest form. Keyed by what it is about, two dead letters never compact each other.
      fitted = fitted.withKey(utf8(cause));
    }
    context.forward(fitted, Sinks.DLQ);
  }

  /** The dead letter as it is if it fits {@code limit} bytes, else with as little left out. */
  static Record<byte[], byte[]> fitted(Record<byte[], byte[]> deadLetter, long limit) {
    if (size(deadLetter) <= limit) {
      return deadLetter;
    }
    Record<byte[], byte[]> withoutValue = withoutValue(deadLetter);
    if (size(withoutValue) <= limit) {
      return withoutValue;
    }
    Record<byte[], byte[]> withoutHeaders = withoutCarriedHeaders(deadLetter);
    if (size(withoutHeaders) <= limit) {
      return withoutHeaders;
    }
    return smallest(deadLetter);
  }

  /** The smallest form: no key, no value, only kdelay's own headers. */
  static Record<byte[], byte[]> smallest(Record<byte[], byte[]> deadLetter) {
    Record<byte[], byte[]> withoutHeaders = withoutCarriedHeaders(deadLetter);
    String omitted =
        omittedText(withoutHeaders.headers())
            + ", key ("
            + (deadLetter.key() == null ? 0 : deadLetter.key().length)
            + " bytes)";
    return new Record<>(
        null, null, deadLetter.timestamp(), replaceOmitted(withoutHeaders.headers(), omitted));
  }

  private static Record<byte[], byte[]> withoutValue(Record<byte[], byte[]> deadLetter) {
    Headers headers = new RecordHeaders(deadLetter.headers().toArray());
    headers.add(
        DelayHeaders.ERROR_OMITTED, utf8("value (" + length(deadLetter.value()) + " bytes)"));
    return new Record<>(deadLetter.key(), null, deadLetter.timestamp(), headers);
  }

  private static Record<byte[], byte[]> withoutCarriedHeaders(Record<byte[], byte[]> deadLetter) {
    Headers kept = new RecordHeaders();
    int count = 0;
    long bytes = 0;
    for (Header header : deadLetter.headers()) {
      if (isKept(header)) {
        kept.add(header);
      } else {
        count++;
        bytes += header.key().length() + length(header.value());
      }
    }
    kept.add(
        DelayHeaders.ERROR_OMITTED,
        utf8(
            "value ("
                + length(deadLetter.value())
                + " bytes), headers ("
                + count
                + ", "
                + bytes
                + " bytes)"));
    return new Record<>(deadLetter.key(), null, deadLetter.timestamp(), kept);
  }

  /** kdelay's own headers, and a target topic short enough to be a legal topic name. */
  private static boolean isKept(Header header) {
    if (DelayHeaders.OUTPUT_HEADERS.contains(header.key())) {
      return !header.key().equals(DelayHeaders.ERROR_OMITTED);
    }
    return header.key().equals(DelayHeaders.TARGET_TOPIC) && length(header.value()) <= 249;
  }

  private static Headers replaceOmitted(Headers headers, String omitted) {
    Headers replaced = new RecordHeaders();
    for (Header header : headers) {
      if (!header.key().equals(DelayHeaders.ERROR_OMITTED)) {
        replaced.add(header);
      }
    }
    replaced.add(DelayHeaders.ERROR_OMITTED, utf8(omitted));
    return replaced;
  }

  private static String omittedText(Headers headers) {
    Header omitted = headers.lastHeader(DelayHeaders.ERROR_OMITTED);
    return new String(omitted.value(), StandardCharsets.UTF_8);
  }

  private static String code(Headers headers) {
    Header code = headers.lastHeader(DelayHeaders.ERROR);
    return code == null || code.value() == null
        ? ""
        : new String(code.value(), StandardCharsets.UTF_8);
  }

  private static long size(Record<byte[], byte[]> record) {
    return RecordSize.of(record.key(), record.value(), record.headers());
  }

  private static int length(byte[] bytes) {
    return bytes == null ? 0 : bytes.length;
  }

  private static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}

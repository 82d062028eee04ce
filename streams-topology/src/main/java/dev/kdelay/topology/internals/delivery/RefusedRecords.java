package dev.kdelay.topology.internals.delivery;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.topology.DelayConfig;
import dev.kdelay.topology.StreamsTuning;
import java.util.Optional;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.Record;

/**
 * The dead letter that takes the place of a record the broker refused, when the producer rescues
 * the transaction the refusal failed (see the delivery quarantine). Two kinds of record have one:
 *
 * <ul>
 *   <li>a fired record: its {@code UNDELIVERABLE} dead letter, as the fire path writes one for a
 *       target it knows would refuse the record (its key, payload and headers, the target topic,
 *       the code and the broker's error), fitted to the producer's {@code max.request.size};
 *   <li>a dead letter: its smallest form (kdelay's own headers only), keyed by what it is about.
 * </ul>
 *
 * <p>Anything else kdelay writes (its changelog, fences, rerouted requests) has none: a refusal of
 * those fails the transaction as it is.
 */
public final class RefusedRecords {

  private RefusedRecords() {}

  /**
   * The dead letter to write instead of a refused record, if it has one.
   *
   * @param refused the record as the producer was given it: a fired record or a dead letter
   * @param error the broker's error, as the quarantine describes it
   * @param smallest whether to give the smallest form (the whole one was refused too)
   * @param config names kdelay's own topics and the producer's limit
   * @param nowMs when it is written: its timestamp
   */
  public static Optional<ProducerRecord<byte[], byte[]>> deadLetter(
      ProducerRecord<byte[], byte[]> refused,
      String error,
      boolean smallest,
      DelayConfig config,
      long nowMs) {
    Record<byte[], byte[]> deadLetter;
    if (config.isDlqTopic(refused.topic())) {
      deadLetter =
          DeadLetterForms.smallest(
              new Record<>(
                  refused.key(),
                  refused.value(),
                  nowMs,
                  new RecordHeaders(refused.headers().toArray())));
    } else if (isFired(refused, config)) {
      Headers headers = new RecordHeaders(refused.headers().toArray());
      headers.add(DelayHeaders.TARGET_TOPIC, OutputRecords.utf8(refused.topic()));
      headers.add(DelayHeaders.ERROR, OutputRecords.utf8(RejectionReason.UNDELIVERABLE.name()));
      headers.add(
          DelayHeaders.ERROR_MESSAGE, OutputRecords.utf8("the target refused it: " + error));
      Record<byte[], byte[]> whole = new Record<>(refused.key(), refused.value(), nowMs, headers);
      deadLetter =
          smallest
              ? DeadLetterForms.smallest(whole)
              : DeadLetterForms.fitted(whole, StreamsTuning.producerMaxRequestBytes(config));
    } else {
      return Optional.empty();
    }
    byte[] key = deadLetter.key();
    if (key == null) {
      // A compacted dead-letter topic refuses a record without a key; keyed by what it is about,
      // two dead letters never compact each other.
      key = OutputRecords.utf8(Causes.deadLetter(deadLetter.headers()));
    }
    String topic = config.dlqTopic(Causes.tenant(deadLetter.headers()));
    return Optional.of(
        new ProducerRecord<>(topic, null, nowMs, key, deadLetter.value(), deadLetter.headers()));
  }

  /** A record the fire path sent to a target: it has an idempotency key and is not kdelay's. */
  private static boolean isFired(ProducerRecord<byte[], byte[]> record, DelayConfig config) {
    String topic = record.topic();
    return record.headers().lastHeader(DelayHeaders.IDEMPOTENCY_KEY) != null
        && !config.isRequestsTopic(topic)
        && !topic.equals(config.rerouteTopic())
        && !topic.startsWith(config.applicationId() + "-");
  }
}

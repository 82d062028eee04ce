package dev.kdelay.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.topology.internals.delivery.Causes;
import dev.kdelay.topology.internals.delivery.DeliveryQuarantine;
import dev.kdelay.topology.internals.store.StoreFormat;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.InvalidTimestampException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TransactionAbortedException;
import org.apache.kafka.common.errors.UnknownServerException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.errors.StreamsException;
import org.junit.jupiter.api.Test;

/**
 * What the quarantine learns from a failed send: a record's own refusal, by a cause that stays the
 * same from one try to the next, and nothing from errors that are not the record's.
 */
class DeliveryQuarantineTest {

  private final long[] now = {1_000_000};
  private final DelayConfig config = new DelayConfig(Map.of());
  private final DeliveryQuarantine quarantine = new DeliveryQuarantine(config, () -> now[0]);

  @Test
  void shouldLearnEveryRefusedRecordOfATransactionNotOnlyTheFirst() {
    // given: three fired records the broker refused one by one, each its own error
    for (int i = 0; i < 3; i++) {
      assertThat(quarantine.recordRefused(fired("t", "id-" + i), new InvalidRecordException("no")))
          .isTrue();
    }

    // then: each is known by its idempotency key
    for (int i = 0; i < 3; i++) {
      assertThat(quarantine.refusal(Causes.fired("id-" + i + "@5"))).isPresent();
    }
    assertThat(quarantine.learned()).isEqualTo(3);
  }

  @Test
  void shouldNotHoldTheTransactionsErrorAgainstTheRecordsQueuedBehindTheRefusedOne() {
    // given: the refused record's error, which the producer then hands every record still queued
    // in the aborted transaction (Sender.abortUndrainedBatches(lastError)): the same object
    InvalidTimestampException refusal = new InvalidTimestampException("too old");
    quarantine.recordRefused(fired("t", "bad"), refusal);

    // when
    boolean learned = quarantine.recordRefused(fired("t", "healthy"), refusal);

    // then: the healthy record is not quarantined
    assertThat(learned).isFalse();
    assertThat(quarantine.refusal(Causes.fired("healthy@5"))).isEmpty();
    assertThat(quarantine.refusal(Causes.fired("bad@5"))).isPresent();
  }

  @Test
  void shouldIgnoreErrorsThatAreNotTheRecordsOwn() {
    ProducerRecord<byte[], byte[]> record = fired("t", "id");

    quarantine.recordRefused(record, new TransactionAbortedException());
    quarantine.recordRefused(
        record,
        new KafkaException(
            "Failed to append record because it was part of a batch which had one more more"
                + " invalid records"));
    quarantine.recordRefused(record, new TimeoutException("Expiring 1 record(s)"));
    quarantine.recordRefused(record, new NotEnoughReplicasException("isr"));
    quarantine.recordRefused(record, new ClusterAuthorizationException("cluster"));

    assertThat(quarantine.isEmpty()).isTrue();
  }

  @Test
  void shouldLearnErrorsKafkaStreamsTreatsAsFatal() {
    // UnknownServerException never reaches Kafka Streams' production exception handler
    quarantine.recordRefused(fired("t", "id"), new UnknownServerException("broker plugin"));

    assertThat(quarantine.refusal(Causes.fired("id@5")))
        .hasValueSatisfying(
            refusal -> assertThat(refusal.error()).startsWith("UnknownServerException"));
  }

  @Test
  void shouldHoldBackATopicTheBrokerRefusesAsInvalidOrForbidden() {
    quarantine.recordRefused(fired("orders", "a"), new InvalidTopicException("orders"));
    quarantine.recordRefused(
        fired("payments", "b"), new TopicAuthorizationException(Set.of("payments")));
    quarantine.recordRefused(
        fired(config.dlqTopic(), "c"), new TopicAuthorizationException(Set.of(config.dlqTopic())));

    assertThat(quarantine.topicRefusal("orders")).get().asString().startsWith("INVALID_TOPIC");
    assertThat(quarantine.topicRefusal("payments")).isPresent();
    assertThat(quarantine.topicRefusal(config.dlqTopic())).isEmpty();
  }

  @Test
  void shouldQuarantineAUserTopicNamedLikeAChangelogButNotKdelaysOwnChangelog() {
    String own = config.applicationId() + "-" + StoreFormat.SCHEDULES_STORE + "-changelog";

    quarantine.recordRefused(fired("customers-changelog", "a"), new InvalidRecordException("x"));
    quarantine.recordRefused(fired(own, "b"), new InvalidRecordException("y"));

    assertThat(quarantine.refusal(Causes.fired("a@5"))).isPresent();
    assertThat(quarantine.refusal(Causes.fired("b@5"))).isEmpty();
  }

  @Test
  void shouldCallAThreadFailureHandledWhenItWasARefusalItLearned() {
    InvalidRecordException refusal = new InvalidRecordException("no");
    quarantine.recordRefused(fired("t", "id"), refusal);

    assertThat(quarantine.learn(new StreamsException("send failed", refusal)).handled()).isTrue();
    assertThat(
            quarantine.learn(new StreamsException("other", new IllegalStateException())).handled())
        .isFalse();
  }

  @Test
  void shouldNotCallAThreadFailureHandledWhenNothingWasLearnedFromItsRefusal() {
    // kdelay's own changelog refused a record: nothing to hold against it, so a thread failing of
    // it again and again must count towards the instance's limit
    String own = config.applicationId() + "-" + StoreFormat.SCHEDULES_STORE + "-changelog";
    InvalidRecordException refusal = new InvalidRecordException("too large for the changelog");
    quarantine.recordRefused(fired(own, "b"), refusal);

    assertThat(quarantine.learn(new StreamsException("send failed", refusal)).handled()).isFalse();
    assertThat(quarantine.recovering()).isFalse();
  }

  @Test
  void shouldRecoverInStepsForAWhileAfterARefusal() {
    assertThat(quarantine.recovering()).isFalse();

    quarantine.recordRefused(fired("t", "id"), new InvalidRecordException("no"));

    assertThat(quarantine.recovering()).isTrue();
    now[0] += DeliveryQuarantine.RECOVERY_MS;
    assertThat(quarantine.recovering()).isFalse();
  }

  private static ProducerRecord<byte[], byte[]> fired(String topic, String id) {
    RecordHeaders headers = new RecordHeaders();
    headers.add(DelayHeaders.IDEMPOTENCY_KEY, bytes(id + "@5"));
    return new ProducerRecord<>(topic, null, 5L, bytes(id), bytes("v"), headers);
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}

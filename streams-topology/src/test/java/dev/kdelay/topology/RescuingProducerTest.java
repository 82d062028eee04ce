package dev.kdelay.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.topology.internals.delivery.DeliveryQuarantine;
import dev.kdelay.topology.internals.delivery.RescuingProducer;
import dev.kdelay.topology.internals.delivery.RescuingProducer.Kind;
import dev.kdelay.topology.internals.delivery.TransactionToRunAgainException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.InvalidTimestampException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.PolicyViolationException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TransactionAbortableException;
import org.apache.kafka.common.errors.TransactionAbortedException;
import org.apache.kafka.common.errors.UnknownServerException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/**
 * What the rescuing producer makes of each error a send can end with: the broker's word about the
 * record (a suspect, sent alone to find out), another record's fate shared (sent again), or the
 * producer's own trouble (no rescue). Its rescues run against a real broker in {@code
 * RescuedWritesIT}.
 */
class RescuingProducerTest {

  @Test
  void shouldSuspectTheRecordForWhatTheBrokerSaysAboutIt() {
    assertThat(
            Set.of(
                new InvalidTimestampException("too old"),
                new InvalidRecordException("policy"),
                new RecordTooLargeException("big"),
                new TopicAuthorizationException(Set.of("orders")),
                new InvalidTopicException("bad"),
                new UnknownServerException("a broker plugin threw"),
                new PolicyViolationException("no")))
        .allSatisfy(error -> assertThat(RescuingProducer.kind(error)).isEqualTo(Kind.SUSPECT));
  }

  @Test
  void shouldSendAgainWhatSharedAnotherRecordsFate() {
    assertThat(
            Set.of(
                new KafkaException("part of a batch which had one more more invalid records"),
                new TransactionAbortedException("aborted"),
                new TransactionAbortableException("abortable"),
                new TimeoutException("expired"),
                new NotEnoughReplicasException("replicas")))
        .allSatisfy(error -> assertThat(RescuingProducer.kind(error)).isEqualTo(Kind.COLLATERAL));
  }

  @Test
  void shouldAnswerATransactionThatFailedThroughNoRecordsFaultAsOneToRunAgain() {
    // given: a transaction whose first record failed with the producer's word for "the
    // transaction must be aborted" (what a partition leader answers when it cannot reach the
    // transaction coordinator), and whose second was written
    MockProducer<byte[], byte[]> kafka =
        new MockProducer<>(false, null, new ByteArraySerializer(), new ByteArraySerializer());
    RescuingProducer producer =
        new RescuingProducer(kafka, new DeliveryQuarantine(new DelayConfig(Map.of())));
    producer.initTransactions();
    producer.beginTransaction();
    List<Exception> answers = new ArrayList<>();
    producer.send(new ProducerRecord<>("orders", bytes("a")), (metadata, e) -> answers.add(e));
    producer.send(new ProducerRecord<>("orders", bytes("b")), (metadata, e) -> answers.add(e));
    kafka.errorNext(new TransactionAbortableException("the coordinator did not answer"));

    // when: Kafka Streams flushes before its commit
    producer.flush();

    // then: no record is suspected; both are answered as a transaction to run again, which is
    // retriable, so Kafka Streams revives the tasks instead of failing the stream thread
    assertThat(answers)
        .hasSize(2)
        .allSatisfy(
            error ->
                assertThat(error)
                    .isInstanceOf(TransactionToRunAgainException.class)
                    .isInstanceOf(RetriableException.class));
  }

  @Test
  void shouldLeaveTheProducersOwnTroubleToKafkaStreams() {
    assertThat(
            Set.of(
                new ProducerFencedException("fenced"),
                new OutOfOrderSequenceException("sequence"),
                new ClusterAuthorizationException("idempotent writes"),
                new SaslAuthenticationException("credentials"),
                new UnsupportedVersionException("old broker"),
                new IllegalStateException("closed")))
        .allSatisfy(error -> assertThat(RescuingProducer.kind(error)).isEqualTo(Kind.FATAL));
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}

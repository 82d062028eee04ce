package dev.kdelay.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.topology.internals.delivery.RescuingProducer;
import dev.kdelay.topology.internals.delivery.RescuingProducer.Kind;
import java.util.Set;
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
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TransactionAbortableException;
import org.apache.kafka.common.errors.TransactionAbortedException;
import org.apache.kafka.common.errors.UnknownServerException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
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
}

package dev.kdelay.service.failover;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.service.KafkaClusterExtension;
import dev.kdelay.service.KafkaTestCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link OrphanedTransactions} against a real broker: an open transaction of another producer of
 * the application that wrote the changelog of a task this instance owns is aborted at once, and no
 * other transaction is touched. The producers' transaction timeout is a minute, so only the fence
 * can have ended a transaction within the test's waits.
 */
@Tag("integration")
@ExtendWith(KafkaClusterExtension.class)
class OrphanedTransactionsIT {

  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  private final String applicationId = "orphans-" + UUID.randomUUID().toString().substring(0, 8);
  private final String changelog = applicationId + "-schedules-changelog";
  private final String target = applicationId + "-out";
  private final String self = UUID.randomUUID().toString();
  private final List<AutoCloseable> clients = new ArrayList<>();
  private String bootstrapServers;
  private Admin admin;

  @BeforeEach
  void connect(KafkaTestCluster kafka) throws Exception {
    bootstrapServers = kafka.bootstrapServers();
    admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers));
    admin
        .createTopics(
            List.of(new NewTopic(changelog, 4, (short) 1), new NewTopic(target, 1, (short) 1)))
        .all()
        .get();
  }

  @AfterEach
  void disconnect() throws Exception {
    for (AutoCloseable client : clients) {
      client.close();
    }
    admin.close(Duration.ofSeconds(5));
  }

  @Test
  void shouldAbortOnlyTheOpenTransactionOfTheFormerOwnerOfATaskNowOwned() throws Exception {
    // given: this instance owns tasks 0 and 1; a dead instance's transaction wrote task 1's
    // changelog and a target; a live instance's wrote task 2's; this instance's own wrote task 0's;
    // another application's, whose ids look alike, wrote task 1's
    String dead = applicationId + "-" + UUID.randomUUID() + "-1";
    Producer<byte[], byte[]> deadProducer = openTransaction(dead, changelog, 1);
    Producer<byte[], byte[]> live =
        openTransaction(applicationId + "-" + UUID.randomUUID() + "-1", changelog, 2);
    Producer<byte[], byte[]> own = openTransaction(applicationId + "-" + self + "-2", changelog, 0);
    Producer<byte[], byte[]> otherApplication =
        openTransaction(applicationId + "-x-" + UUID.randomUUID() + "-1", changelog, 1);
    assertThat(lastStableOffset(changelog, 1)).isZero();

    // when
    Set<String> fenced;
    try (OrphanedTransactions orphans = orphans(Set.of(0, 1))) {
      fenced = orphans.checkNow().fenced();
    }

    // then: only the dead instance's transaction was aborted, and its producer is fenced
    assertThat(fenced).containsExactly(dead);
    assertThatThrownBy(deadProducer::commitTransaction).isInstanceOf(KafkaException.class);
    live.commitTransaction();
    own.commitTransaction();
    otherApplication.commitTransaction();
  }

  @Test
  void shouldMakeTheDeadTransactionsPartitionsReadableAtOnce() throws Exception {
    // given: the only open transaction on the target is a dead instance's, which wrote the
    // changelog of a task this instance owns
    Producer<byte[], byte[]> dead =
        openTransaction(applicationId + "-" + UUID.randomUUID() + "-0", changelog, 3);
    dead.send(new ProducerRecord<>(target, new byte[] {1}));
    dead.flush();
    assertThat(lastStableOffset(target, 0)).isZero();

    // when
    try (OrphanedTransactions orphans = orphans(Set.of(3))) {
      orphans.checkNow();
    }

    // then: its record and the abort marker are below the last stable offset, long before the
    // transaction's own timeout of a minute
    awaitLastStableOffset(target, 0, 2);
    awaitLastStableOffset(changelog, 3, 2);
    assertThatThrownBy(dead::commitTransaction).isInstanceOf(KafkaException.class);
  }

  @Test
  void shouldFenceNothingWhileItOwnsNoTask() throws Exception {
    // given
    Producer<byte[], byte[]> open =
        openTransaction(applicationId + "-" + UUID.randomUUID() + "-1", changelog, 1);

    // when
    Set<String> fenced;
    try (OrphanedTransactions orphans = orphans(Set.of())) {
      fenced = orphans.checkNow().fenced();
    }

    // then
    assertThat(fenced).isEmpty();
    open.commitTransaction();
    assertThat(lastStableOffset(changelog, 1)).isEqualTo(2);
  }

  private OrphanedTransactions orphans(Set<Integer> owned) {
    return new OrphanedTransactions(
        admin,
        applicationId,
        () -> owned,
        () -> Set.of(applicationId + "-" + self + "-1"),
        () -> false,
        TIMEOUT);
  }

  /** A producer in the middle of a transaction that wrote one record to the partition. */
  private Producer<byte[], byte[]> openTransaction(
      String transactionalId, String topic, int partition) {
    Producer<byte[], byte[]> producer =
        new KafkaProducer<>(
            Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId,
                ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 60_000),
            new ByteArraySerializer(),
            new ByteArraySerializer());
    clients.add(() -> producer.close(Duration.ofSeconds(5)));
    producer.initTransactions();
    producer.beginTransaction();
    producer.send(new ProducerRecord<>(topic, partition, null, new byte[] {1}));
    producer.flush();
    return producer;
  }

  private void awaitLastStableOffset(String topic, int partition, long expected) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (lastStableOffset(topic, partition) != expected) {
      assertThat(System.nanoTime() - deadline)
          .as("last stable offset reached %d in time", expected)
          .isNegative();
      Thread.sleep(50);
    }
  }

  /** What a read_committed reader may read up to on the partition. */
  private long lastStableOffset(String topic, int number) throws Exception {
    TopicPartition partition = new TopicPartition(topic, number);
    try (Consumer<byte[], byte[]> reader =
        new KafkaConsumer<>(
            Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrapServers,
                ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                "read_committed"),
            new ByteArrayDeserializer(),
            new ByteArrayDeserializer())) {
      return reader.endOffsets(List.of(partition)).get(partition);
    }
  }
}

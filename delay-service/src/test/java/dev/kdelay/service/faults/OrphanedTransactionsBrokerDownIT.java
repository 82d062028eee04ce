package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.service.failover.OrphanedTransactions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link OrphanedTransactions} while one broker of three has just died: the dead broker cannot list
 * the transactions it coordinates, and the others' answers must still be acted on. Found by the
 * cluster fault test, where every check failed with the admin client's {@code
 * IllegalArgumentException: Unexpected key set} (from live brokers too) until the controller
 * counted the dead broker out, and no check came after, so a dead instance's transaction held its
 * partitions until the coordinator's own timeout.
 */
@FaultSeed(20_261_128L)
@ExtendWith(FaultExtension.class)
class OrphanedTransactionsBrokerDownIT {

  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(5);

  @Test
  @Tag("integration")
  void shouldFenceADeadInstancesTransactionWhileAnotherBrokerIsDown(FaultRun run) throws Exception {
    // given: three brokers; a dead instance's transaction open on a changelog partition of a task
    // this instance owns
    BrokerCluster cluster =
        run.closeAfter(
            BrokerCluster.start(
                FaultScenario.freshDir("orphans.brokers"), 3, FaultScenario.childLogConfig()));
    String applicationId = "orphans-" + UUID.randomUUID().toString().substring(0, 8);
    String changelog = applicationId + "-schedules-changelog";
    cluster
        .admin()
        .createTopics(List.of(new NewTopic(changelog, 2, (short) 3)))
        .all()
        .get(30, TimeUnit.SECONDS);
    String dead = applicationId + "-" + UUID.randomUUID() + "-1";
    Producer<byte[], byte[]> deadProducer =
        run.closeAfter(
            new KafkaProducer<>(
                Map.of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                    cluster.bootstrapServers(),
                    ProducerConfig.TRANSACTIONAL_ID_CONFIG,
                    dead,
                    ProducerConfig.TRANSACTION_TIMEOUT_CONFIG,
                    60_000),
                new ByteArraySerializer(),
                new ByteArraySerializer()));
    deadProducer.initTransactions();
    deadProducer.beginTransaction();
    deadProducer.send(new ProducerRecord<>(changelog, 1, null, new byte[] {1})).get();

    // and: a broker that neither coordinates that transaction nor leads the partition is killed
    int coordinator =
        cluster
            .admin()
            .describeTransactions(List.of(dead))
            .description(dead)
            .get(30, TimeUnit.SECONDS)
            .coordinatorId();
    int leader = cluster.leaderOf(new TopicPartition(changelog, 1));
    int victim =
        cluster.nodes().stream()
            .mapToInt(BrokerProcess::nodeId)
            .filter(id -> id != coordinator && id != leader)
            .findFirst()
            .orElseThrow();
    cluster.kill(victim);
    String self = UUID.randomUUID().toString();

    // when: the check runs while the controller still counts the dead broker in, and goes on by
    // itself
    String first; // what the first check met: the brokers that did not answer, or its failure
    long killedAt = System.nanoTime();
    Duration firstCheck;
    Duration fencedAfter;
    try (OrphanedTransactions orphans =
        new OrphanedTransactions(
            cluster.admin(),
            applicationId,
            () -> Set.of(1),
            () -> Set.of(applicationId + "-" + self + "-1"),
            () -> false,
            CALL_TIMEOUT)) {
      try {
        first = "unanswered " + orphans.checkNow().unanswered().keySet();
      } catch (RuntimeException e) {
        first = "failed: " + e.getMessage();
      }
      firstCheck = Duration.ofNanos(System.nanoTime() - killedAt);
      orphans.checkSoon();
      Await.until(
          "the dead instance's transaction aborted",
          Duration.ofSeconds(45),
          () -> stateOf(cluster, dead) != TransactionState.ONGOING);
      fencedAfter = Duration.ofNanos(System.nanoTime() - killedAt);
    }
    System.out.println(
        "FAULTS orphans: broker "
            + victim
            + " killed (coordinator "
            + coordinator
            + ", leader "
            + leader
            + "); first check done "
            + firstCheck.toMillis()
            + " ms after the kill, it met "
            + first
            + "; transaction seen aborted "
            + fencedAfter.toMillis()
            + " ms after the kill (its own timeout: 60 s)");

    // then: the first check met the dead broker, and the dead instance's transaction was aborted
    // long before its timeout all the same
    assertThat(first).as("what the first check met").matches("failed: .*|.*\\b" + victim + "\\b.*");
    assertThatThrownBy(deadProducer::commitTransaction).isInstanceOf(KafkaException.class);
  }

  private static TransactionState stateOf(BrokerCluster cluster, String transactionalId) {
    try {
      return cluster
          .admin()
          .describeTransactions(List.of(transactionalId))
          .description(transactionalId)
          .get(10, TimeUnit.SECONDS)
          .state();
    } catch (Exception e) {
      return TransactionState.ONGOING; // the coordinator did not answer: ask again
    }
  }
}

package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.service.DelayService;
import dev.kdelay.service.KafkaClusterExtension;
import dev.kdelay.service.KafkaTestCluster;
import dev.kdelay.service.TargetTopicReader;
import dev.kdelay.service.TargetTopicReader.Received;
import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.service.move.DeploymentMove;
import dev.kdelay.service.topics.TopicsTestConfig;
import dev.kdelay.topology.DelayConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kdelay move} killed with SIGKILL in the middle: the ids its committed transactions moved
 * are in the new deployment and gone from the old, the rest are still in the old, none in both; the
 * next run moves the rest, and every task fires exactly once.
 */
@ExtendWith({KafkaClusterExtension.class, FaultExtension.class})
class MoveKillIT {

  private static final Duration TIMEOUT = Duration.ofMinutes(2);
  private static final String OLD = "kill-move-old";
  private static final String NEW = "kill-move-new";
  private static final String TARGET = "kill-move-target";
  private static final int TASKS = 3_000;

  @TempDir Path oldState;
  @TempDir Path newState;
  @TempDir Path logs;

  @Test
  @Tag("integration")
  void shouldMoveEveryScheduleOnceWhenAMoveIsKilledAndRunAgain(KafkaTestCluster kafka)
      throws Exception {
    try (Admin admin =
            Admin.create(
                Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()));
        KafkaProducer<String, String> producer =
            new KafkaProducer<>(
                Map.of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                    kafka.bootstrapServers(),
                    ProducerConfig.LINGER_MS_CONFIG,
                    5),
                new StringSerializer(),
                new StringSerializer())) {
      admin
          .createTopics(List.of(new NewTopic(TARGET, 2, (short) 1)))
          .all()
          .get(30, TimeUnit.SECONDS);
      // given: an old deployment on two partitions that stored 3,000 one-shots, stopped
      long dueAt = System.currentTimeMillis() + 45_000;
      try (DelayService old =
          new DelayService(
              TopicsTestConfig.named(
                  kafka, OLD, oldState, Map.of(ServiceConfig.TOPIC_PARTITIONS_CONFIG, 2)))) {
        old.start(Optional.of(TIMEOUT));
        for (int i = 0; i < TASKS; i++) {
          ProducerRecord<String, String> request =
              new ProducerRecord<>(OLD + "-requests", "task-" + i, "payload " + i);
          request.headers().add(DelayHeaders.TARGET_TOPIC, TARGET.getBytes(StandardCharsets.UTF_8));
          request
              .headers()
              .add(DelayHeaders.FIRE_AT, Long.toString(dueAt + i).getBytes(StandardCharsets.UTF_8));
          producer.send(request);
        }
        producer.flush();
        Await.until(
            "the old deployment applied every request", TIMEOUT, () -> applied(admin) >= TASKS);
      }

      // and: the new deployment on five partitions
      try (DelayService next =
              new DelayService(
                  TopicsTestConfig.named(
                      kafka,
                      NEW,
                      newState,
                      Map.of(
                          ServiceConfig.TOPIC_PARTITIONS_CONFIG,
                          5,
                          DelayConfig.IMPORT_FROM_CONFIG,
                          OLD)));
          TargetTopicReader fired = new TargetTopicReader(kafka.bootstrapServers(), TARGET)) {
        next.start(Optional.of(TIMEOUT));

        // when: the move runs in its own JVM, five ids a transaction, and is killed midway
        ChildJvm move =
            new ChildJvm(
                "move",
                logs.resolve("move.log"),
                List.of("-Xmx256m", "-XX:+UseSerialGC"),
                List.of(
                    "service",
                    "move",
                    "--bootstrap-servers",
                    kafka.bootstrapServers(),
                    "--application-id",
                    OLD,
                    "--requests-topic",
                    OLD + "-requests",
                    "--to",
                    NEW + "-requests",
                    "--batch",
                    "5"),
                Map.of());
        move.start();
        Await.until(
            "the move committed its first imports",
            TIMEOUT,
            () -> committedEnd(admin, NEW + "-requests", 5) >= 200);
        move.kill();
        Await.until("the move's process is gone", TIMEOUT, () -> !move.isAlive());
        Map<String, Long> importsBeforeKill = imports(kafka);
        long movedBeforeKill = importsBeforeKill.size();

        // then: it was killed midway, each id it moved moved once
        assertThat(movedBeforeKill).as("ids moved before the kill").isBetween(1L, TASKS - 1L);
        assertThat(importsBeforeKill).allSatisfy((id, n) -> assertThat(n).as(id).isOne());

        // when: the move runs again
        DeploymentMove.Report rest =
            new DeploymentMove(
                    Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()),
                    Map.of("bootstrap.servers", kafka.bootstrapServers()),
                    Map.of("bootstrap.servers", kafka.bootstrapServers()),
                    new DeploymentMove.Source(OLD, OLD + "-requests", OLD + "-requests-rerouted"),
                    NEW + "-requests",
                    100,
                    TIMEOUT,
                    System::currentTimeMillis)
                .run();

        // then: it moved exactly what the killed run had not committed, each id once
        assertThat(rest.moved()).isEqualTo(TASKS - movedBeforeKill);
        Map<String, Long> imports = imports(kafka);
        assertThat(imports).hasSize(TASKS).allSatisfy((id, n) -> assertThat(n).as(id).isOne());

        // and: every task fires exactly once
        List<Received> all =
            fired.pollUntil(
                received ->
                    received.stream().map(r -> r.record().key()).distinct().count() >= TASKS,
                Duration.ofMinutes(3));
        all = fired.drainCommitted(TIMEOUT);
        Map<String, Long> fires =
            all.stream()
                .collect(Collectors.groupingBy(r -> r.record().key(), Collectors.counting()));
        assertThat(fires.keySet())
            .containsExactlyInAnyOrderElementsOf(
                IntStream.range(0, TASKS).mapToObj(i -> "task-" + i).toList());
        assertThat(fires).allSatisfy((id, n) -> assertThat(n).as(id).isOne());
        System.out.printf(
            "FAULTS move killed: %d of %d ids moved before the SIGKILL, %d by the second run;"
                + " fired=%d lost=0 duplicated=0%n",
            movedBeforeKill, TASKS, rest.moved(), fires.size());
      }
    }
  }

  /** How many requests the old deployment applied: its group's committed offsets. */
  private static long applied(Admin admin) {
    try {
      return admin
          .listConsumerGroupOffsets(OLD)
          .partitionsToOffsetAndMetadata()
          .get(30, TimeUnit.SECONDS)
          .entrySet()
          .stream()
          .filter(e -> e.getKey().topic().equals(OLD + "-requests"))
          .mapToLong(e -> e.getValue().offset())
          .sum();
    } catch (Exception e) {
      return 0; // no offsets committed yet
    }
  }

  /** The imports committed to the new requests topic, counted by id. */
  private static Map<String, Long> imports(KafkaTestCluster kafka) {
    try (TargetTopicReader reader =
        new TargetTopicReader(kafka.bootstrapServers(), NEW + "-requests")) {
      return reader.drainCommitted(TIMEOUT).stream()
          .filter(r -> r.record().headers().lastHeader(DelayHeaders.IMPORT) != null)
          .collect(Collectors.groupingBy(r -> r.record().key(), Collectors.counting()));
    }
  }

  /** The sum of a topic's committed end offsets, transaction markers included. */
  private static long committedEnd(Admin admin, String topic, int partitions) {
    Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
    IntStream.range(0, partitions)
        .forEach(p -> latest.put(new TopicPartition(topic, p), OffsetSpec.latest()));
    try {
      return admin
          .listOffsets(latest, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
          .all()
          .get(30, TimeUnit.SECONDS)
          .values()
          .stream()
          .mapToLong(info -> info.offset())
          .sum();
    } catch (Exception e) {
      return 0; // not created yet
    }
  }
}

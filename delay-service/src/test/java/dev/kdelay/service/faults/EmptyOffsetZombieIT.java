package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.service.KafkaClusterExtension;
import dev.kdelay.service.KafkaTestCluster;
import dev.kdelay.service.faults.CommittedRecords.Received;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A zombie whose tasks consumed nothing since they were assigned, under exactly_once_v2: frozen
 * past its session timeout while tasks are about to come due, it is replaced by another instance
 * that fires them; woken up, it fires them too. Its commit has no input offset to send (Kafka
 * Streams' {@code StreamTask.committableOffsetsAndMetadata} lists only partitions the task consumed
 * from), {@code KafkaProducer.sendOffsetsToTransaction} does nothing for an empty map, so the
 * transaction carries no group generation for the broker to fence, and under exactly_once_v2 the
 * new owner's transactional id differs from the zombie's: nothing stopped the commit, and every
 * task fired twice. Now a task fires only once it has consumed a record of its own (its fence, see
 * {@code TaskFence}), so every commit that carries a fire carries offsets, and the zombie's is
 * fenced.
 *
 * <p>{@link ZombieFencingIT} freezes an instance under a steady load of requests, so its tasks
 * always have consumed offsets, and it is fenced. Here no request arrives after the zombie's last
 * start.
 */
@FaultSeed(20_240_424L)
@ExtendWith({KafkaClusterExtension.class, FaultExtension.class})
class EmptyOffsetZombieIT {

  private static final int TASKS = 300;
  private static final Duration OWNERS_TIMEOUT = Duration.ofSeconds(90);

  /** What a zombie's Kafka Streams logs once it learns it lost its partitions. */
  private static final Pattern LEARNED =
      Pattern.compile(
          "lost due to missed rebalance|TaskMigratedException|ProducerFencedException"
              + "|InvalidProducerEpochException|Detected that the thread is being fenced"
              + "|State transition from RUNNING to (PARTITIONS_REVOKED|PARTITIONS_ASSIGNED)");

  @Test
  @Tag("integration")
  void shouldFireEachTaskOnceWhenAZombieWhoseTasksConsumedNothingWakesUp(
      KafkaTestCluster kafka, FaultRun run) throws Exception {
    // given: instance a owns every partition and holds pending tasks it took in
    FaultScenario scenario = run.scenario("empty-offsets", kafka.bootstrapServers());
    Fleet fleet = scenario.fleet(0);
    ServiceInstance a = fleet.start("a").get(0);
    fleet.awaitOwners(List.of(a), OWNERS_TIMEOUT);
    CommittedRecords fired = scenario.startReading();
    long dueMs = System.currentTimeMillis() + Await.scaled(Duration.ofSeconds(30)).toMillis();
    List<String> keys = sendTasks(scenario, dueMs);
    awaitApplied(scenario);

    // and a restarts (SIGTERM), so that its tasks are new and will consume nothing: no request
    // arrives from here on
    Duration stopped = a.terminateAndAwaitExit(Duration.ofSeconds(60));
    a.start();
    a.awaitRunning(OWNERS_TIMEOUT);
    fleet.awaitOwners(List.of(a), OWNERS_TIMEOUT);
    long toDue = dueMs - System.currentTimeMillis();
    assertThat(toDue).as("ms left before the tasks come due, at the freeze").isGreaterThan(2_000);

    // when: a freezes past its session timeout, b takes every partition over and fires the tasks
    long frozenAt = System.currentTimeMillis();
    a.jvm().pause();
    ServiceInstance b = fleet.instance("b");
    b.start();
    b.awaitRunning(OWNERS_TIMEOUT);
    Map<String, Set<Integer>> owners = fleet.awaitOwners(List.of(b), OWNERS_TIMEOUT);
    Await.until("b to fire every task", Duration.ofSeconds(60), () -> fired.containsAll(keys));
    long firedByB = fired.snapshot().size();

    // and a wakes up with the same tasks due in its store
    long resumedAt = System.currentTimeMillis();
    long resumedAtLog = a.jvm().logOffset();
    a.jvm().resume();
    a.jvm().awaitLog(LEARNED, resumedAtLog, OWNERS_TIMEOUT);
    fleet.awaitOwners(List.of(a, b), OWNERS_TIMEOUT);

    // then: a read_committed reader sees each idempotency key once
    List<Received> committed = fired.finish(Duration.ofSeconds(60));
    Map<String, List<Received>> byKey =
        committed.stream()
            .collect(Collectors.groupingBy(r -> r.header(DelayHeaders.IDEMPOTENCY_KEY)));
    List<String> duplicated =
        byKey.entrySet().stream()
            .filter(e -> e.getValue().size() > 1)
            .map(Map.Entry::getKey)
            .sorted()
            .toList();
    long firedAfterWake =
        committed.stream().filter(r -> r.headerMs(DelayHeaders.FIRED_AT) >= resumedAt).count();
    long uncommitted = readUncommitted(scenario);
    scenario.report(
        String.format(
            "a stopped in %d ms and restarted; frozen %d ms before the tasks came due, for %d ms; owners"
                + " while frozen %s; b fired %d of %d; after SIGCONT read_committed sees %d"
                + " records (%d fired after the wake-up), %d idempotency keys more than once,"
                + " e.g. %s; read_uncommitted sees %d (fires in aborted transactions: %d); a logged:"
                + " %s",
            stopped.toMillis(),
            toDue,
            resumedAt - frozenAt,
            owners,
            firedByB,
            TASKS,
            committed.size(),
            firedAfterWake,
            duplicated.size(),
            duplicated.stream()
                .limit(3)
                .map(k -> k + " fired at " + firedAt(byKey.get(k)))
                .toList(),
            uncommitted,
            uncommitted - committed.size(),
            a.jvm().linesMatching(LEARNED, resumedAtLog).stream().limit(1).toList()));
    assertThat(byKey.keySet()).containsExactlyInAnyOrderElementsOf(keys);
    assertThat(duplicated).as("idempotency keys a read_committed reader saw twice").isEmpty();
    assertThat(fleet.threadFailures()).as("stream threads that died").isEmpty();
  }

  /** {@link #TASKS} one-shot tasks over every requests partition, due 2 ms apart from dueMs. */
  private static List<String> sendTasks(FaultScenario scenario, long dueMs) throws Exception {
    List<String> keys = new ArrayList<>();
    List<Future<RecordMetadata>> sent = new ArrayList<>();
    try (KafkaProducer<String, String> producer = TaskLoad.producer(scenario.bootstrapServers())) {
      for (int i = 0; i < TASKS; i++) {
        String id = "zombie-" + i;
        long due = dueMs + 2L * i;
        RecordHeaders headers = new RecordHeaders();
        headers.add(
            DelayHeaders.TARGET_TOPIC,
            scenario.targets().get(i % 2).getBytes(StandardCharsets.UTF_8));
        headers.add(DelayHeaders.FIRE_AT, Long.toString(due).getBytes(StandardCharsets.UTF_8));
        sent.add(
            producer.send(
                new ProducerRecord<>(
                    scenario.requestsTopic(), null, id, "payload of " + id, headers)));
        keys.add(DelayHeaders.idempotencyKey(id, due));
      }
    }
    for (Future<RecordMetadata> each : sent) {
      each.get(30, TimeUnit.SECONDS);
    }
    return keys;
  }

  /** Waits until the group has committed every request sent. */
  private static void awaitApplied(FaultScenario scenario) {
    Await.until(
        "the instance to apply every request",
        Duration.ofSeconds(60),
        () -> {
          try {
            Map<TopicPartition, OffsetAndMetadata> committed =
                scenario
                    .admin()
                    .listConsumerGroupOffsets(scenario.applicationId())
                    .partitionsToOffsetAndMetadata()
                    .get();
            Map<TopicPartition, OffsetSpec> latest =
                committed.keySet().stream()
                    .filter(tp -> tp.topic().equals(scenario.requestsTopic()))
                    .collect(Collectors.toMap(Function.identity(), tp -> OffsetSpec.latest()));
            return latest.size() == scenario.requestsPartitions()
                && scenario.admin().listOffsets(latest).all().get().entrySet().stream()
                    .allMatch(
                        end -> committed.get(end.getKey()).offset() >= end.getValue().offset());
          } catch (Exception e) {
            return false;
          }
        });
  }

  /** How many fired records a reader that ignores transactions sees, aborted ones included. */
  private static long readUncommitted(FaultScenario scenario) throws InterruptedException {
    try (CommittedRecords all =
        new CommittedRecords(
            scenario.bootstrapServers(),
            scenario.targets(),
            DelayHeaders.IDEMPOTENCY_KEY,
            "read_uncommitted")) {
      return all.finish(Duration.ofSeconds(60)).size();
    }
  }

  private static List<Long> firedAt(List<Received> copies) {
    return copies.stream().map(r -> r.headerMs(DelayHeaders.FIRED_AT)).toList();
  }
}

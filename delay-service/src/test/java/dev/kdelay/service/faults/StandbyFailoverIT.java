package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.service.KafkaClusterExtension;
import dev.kdelay.service.KafkaTestCluster;
import dev.kdelay.service.broker.BrokerProfile;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Failover time after kill -9, without and with a warm standby: from the kill to the first fire by
 * the new owner of a task due right after it, and the worst lateness of the tasks due in that gap.
 * The stores hold a ballast of tasks due in an hour, so that taking a partition over without a
 * standby means restoring a real changelog.
 *
 * <p>The figures are printed, not asserted: they depend on the machine. What is asserted is the
 * usual: nothing lost, nothing doubled, nothing early.
 */
@FaultSeed(20_240_406L)
@ExtendWith({KafkaClusterExtension.class, FaultExtension.class})
class StandbyFailoverIT {

  private static final Duration OWNERS_TIMEOUT = Duration.ofSeconds(120);

  /** What a survivor logs when it removes the killed instance from the group. */
  private static final Pattern EVICTED = Pattern.compile("event=peer-evicted peer=\\S+");

  private static final Pattern RESTORED =
      Pattern.compile(
          "Finished restoring changelog (\\S+) to store \\S+ with a total number of (\\d+) records");

  /**
   * The README's profile for failover within 5 s; needs a broker that accepts a 3 s session
   * (group.min.session.timeout.ms), as the tuned broker profile does.
   */
  private static final Map<String, String> FAST_FAILOVER =
      Map.of(
          "DELAY_KAFKA_SESSION_TIMEOUT_MS", "3000",
          "DELAY_KAFKA_HEARTBEAT_INTERVAL_MS", "1000",
          "DELAY_KAFKA_TRANSACTION_TIMEOUT_MS", "3000");

  @Test
  @Tag("integration")
  void shouldTakeOverAKilledInstancesTasksWithAndWithoutAStandby(
      KafkaTestCluster kafka, FaultRun run) throws Exception {
    TaskLoad.Plan plan =
        new TaskLoad.Plan(run.seed(), 1_000, Duration.ofSeconds(10), seconds(1), seconds(3), 0);
    String without = failover(run, kafka, "failover-standby0", 0, plan, 5_000, List.of("a", "b"));
    String with = failover(run, kafka, "failover-standby1", 1, plan, 5_000, List.of("a", "b"));
    // A stock broker refuses a 3 s session (group.min.session.timeout.ms is 6 s by default)
    String fast =
        BrokerProfile.forTests() == BrokerProfile.TUNED
            ? failover(
                run,
                kafka,
                "failover-standby1-fast",
                1,
                plan,
                5_000,
                List.of("a", "b"),
                FAST_FAILOVER)
            : "not run: a stock broker refuses a 3 s session; -Dkdelay.broker.profile=tuned runs it";
    System.out.println("FAULTS failover, no standby: " + without);
    System.out.println("FAULTS failover, 1 standby:  " + with);
    System.out.println("FAULTS failover, 1 standby, 3 s session: " + fast);
  }

  @Test
  @Tag("fault-long")
  void shouldTakeOverAKilledInstancesLargeStoreWithAndWithoutAStandby(
      KafkaTestCluster kafka, FaultRun run) throws Exception {
    TaskLoad.Plan plan =
        new TaskLoad.Plan(run.seed(), 4_000, Duration.ofSeconds(30), seconds(1), seconds(3), 0);
    List<String> names = List.of("a", "b", "c");
    String without = failover(run, kafka, "failover-long-standby0", 0, plan, 150_000, names);
    String with = failover(run, kafka, "failover-long-standby1", 1, plan, 150_000, names);
    System.out.println("FAULTS failover, no standby: " + without);
    System.out.println("FAULTS failover, 1 standby:  " + with);
  }

  private String failover(
      FaultRun run,
      KafkaTestCluster kafka,
      String name,
      int standbys,
      TaskLoad.Plan plan,
      int ballast,
      List<String> names)
      throws Exception {
    return failover(run, kafka, name, standbys, plan, ballast, names, Map.of());
  }

  private String failover(
      FaultRun run,
      KafkaTestCluster kafka,
      String name,
      int standbys,
      TaskLoad.Plan plan,
      int ballast,
      List<String> names,
      Map<String, String> environment)
      throws Exception {
    // given: a fleet whose stores hold the ballast; closed before the next scenario starts, so
    // that its instances do not compete with the next one's for the CPU
    try (FaultScenario scenario = run.scenario(name, kafka.bootstrapServers())) {
      return failover(scenario, standbys, plan, ballast, names, environment);
    }
  }

  private String failover(
      FaultScenario scenario,
      int standbys,
      TaskLoad.Plan plan,
      int ballast,
      List<String> names,
      Map<String, String> environment)
      throws Exception {
    Fleet fleet = scenario.fleet(standbys, environment);
    List<ServiceInstance> live = new ArrayList<>(fleet.start(names.toArray(String[]::new)));
    fleet.awaitOwners(live, OWNERS_TIMEOUT);
    sendBallast(scenario, ballast);
    awaitIntakeCaughtUp(scenario);
    TaskLoad load = scenario.startLoad(plan);

    // when: the instance with the most partitions is killed while it fires
    load.awaitSent(0.5, Duration.ofMinutes(2));
    Map<String, Set<Integer>> owners = fleet.awaitOwners(live, OWNERS_TIMEOUT);
    ServiceInstance victim =
        live.stream()
            .max((x, y) -> owners.get(x.name()).size() - owners.get(y.name()).size())
            .orElseThrow();
    Set<Integer> partitions = owners.get(victim.name());
    scenario.awaitFiring(partitions);
    List<Long> logOffsets = live.stream().map(i -> i.jvm().logOffset()).toList();
    long killedAt = System.currentTimeMillis();
    victim.jvm().kill();
    victim.jvm().awaitExit(Duration.ofSeconds(30));
    Failover failover = new Failover(partitions, killedAt, System.currentTimeMillis());
    scenario.awaitTakeover(failover);

    // then
    Verdict verdict = scenario.verify(Duration.ofMinutes(3));
    List<CommittedRecords.Received> fired = scenario.finished();
    long restored = 0;
    List<String> evictions = new ArrayList<>();
    for (int i = 0; i < live.size(); i++) {
      if (live.get(i) != victim) {
        restored += restoredRecords(live.get(i), logOffsets.get(i));
        evictions.addAll(live.get(i).jvm().linesMatching(EVICTED, logOffsets.get(i)));
      }
    }
    String figures =
        String.format(
            "standbys=%d ballast=%d: kill -9 of %s; evicted from the group by a peer: %s; %s; %d"
                + " changelog records restored by the new owner; %s",
            standbys,
            ballast,
            victim,
            evictions.isEmpty() ? "no" : "yes",
            failover.describe(scenario.ledger(), fired),
            restored,
            verdict.summary());
    scenario.report(figures);
    scenario.report(scenario.abortedFires(fired));
    assertThat(verdict.clean()).as(verdict.report()).isTrue();
    assertThat(fleet.threadFailures()).as("stream threads that died").isEmpty();
    // The survivors found the killed instance's endpoint refusing and evicted it, rather than
    // waiting out its session.
    assertThat(evictions).as("survivors' peer-evicted log lines").isNotEmpty();
    return figures;
  }

  private static long restoredRecords(ServiceInstance instance, long fromOffset) {
    long total = 0;
    for (String line : instance.jvm().linesMatching(RESTORED, fromOffset)) {
      Matcher matcher = RESTORED.matcher(line);
      if (matcher.find()) {
        total += Long.parseLong(matcher.group(2));
      }
    }
    return total;
  }

  /** Tasks due in an hour: they never fire in the test, they only make the stores big. */
  private static void sendBallast(FaultScenario scenario, int count) {
    long due = System.currentTimeMillis() + Duration.ofHours(1).toMillis();
    try (KafkaProducer<String, String> producer = TaskLoad.producer(scenario.bootstrapServers())) {
      for (int i = 0; i < count; i++) {
        RecordHeaders headers = new RecordHeaders();
        headers.add(DelayHeaders.TARGET_TOPIC, bytes(scenario.targets().get(0)));
        headers.add(DelayHeaders.FIRE_AT, bytes(Long.toString(due + i)));
        producer.send(
            new ProducerRecord<>(
                scenario.requestsTopic(), null, "ballast-" + i, "ballast " + i, headers));
      }
    }
  }

  /** Waits until the group has committed every request sent so far. */
  private static void awaitIntakeCaughtUp(FaultScenario scenario) {
    Await.until(
        "kdelay to apply the ballast",
        Duration.ofMinutes(3),
        () -> {
          try {
            Map<TopicPartition, OffsetSpec> latest = new java.util.HashMap<>();
            for (int p = 0; p < scenario.requestsPartitions(); p++) {
              latest.put(new TopicPartition(scenario.requestsTopic(), p), OffsetSpec.latest());
            }
            var ends = scenario.admin().listOffsets(latest).all().get(10, TimeUnit.SECONDS);
            Map<TopicPartition, OffsetAndMetadata> committed =
                scenario
                    .admin()
                    .listConsumerGroupOffsets(scenario.applicationId())
                    .partitionsToOffsetAndMetadata()
                    .get(10, TimeUnit.SECONDS);
            return ends.entrySet().stream()
                .allMatch(
                    end -> {
                      OffsetAndMetadata offset = committed.get(end.getKey());
                      return end.getValue().offset() == 0
                          || (offset != null && offset.offset() >= end.getValue().offset());
                    });
          } catch (Exception e) {
            return false;
          }
        });
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static Duration seconds(long seconds) {
    return Duration.ofSeconds(seconds);
  }
}

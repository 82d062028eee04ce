package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.service.KafkaClusterExtension;
import dev.kdelay.service.KafkaTestCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * An instance frozen with SIGSTOP past its session timeout while it fires: the group gives its
 * partitions to the others, who fire its pending tasks. Then SIGCONT: the zombie still believes it
 * owns them and has tasks due in its store, but it is fenced (its transaction was aborted, its
 * generation is stale) and nothing fires twice. It then rejoins as a healthy member.
 */
@FaultSeed(20_240_405L)
@ExtendWith({KafkaClusterExtension.class, FaultExtension.class})
class ZombieFencingIT {

  private static final Duration OWNERS_TIMEOUT = Duration.ofSeconds(120);

  /**
   * Why a zombie's stream thread may die on waking: frozen inside a commit, it finds its
   * transaction aborted by the broker's timeout, and Kafka Streams takes that (EndTxn answering
   * INVALID_TXN_STATE, or its producer fenced) as fatal to the thread, which kdelay replaces.
   */
  private static final Pattern FENCED_COMMIT =
      Pattern.compile(
          "Caused by: org\\.apache\\.kafka\\.common\\.errors\\."
              + "(InvalidTxnStateException|ProducerFencedException|InvalidProducerEpochException)");

  /**
   * What a fenced Kafka Streams instance logs on its way back into the group. A thread that woke
   * inside its commit may die of the aborted transaction (InvalidTxnStateException) and be replaced
   * without logging any of the others.
   */
  private static final Pattern FENCED =
      Pattern.compile(
          "Detected that the thread is being fenced|TaskMigratedException|ProducerFencedException"
              + "|InvalidProducerEpochException|InvalidTxnStateException"
              + "|lost due to missed rebalance");

  @Test
  @Tag("integration")
  void shouldFenceAnInstanceResumedAfterItsSessionExpiredAndFireNothingTwice(
      KafkaTestCluster kafka, FaultRun run) throws Exception {
    freeze(
        run,
        kafka,
        "zombie",
        new TaskLoad.Plan(run.seed(), 3_000, Duration.ofSeconds(15), seconds(2), seconds(6), 0.1),
        List.of("a", "b"),
        1);
  }

  @Test
  @Tag("fault-long")
  void shouldFenceEveryZombieWhenInstancesFreezeOneAfterAnother(
      KafkaTestCluster kafka, FaultRun run) throws Exception {
    freeze(
        run,
        kafka,
        "zombie-long",
        new TaskLoad.Plan(run.seed(), 20_000, Duration.ofSeconds(90), seconds(2), seconds(8), 0.1),
        List.of("a", "b", "c"),
        3);
  }

  private void freeze(
      FaultRun run,
      KafkaTestCluster kafka,
      String name,
      TaskLoad.Plan plan,
      List<String> names,
      int rounds)
      throws Exception {
    // given
    FaultScenario scenario = run.scenario(name, kafka.bootstrapServers());
    Fleet fleet = scenario.fleet(0);
    List<ServiceInstance> all = fleet.start(names.toArray(String[]::new));
    fleet.awaitOwners(all, OWNERS_TIMEOUT);
    TaskLoad load = scenario.startLoad(plan);
    List<Failover> freezes = new ArrayList<>();
    List<String> evidence = new ArrayList<>();
    List<String> fencedThreads = new ArrayList<>();

    for (int round = 0; round < rounds; round++) {
      // when: an instance that is firing freezes past its session timeout
      load.awaitSent(0.25 + 0.5 * round / rounds, Duration.ofMinutes(3));
      Map<String, Set<Integer>> owners = fleet.awaitOwners(all, OWNERS_TIMEOUT);
      ServiceInstance zombie = all.get(round % all.size());
      Set<Integer> partitions = owners.get(zombie.name());
      scenario.awaitFiring(partitions);
      long frozenAt = System.currentTimeMillis();
      zombie.jvm().pause();
      Failover failover = new Failover(partitions, frozenAt, frozenAt);
      List<ServiceInstance> others = all.stream().filter(i -> i != zombie).toList();
      scenario.report(zombie + " frozen; owners now " + fleet.awaitOwners(others, OWNERS_TIMEOUT));
      scenario.awaitTakeover(failover);
      freezes.add(failover);

      // and wakes up, still holding tasks it believes are its own
      long resumedAt = zombie.jvm().logOffset();
      zombie.jvm().resume();
      zombie.jvm().awaitLog(FENCED, resumedAt, OWNERS_TIMEOUT);
      fleet.awaitOwners(all, OWNERS_TIMEOUT);
      zombie.jvm().linesMatching(FENCED, resumedAt).stream()
          .limit(3)
          .forEach(line -> evidence.add(zombie + ": " + line));
      // A thread the zombie lost to its own fencing, after it woke, and replaced: it is back in
      // the group above. Any other thread failure, on any instance, fails the test.
      if (!zombie.jvm().linesMatching(FENCED_COMMIT, resumedAt).isEmpty()) {
        zombie.jvm().linesMatching(ServiceInstance.THREAD_REPLACED, resumedAt).stream()
            .map(line -> zombie + ": " + line)
            .forEach(fencedThreads::add);
      }
    }

    // then
    Verdict verdict = scenario.verify(Duration.ofMinutes(3));
    List<CommittedRecords.Received> fired = scenario.finished();
    freezes.forEach(
        failover -> scenario.report("SIGSTOP: " + failover.describe(scenario.ledger(), fired)));
    evidence.forEach(line -> scenario.report("zombie after SIGCONT: " + line));
    fencedThreads.forEach(
        line -> scenario.report("zombie thread replaced after its fenced commit: " + line));
    scenario.report(scenario.abortedFires(scenario.finished()));
    scenario.report("seed " + plan.seed() + ": " + verdict.summary());
    assertThat(verdict.clean()).as(verdict.report()).isTrue();
    assertThat(fleet.threadFailures())
        .as("stream threads that died, but for a zombie's fenced commit")
        .isSubsetOf(fencedThreads);
  }

  private static Duration seconds(long seconds) {
    return Duration.ofSeconds(seconds);
  }
}

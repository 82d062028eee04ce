package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.service.KafkaClusterExtension;
import dev.kdelay.service.KafkaTestCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * kill -9 of the instance that holds the standby replicas of the other's partitions, its restart on
 * its own state directory, then kill -9 of the other: the restarted instance now owns everything
 * with the state it rebuilt after its crash, and nothing is lost or doubled.
 *
 * <p>It guards the task store's choice to skip memtable flushes under exactly-once ({@code
 * TimeBucketedBytesStore#commit}): the write-ahead log is off, so that choice is safe only while
 * Kafka Streams never trusts a store's local files after an unclean stop under exactly-once. The
 * test asserts that precondition from the restarted instance's log (no store initialized from a
 * checkpoint; its state restored from the changelog) and the outcome from the checker.
 */
@FaultSeed(20_240_409L)
@ExtendWith({KafkaClusterExtension.class, FaultExtension.class})
class StandbyRestartIT {

  private static final Duration OWNERS_TIMEOUT = Duration.ofSeconds(120);

  /** What Kafka Streams logs when a store has been brought up to date from its changelog. */
  /** The longest the load may last: the scenario stops it once both kills are over. */
  private static final int LOAD_LIMIT_SECONDS = 600;

  private static final Pattern RESTORED =
      Pattern.compile(
          "Finished restoring changelog (\\S+) to store \\S+ with a total number of (\\d+) records");

  /**
   * Local files found without a checkpoint: under exactly-once Kafka Streams takes the task for
   * corrupted, wipes its stores and rebuilds them.
   */
  private static final Pattern WIPED =
      Pattern.compile("Detected the states of tasks \\[([^]]*)\\] are corrupted");

  /** A store rebuilt from the start of its changelog. */
  private static final Pattern FROM_START =
      Pattern.compile("did not find checkpoint offset, hence would default to the starting offset");

  /** A store that trusts its local files up to a checkpointed offset. */
  private static final Pattern FROM_CHECKPOINT =
      Pattern.compile("initialized from checkpoint with offset");

  @Test
  @Tag("integration")
  void shouldLoseAndDoubleNothingWhenTheStandbyHolderCrashesRestartsAndTheOtherCrashes(
      KafkaTestCluster kafka, FaultRun run) throws Exception {
    crashRestartCrash(run, kafka, "standby-restart", 150);
  }

  @Test
  @Tag("fault-long")
  void shouldLoseAndDoubleNothingWhenTheStandbyHolderCrashesRestartsAndTheOtherCrashesUnderLoad(
      KafkaTestCluster kafka, FaultRun run) throws Exception {
    crashRestartCrash(run, kafka, "standby-restart-long", 250);
  }

  /**
   * The scenario, under a load of {@code perSecond} tasks a second that lasts as long as the faults
   * take: a fixed one ended before the second kill on a slow machine (an instance's restart with
   * its warm-up took 35 s in one CI run), leaving nothing due for the killed instance to fire.
   */
  private void crashRestartCrash(FaultRun run, KafkaTestCluster kafka, String name, int perSecond)
      throws Exception {
    TaskLoad.Plan plan =
        new TaskLoad.Plan(
            run.seed(),
            perSecond * LOAD_LIMIT_SECONDS,
            Duration.ofSeconds(LOAD_LIMIT_SECONDS),
            seconds(2),
            seconds(8),
            0.1);
    // given: two instances, each holding the standby replicas of the other's partitions
    FaultScenario scenario = run.scenario(name, kafka.bootstrapServers());
    Fleet fleet = scenario.fleet(1);
    List<ServiceInstance> both = fleet.start("a", "b");
    ServiceInstance a = both.get(0);
    ServiceInstance b = both.get(1);
    fleet.awaitOwners(both, OWNERS_TIMEOUT);
    TaskLoad load = scenario.startLoad(plan);
    List<String> figures = new ArrayList<>();

    // when: b, the standby holder of a's partitions, is killed while it fires, 5 s into the load
    load.awaitSentCount(perSecond * 5, Duration.ofMinutes(2));
    Failover first = kill(scenario, fleet, b, a);
    long storeFiles = filesIn(b.stateDir());
    assertThat(storeFiles).as("files b left in its state directory " + b.stateDir()).isPositive();

    // and restarts on its own state directory
    b.start();
    b.awaitRunning(OWNERS_TIMEOUT);
    long restartedAt = b.jvm().startedAtLogOffset();
    fleet.awaitOwners(both, OWNERS_TIMEOUT);
    Await.until(
        "b to rebuild its stores after the restart (see " + b.jvm().log() + ")",
        OWNERS_TIMEOUT,
        () -> !b.jvm().linesMatching(FROM_START, restartedAt).isEmpty());
    Restore restart = Restore.of(b, restartedAt);
    figures.add(
        "b restarted on its state directory ("
            + storeFiles
            + " files left by the crash): "
            + restart);

    // and a, the other, is killed while it fires, once 3 s more of the load were sent
    load.awaitSentCount(load.sentCount() + perSecond * 3, Duration.ofMinutes(2));
    long takeoverFrom = b.jvm().logOffset();
    Failover second = kill(scenario, fleet, a, b);
    figures.add("b from the kill of a on: " + Restore.of(b, takeoverFrom));
    load.stopSending();

    // then
    Verdict verdict = scenario.verify(Duration.ofMinutes(3));
    List<CommittedRecords.Received> fired = scenario.finished();
    scenario.report("kill -9 of b (standby holder): " + first.describe(scenario.ledger(), fired));
    figures.forEach(scenario::report);
    scenario.report("kill -9 of a: " + second.describe(scenario.ledger(), fired));
    scenario.report(scenario.abortedFires(fired));
    scenario.report("seed " + plan.seed() + ": " + verdict.summary());
    assertThat(restart.fromCheckpoint())
        .as("stores of b that trusted local files after its kill -9 under exactly-once")
        .isZero();
    assertThat(restart.wipedTasks())
        .as("tasks whose local files b discarded after its kill -9 under exactly-once")
        .isPositive();
    assertThat(restart.fromStart())
        .as("stores b rebuilt from the start of their changelog after its restart")
        .isPositive();
    assertThat(verdict.clean()).as(verdict.report()).isTrue();
    assertThat(fleet.threadFailures()).as("stream threads that died").isEmpty();
  }

  /**
   * Kills the victim once it is seen firing, proves it is gone, and waits until the survivor owns
   * every partition and fires for the victim's.
   */
  private static Failover kill(
      FaultScenario scenario, Fleet fleet, ServiceInstance victim, ServiceInstance survivor) {
    Map<String, Set<Integer>> owners = fleet.awaitOwners(List.of(victim, survivor), OWNERS_TIMEOUT);
    Set<Integer> partitions = owners.get(victim.name());
    assertThat(partitions).as(victim + "'s partitions before its kill, of " + owners).isNotEmpty();
    scenario.awaitFiring(partitions);
    long pid = victim.jvm().pid();
    long killedAt = System.currentTimeMillis();
    victim.jvm().kill();
    victim.jvm().awaitExit(Duration.ofSeconds(30));
    Failover failover = new Failover(partitions, killedAt, System.currentTimeMillis());
    assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
        .as("process " + pid + " of " + victim + " alive after kill -9")
        .isFalse();
    scenario.report(
        "killed "
            + victim
            + " (pid "
            + pid
            + ", gone) owning "
            + partitions
            + "; now "
            + fleet.awaitOwners(List.of(survivor), OWNERS_TIMEOUT));
    scenario.awaitTakeover(failover);
    return failover;
  }

  /** Where an instance's stores came from after a point in its log. */
  private record Restore(
      long records, int changelogs, int wipedTasks, int fromStart, int fromCheckpoint) {

    static Restore of(ServiceInstance instance, long fromOffset) {
      long records = 0;
      List<String> restored = instance.jvm().linesMatching(RESTORED, fromOffset);
      for (String line : restored) {
        Matcher matcher = RESTORED.matcher(line);
        if (matcher.find()) {
          records += Long.parseLong(matcher.group(2));
        }
      }
      Set<String> wiped = new java.util.TreeSet<>();
      for (String line : instance.jvm().linesMatching(WIPED, fromOffset)) {
        Matcher matcher = WIPED.matcher(line);
        if (matcher.find()) {
          wiped.addAll(List.of(matcher.group(1).split(",\\s*")));
        }
      }
      return new Restore(
          records,
          restored.size(),
          wiped.size(),
          instance.jvm().linesMatching(FROM_START, fromOffset).size(),
          instance.jvm().linesMatching(FROM_CHECKPOINT, fromOffset).size());
    }

    @Override
    public String toString() {
      return String.format(
          "%d tasks' local files discarded as corrupted (exactly-once, no checkpoint after an"
              + " unclean stop), %d stores rebuilt from the start of their changelog, %d started"
              + " from a checkpoint; %d changelog records restored into %d active stores",
          wipedTasks, fromStart, fromCheckpoint, records, changelogs);
    }
  }

  private static long filesIn(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return 0;
    }
    try (Stream<Path> files = Files.walk(dir)) {
      return files.filter(Files::isRegularFile).count();
    }
  }

  private static Duration seconds(long seconds) {
    return Duration.ofSeconds(seconds);
  }
}

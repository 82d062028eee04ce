package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.service.KafkaClusterExtension;
import dev.kdelay.service.KafkaTestCluster;
import dev.kdelay.service.faults.CommittedRecords.Received;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * SIGTERM of the only instance: it exits within a bound, having logged its orderly stop; tasks that
 * come due while nothing runs fire after the restart, late but once, none lost. The long version
 * restarts on an empty state directory, so that everything comes back from the changelog.
 */
@FaultSeed(20_240_407L)
@ExtendWith({KafkaClusterExtension.class, FaultExtension.class})
class ShutdownIT {

  private static final Duration EXIT_BOUND = Duration.ofSeconds(40);
  private static final Duration START_TIMEOUT = Duration.ofSeconds(120);

  @Test
  @Tag("integration")
  void shouldStopWithinABoundAndFireTasksDueDuringTheDowntimeAfterARestart(
      KafkaTestCluster kafka, FaultRun run) throws Exception {
    stopAndRestart(
        run,
        kafka,
        "shutdown",
        new TaskLoad.Plan(run.seed(), 1_000, Duration.ofSeconds(2), seconds(4), seconds(16), 0.2),
        false);
  }

  @Test
  @Tag("fault-long")
  void shouldFireTasksDueDuringTheDowntimeWhenRestartedOnAnEmptyStateDirectory(
      KafkaTestCluster kafka, FaultRun run) throws Exception {
    stopAndRestart(
        run,
        kafka,
        "shutdown-long",
        new TaskLoad.Plan(run.seed(), 20_000, Duration.ofSeconds(10), seconds(8), seconds(40), 0.2),
        true);
  }

  private void stopAndRestart(
      FaultRun run, KafkaTestCluster kafka, String name, TaskLoad.Plan plan, boolean wipeState)
      throws Exception {
    // given: tasks due from a few seconds on, some of them fired
    FaultScenario scenario = run.scenario(name, kafka.bootstrapServers());
    Fleet fleet = scenario.fleet(0);
    ServiceInstance only = fleet.start("a").get(0);
    fleet.awaitOwners(List.of(only), START_TIMEOUT);
    TaskLoad load = scenario.startLoad(plan);
    load.awaitFinished(Duration.ofMinutes(2));
    Await.until("a first task to fire", Duration.ofMinutes(2), () -> scenario.fired().size() > 0);

    // when: SIGTERM, and nothing runs while a fifth of the tasks comes due
    long stopLogOffset = only.jvm().logOffset();
    Duration exit = only.terminateAndAwaitExit(EXIT_BOUND);
    long stoppedAt = System.currentTimeMillis();
    List<Long> dues =
        scenario.ledger().expected().values().stream().map(Ledger.Task::dueMs).sorted().toList();
    long downUntil = Math.max(stoppedAt + 3_000, dues.get(dues.size() * 2 / 5));
    Await.until(
        "tasks to come due while stopped",
        Duration.ofMinutes(2),
        () -> System.currentTimeMillis() >= downUntil);
    if (wipeState) {
      deleteRecursively(only.stateDir());
    }
    long restartedAt = System.currentTimeMillis();
    only.start();
    only.awaitRunning(START_TIMEOUT);

    // then
    Verdict verdict = scenario.verify(Duration.ofMinutes(4));
    List<Received> fired = scenario.finished();
    long dueWhileDown =
        scenario.ledger().expected().values().stream()
            .filter(task -> task.dueMs() > stoppedAt && task.dueMs() < restartedAt)
            .count();
    List<Received> firedDueWhileDown =
        fired.stream()
            .filter(
                received -> {
                  Ledger.Task task =
                      scenario.ledger().task(received.header(DelayHeaders.IDEMPOTENCY_KEY));
                  return task != null && task.dueMs() > stoppedAt && task.dueMs() < restartedAt;
                })
            .toList();
    List<Long> downtimeLateness =
        firedDueWhileDown.stream()
            .map(received -> received.receivedAtMs() - received.headerMs(DelayHeaders.DUE_AT))
            .toList();
    Verdict.Lateness late = Verdict.Lateness.of(downtimeLateness);
    scenario.report(
        String.format(
            "seed %d: SIGTERM exit in %d ms (%s); down %d ms; %d tasks came due while down, all"
                + " fired after the restart, lateness %s; %s",
            plan.seed(),
            exit.toMillis(),
            only.jvm().linesMatching(ServiceInstance.STOPPED, stopLogOffset),
            restartedAt - stoppedAt,
            dueWhileDown,
            late,
            verdict.summary()));
    assertThat(verdict.clean()).as(verdict.report()).isTrue();
    assertThat(exit).isLessThan(EXIT_BOUND);
    assertThat(only.jvm().linesMatching(ServiceInstance.STOPPED, stopLogOffset))
        .as("the orderly stop logged before exiting")
        .hasSize(1);
    assertThat(dueWhileDown).isPositive();
    assertThat(firedDueWhileDown)
        .as("tasks due while down, fired after the restart")
        .hasSize((int) dueWhileDown)
        .allSatisfy(
            received -> assertThat(received.receivedAtMs()).isGreaterThanOrEqualTo(restartedAt));
  }

  private static void deleteRecursively(Path dir) throws java.io.IOException {
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(file);
      }
    }
  }

  private static Duration seconds(long seconds) {
    return Duration.ofSeconds(seconds);
  }
}

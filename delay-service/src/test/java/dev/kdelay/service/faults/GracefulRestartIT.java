package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.service.KafkaClusterExtension;
import dev.kdelay.service.KafkaTestCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * SIGTERM of instances under load, as a rolling restart does it: each one commits, leaves the group
 * and exits within a bound; its partitions move to the others at once; it comes back and gets
 * partitions again; nothing is lost, doubled or fired early. The long version also keeps one
 * instance down for a while before rolling three instances three times.
 */
@FaultSeed(20_240_402L)
@ExtendWith({KafkaClusterExtension.class, FaultExtension.class})
class GracefulRestartIT {

  private static final Duration EXIT_BOUND = Duration.ofSeconds(40);
  private static final Duration OWNERS_TIMEOUT = Duration.ofSeconds(90);

  @Test
  @Tag("integration")
  void shouldFireEveryTaskOnceWhenAnInstanceStopsAndAllRestartInTurn(
      KafkaTestCluster kafka, FaultRun run) throws Exception {
    stopThenRoll(
        run,
        kafka,
        "rolling",
        new TaskLoad.Plan(run.seed(), 2_400, Duration.ofSeconds(12), seconds(2), seconds(6), 0.1),
        List.of("a", "b"),
        false,
        1);
  }

  @Test
  @Tag("fault-long")
  void shouldFireEveryTaskOnceThroughRepeatedRollingRestartsOfThreeInstances(
      KafkaTestCluster kafka, FaultRun run) throws Exception {
    stopThenRoll(
        run,
        kafka,
        "rolling-long",
        new TaskLoad.Plan(run.seed(), 24_000, Duration.ofSeconds(100), seconds(2), seconds(8), 0.1),
        List.of("a", "b", "c"),
        true,
        3);
  }

  /**
   * Optionally stops one instance for a while first; then restarts every instance in turn, each
   * SIGTERM followed by its partitions moving to the others before it starts again.
   */
  private void stopThenRoll(
      FaultRun run,
      KafkaTestCluster kafka,
      String name,
      TaskLoad.Plan plan,
      List<String> names,
      boolean stayDown,
      int rolls)
      throws Exception {
    // given
    FaultScenario scenario = run.scenario(name, kafka.bootstrapServers());
    Fleet fleet = scenario.fleet(0);
    List<ServiceInstance> all = fleet.start(names.toArray(String[]::new));
    fleet.awaitOwners(all, OWNERS_TIMEOUT);
    TaskLoad load = scenario.startLoad(plan);
    List<Duration> exits = new ArrayList<>();

    // when: one instance stops while the load goes on, then comes back
    if (stayDown) {
      load.awaitSent(0.2, Duration.ofMinutes(2));
      ServiceInstance stopped = all.get(all.size() - 1);
      exits.add(stopped.terminateAndAwaitExit(EXIT_BOUND));
      fleet.awaitOwners(others(all, stopped), OWNERS_TIMEOUT);
      load.awaitSent(0.35, Duration.ofMinutes(2));
      stopped.start();
      stopped.awaitRunning(OWNERS_TIMEOUT);
      fleet.awaitOwners(all, OWNERS_TIMEOUT);
    }

    // and every instance restarts in turn, as a deployment does
    for (int roll = 0; roll < rolls; roll++) {
      load.awaitSent(0.4 + 0.5 * roll / rolls, Duration.ofMinutes(3));
      for (ServiceInstance instance : all) {
        exits.add(instance.terminateAndAwaitExit(EXIT_BOUND));
        fleet.awaitOwners(others(all, instance), OWNERS_TIMEOUT);
        instance.start();
        instance.awaitRunning(OWNERS_TIMEOUT);
        fleet.awaitOwners(all, OWNERS_TIMEOUT);
      }
    }

    // then
    Verdict verdict = scenario.verify(Duration.ofMinutes(3));
    scenario.report(
        "seed "
            + plan.seed()
            + ": "
            + exits.size()
            + " SIGTERMs, exit took "
            + exits.stream().map(d -> d.toMillis() + " ms").toList()
            + "; "
            + verdict.summary());
    assertThat(verdict.clean()).as(verdict.report()).isTrue();
    assertThat(exits).allSatisfy(exit -> assertThat(exit).isLessThan(EXIT_BOUND));
    assertThat(fleet.threadFailures()).as("stream threads that died").isEmpty();
  }

  private static List<ServiceInstance> others(List<ServiceInstance> all, ServiceInstance one) {
    return all.stream().filter(instance -> instance != one).toList();
  }

  private static Duration seconds(long seconds) {
    return Duration.ofSeconds(seconds);
  }
}

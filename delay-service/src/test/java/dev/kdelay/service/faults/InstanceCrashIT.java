package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.service.KafkaClusterExtension;
import dev.kdelay.service.KafkaTestCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * kill -9 of a kdelay instance while it fires: its partitions move to the others, the transaction
 * it had open is aborted and never shows to a {@code read_committed} consumer, and the new owner
 * fires what was pending, each occurrence once and none before its due time.
 */
@FaultSeed(20_240_401L)
@ExtendWith({KafkaClusterExtension.class, FaultExtension.class})
class InstanceCrashIT {

  private static final Duration OWNERS_TIMEOUT = Duration.ofSeconds(90);
  private static final Duration FIRE_TIMEOUT = Duration.ofMinutes(3);

  @Test
  @Tag("integration")
  void shouldFireEveryTaskOnceWhenAnInstanceIsKilledWhileFiring(
      KafkaTestCluster kafka, FaultRun run) throws Exception {
    killWhileFiring(
        run,
        kafka,
        "kill9",
        new TaskLoad.Plan(
            run.seed(), 3_000, Duration.ofSeconds(12), ofSeconds(2), ofSeconds(6), 0.1),
        List.of(0.45));
  }

  @Test
  @Tag("fault-long")
  void shouldFireEveryTaskOnceWhenInstancesAreKilledOneAfterAnotherUnderLoad(
      KafkaTestCluster kafka, FaultRun run) throws Exception {
    killWhileFiring(
        run,
        kafka,
        "kill9-long",
        new TaskLoad.Plan(
            run.seed(), 24_000, Duration.ofSeconds(80), ofSeconds(2), ofSeconds(8), 0.1),
        List.of(0.25, 0.5, 0.75));
  }

  /** Three instances; at each share of the load sent, kill -9 one and start it again after. */
  private void killWhileFiring(
      FaultRun run, KafkaTestCluster kafka, String name, TaskLoad.Plan plan, List<Double> killAt)
      throws Exception {
    // given
    FaultScenario scenario = run.scenario(name, kafka.bootstrapServers());
    Fleet fleet = scenario.fleet(0);
    List<ServiceInstance> live = new ArrayList<>(fleet.start("a", "b", "c"));
    fleet.awaitOwners(live, OWNERS_TIMEOUT);
    TaskLoad load = scenario.startLoad(plan);
    List<Failover> failovers = new ArrayList<>();

    // when
    for (int round = 0; round < killAt.size(); round++) {
      load.awaitSent(killAt.get(round), Duration.ofMinutes(2));
      Map<String, Set<Integer>> owners = fleet.awaitOwners(live, OWNERS_TIMEOUT);
      ServiceInstance victim = live.get((round + 1) % live.size());
      failovers.add(kill(scenario, fleet, victim, owners.get(victim.name()), live));
      if (round < killAt.size() - 1) {
        victim.start();
        victim.awaitRunning(OWNERS_TIMEOUT);
        live.add(victim);
        fleet.awaitOwners(live, OWNERS_TIMEOUT);
      }
    }

    // then
    Verdict verdict = scenario.verify(FIRE_TIMEOUT);
    List<CommittedRecords.Received> fired = scenario.finished();
    for (Failover failover : failovers) {
      scenario.report("kill -9 (no standbys): " + failover.describe(scenario.ledger(), fired));
    }
    scenario.report(scenario.abortedFires(scenario.finished()));
    scenario.report("seed " + plan.seed() + ": " + verdict.summary());
    assertThat(verdict.clean()).as(verdict.report()).isTrue();
    assertThat(fleet.threadFailures()).as("stream threads that died").isEmpty();
  }

  /** Kills the victim once it is seen firing; waits until a survivor fires for its partitions. */
  private static Failover kill(
      FaultScenario scenario,
      Fleet fleet,
      ServiceInstance victim,
      Set<Integer> partitions,
      List<ServiceInstance> live) {
    scenario.awaitFiring(partitions);
    long killedAt = System.currentTimeMillis();
    victim.jvm().kill();
    victim.jvm().awaitExit(Duration.ofSeconds(30));
    Failover failover = new Failover(partitions, killedAt, System.currentTimeMillis());
    live.remove(victim);
    Map<String, Set<Integer>> owners = fleet.awaitOwners(live, OWNERS_TIMEOUT);
    scenario.report("killed " + victim + " owning " + partitions + "; now " + owners);
    scenario.awaitTakeover(failover);
    return failover;
  }

  private static Duration ofSeconds(long seconds) {
    return Duration.ofSeconds(seconds);
  }
}

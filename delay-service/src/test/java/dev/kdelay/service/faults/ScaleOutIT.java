package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.service.KafkaClusterExtension;
import dev.kdelay.service.KafkaTestCluster;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Scale-out from one instance to three under load, and back to one: partitions and their pending
 * tasks move to the new instances and back, and every task fires once, never early.
 */
@FaultSeed(20_240_403L)
@ExtendWith({KafkaClusterExtension.class, FaultExtension.class})
class ScaleOutIT {

  private static final Duration OWNERS_TIMEOUT = Duration.ofSeconds(90);

  @Test
  @Tag("integration")
  void shouldFireEveryTaskOnceWhenScaledFromOneToThreeAndBack(KafkaTestCluster kafka, FaultRun run)
      throws Exception {
    scale(
        run,
        kafka,
        "scale",
        new TaskLoad.Plan(run.seed(), 3_000, Duration.ofSeconds(15), seconds(2), seconds(6), 0.1),
        1);
  }

  @Test
  @Tag("fault-long")
  void shouldFireEveryTaskOnceWhenScaledOutAndInRepeatedly(KafkaTestCluster kafka, FaultRun run)
      throws Exception {
    scale(
        run,
        kafka,
        "scale-long",
        new TaskLoad.Plan(run.seed(), 24_000, Duration.ofSeconds(100), seconds(2), seconds(8), 0.1),
        3);
  }

  private void scale(
      FaultRun run, KafkaTestCluster kafka, String name, TaskLoad.Plan plan, int cycles)
      throws Exception {
    // given
    FaultScenario scenario = run.scenario(name, kafka.bootstrapServers());
    Fleet fleet = scenario.fleet(0);
    ServiceInstance first = fleet.start("a").get(0);
    fleet.awaitOwners(List.of(first), OWNERS_TIMEOUT);
    TaskLoad load = scenario.startLoad(plan);

    for (int cycle = 0; cycle < cycles; cycle++) {
      // when: two more instances join
      load.awaitSent((0.1 + cycle) / cycles, Duration.ofMinutes(3));
      List<ServiceInstance> added = fleet.start("b", "c");
      Map<String, Set<Integer>> out =
          fleet.awaitOwners(List.of(first, added.get(0), added.get(1)), OWNERS_TIMEOUT);
      scenario.report("scaled out to " + out);

      // and leave again
      load.awaitSent((0.55 + cycle) / cycles, Duration.ofMinutes(3));
      added.forEach(instance -> instance.jvm().terminate());
      for (ServiceInstance instance : added) {
        instance.jvm().awaitExit(Duration.ofSeconds(40));
      }
      scenario.report("scaled in to " + fleet.awaitOwners(List.of(first), OWNERS_TIMEOUT));
    }

    // then
    Verdict verdict = scenario.verify(Duration.ofMinutes(3));
    scenario.report("seed " + plan.seed() + ": " + verdict.summary());
    assertThat(verdict.clean()).as(verdict.report()).isTrue();
    assertThat(fleet.threadFailures()).as("stream threads that died").isEmpty();
  }

  private static Duration seconds(long seconds) {
    return Duration.ofSeconds(seconds);
  }
}

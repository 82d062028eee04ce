package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.service.KafkaClusterExtension;
import dev.kdelay.service.KafkaTestCluster;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The control for the fault scenarios: the same fleet and load with nothing going wrong, so that
 * the lateness a fault causes can be told from the lateness of the machine.
 */
@FaultSeed(20_240_401L)
@ExtendWith({KafkaClusterExtension.class, FaultExtension.class})
class NoFaultIT {

  @Test
  @Tag("fault-long")
  void shouldFireEveryTaskOnceAndOnTimeWhenNothingFails(KafkaTestCluster kafka, FaultRun run)
      throws Exception {
    // given
    FaultScenario scenario = run.scenario("control", kafka.bootstrapServers());
    Fleet fleet = scenario.fleet(0);
    List<ServiceInstance> live = fleet.start("a", "b", "c");
    fleet.awaitOwners(live, Duration.ofSeconds(90));

    // when
    scenario.startLoad(
        new TaskLoad.Plan(
            run.seed(),
            3_000,
            Duration.ofSeconds(12),
            Duration.ofSeconds(2),
            Duration.ofSeconds(6),
            0.1));

    // then
    Verdict verdict = scenario.verify(Duration.ofMinutes(3));
    scenario.report("seed " + run.seed() + ": " + verdict.summary());
    assertThat(verdict.clean()).as(verdict.report()).isTrue();
    assertThat(fleet.threadFailures()).as("stream threads that died").isEmpty();
  }
}

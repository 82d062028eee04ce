package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The broker goes away under load and comes back on the same data and ports: kdelay's instances
 * ride it out without a restart of their own, and every task fires once, none early (late is
 * expected: nothing can fire while the broker is down).
 *
 * <p>The broker is a {@link BrokerProcess} of the test's own, not the shared test cluster. It is
 * closed after the scenario, so that the instances never see it go away at the end.
 */
@FaultSeed(20_240_404L)
@ExtendWith(FaultExtension.class)
class BrokerRestartIT {

  private static final Duration OWNERS_TIMEOUT = Duration.ofMinutes(3);

  @Test
  @Tag("integration")
  void shouldFireEveryTaskOnceWhenTheBrokerRestartsUnderLoad(FaultRun run) throws Exception {
    restartBroker(
        run,
        "broker-restart",
        new TaskLoad.Plan(run.seed(), 2_000, Duration.ofSeconds(10), seconds(2), seconds(6), 0.1),
        List.of(false));
  }

  @Test
  @Tag("fault-long")
  void shouldFireEveryTaskOnceWhenTheBrokerIsKilledAndRestartedUnderLoad(FaultRun run)
      throws Exception {
    restartBroker(
        run,
        "broker-restart-long",
        new TaskLoad.Plan(run.seed(), 20_000, Duration.ofSeconds(80), seconds(2), seconds(8), 0.1),
        List.of(false, true, true));
  }

  /** Per entry: the broker goes down (SIGKILL if true, else SIGTERM) and starts again. */
  private void restartBroker(FaultRun run, String name, TaskLoad.Plan plan, List<Boolean> kills)
      throws Exception {
    // given
    Path brokerDir = FaultScenario.freshDir(name + ".broker");
    BrokerProcess broker =
        run.closeAfter(BrokerProcess.start(brokerDir, FaultScenario.childLogConfig()));
    FaultScenario scenario = run.scenario(name, broker.bootstrapServers());
    Fleet fleet = scenario.fleet(0);
    List<ServiceInstance> live = fleet.start("a", "b");
    fleet.awaitOwners(live, OWNERS_TIMEOUT);
    TaskLoad load = scenario.startLoad(plan);

    // when
    for (int round = 0; round < kills.size(); round++) {
      load.awaitSent(0.3 + 0.5 * round / kills.size(), Duration.ofMinutes(3));
      long down = System.nanoTime();
      String how;
      if (kills.get(round)) {
        broker.kill();
        how = "SIGKILL";
      } else {
        how = "SIGTERM, exit in " + broker.stop().toMillis() + " ms";
      }
      broker.restart();
      long restartedMs = (System.nanoTime() - down) / 1_000_000;
      fleet.awaitOwners(live, OWNERS_TIMEOUT);
      scenario.report("broker down (" + how + ") and serving again after " + restartedMs + " ms");
    }

    // then
    // Long: every instance falls behind while the broker is away, and catches up at the pace of
    // its intake while it fires.
    Verdict verdict = scenario.verify(Duration.ofMinutes(kills.size() > 1 ? 10 : 4));
    scenario.report("seed " + plan.seed() + ": " + verdict.summary());
    assertThat(verdict.clean()).as(verdict.report()).isTrue();
    assertThat(live).allSatisfy(instance -> assertThat(instance.jvm().isAlive()).isTrue());
    assertThat(fleet.threadFailures()).as("stream threads that died").isEmpty();
  }

  private static Duration seconds(long seconds) {
    return Duration.ofSeconds(seconds);
  }
}

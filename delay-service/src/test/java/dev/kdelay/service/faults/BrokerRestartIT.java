package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The broker goes away under load and comes back on the same data and ports: kdelay's instances
 * ride it out without a restart of their own, and every task fires once, none early (late is
 * expected: nothing can fire while the broker is down).
 *
 * <p>The broker is a {@link BrokerProcess} of the test's own, not the shared test cluster.
 */
class BrokerRestartIT {

  private static final long SEED = Long.getLong("kdelay.faults.seed", 20_240_404L);
  private static final Duration OWNERS_TIMEOUT = Duration.ofMinutes(3);

  private BrokerProcess broker;
  private FaultScenario scenario;

  @AfterEach
  void tearDown() throws Exception {
    try {
      if (scenario != null) {
        scenario.close();
      }
    } finally {
      if (broker != null) {
        broker.close();
      }
    }
  }

  @Test
  @Tag("integration")
  void shouldFireEveryTaskOnceWhenTheBrokerRestartsUnderLoad() throws Exception {
    restartBroker(
        "broker-restart",
        new TaskLoad.Plan(SEED, 2_000, Duration.ofSeconds(10), seconds(2), seconds(6), 0.1),
        List.of(false));
  }

  @Test
  @Tag("fault-long")
  void shouldFireEveryTaskOnceWhenTheBrokerIsKilledAndRestartedUnderLoad() throws Exception {
    restartBroker(
        "broker-restart-long",
        new TaskLoad.Plan(SEED, 20_000, Duration.ofSeconds(80), seconds(2), seconds(8), 0.1),
        List.of(false, true, true));
  }

  /** Per entry: the broker goes down (SIGKILL if true, else SIGTERM) and starts again. */
  private void restartBroker(String name, TaskLoad.Plan plan, List<Boolean> kills)
      throws Exception {
    // given
    Path brokerDir = FaultScenario.freshDir(name + ".broker");
    broker = BrokerProcess.start(brokerDir, FaultScenario.childLogConfig());
    scenario = new FaultScenario(name, broker.bootstrapServers());
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

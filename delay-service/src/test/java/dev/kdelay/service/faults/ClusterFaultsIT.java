package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.service.faults.CommittedRecords.Received;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * kdelay on a cluster of three brokers, each a process of its own (a {@link BrokerCluster}), with
 * every topic replicated three times and two replicas in sync needed: under one load of one-shot
 * tasks, the brokers fail in the ways a cluster's do, one after the other, and every task fires
 * once, none early. The faults:
 *
 * <ol>
 *   <li>the leader of a request partition killed ({@code SIGKILL}), and started again later;
 *   <li>the active controller killed, and started again;
 *   <li>a rolling restart: every broker stopped ({@code SIGTERM}) and started again, one at a time,
 *       each back in every replica set before the next, as an upgrade does;
 *   <li>a broker that stays down while the load goes on, on the two left: every partition at the
 *       {@code min.insync.replicas} boundary.
 * </ol>
 *
 * <p>Each fault is proved: the process is gone, the partition's leader moved, a new controller was
 * elected. For the tasks due while each fault lasted, the test prints their lateness (due to
 * visible to a {@code read_committed} consumer); it asserts none, since timing belongs to the
 * benchmark. The faults take longer than the load (about 150 s in all), so the last one sees few
 * tasks due. A long scenario for now ({@code -Pfault-long}): the default build's time is spent.
 */
@FaultSeed(20_261_128L)
@ExtendWith(FaultExtension.class)
class ClusterFaultsIT {

  private static final int BROKERS = 3;
  private static final Duration OWNERS_TIMEOUT = Duration.ofMinutes(3);
  private static final Duration HEAL_TIMEOUT = Duration.ofMinutes(2);

  @Test
  @Tag("fault-long")
  void shouldFireEveryTaskOnceThroughLeaderAndControllerDeathsARollingRestartAndABrokerDown(
      FaultRun run) throws Exception {
    // given: three brokers, two instances, a load of tasks due over the faults
    Path dir = FaultScenario.freshDir("cluster.brokers");
    BrokerCluster cluster =
        run.closeAfter(BrokerCluster.start(dir, BROKERS, FaultScenario.childLogConfig()));
    FaultScenario scenario = run.scenario("cluster", cluster.bootstrapServers(), (short) BROKERS);
    Fleet fleet = scenario.fleet(0);
    List<ServiceInstance> live = fleet.start("a", "b");
    fleet.awaitOwners(live, OWNERS_TIMEOUT);
    TaskLoad load =
        scenario.startLoad(
            new TaskLoad.Plan(
                run.seed(),
                6_000,
                Duration.ofSeconds(100),
                Duration.ofSeconds(2),
                Duration.ofSeconds(6),
                0.1));
    List<Window> windows = new ArrayList<>();

    // when: the leader of a request partition dies, and comes back
    load.awaitSent(0.1, Duration.ofMinutes(2));
    TopicPartition busiest = new TopicPartition(scenario.requestsTopic(), 0);
    int leader = cluster.leaderOf(busiest);
    long start = System.currentTimeMillis();
    kill(cluster, leader);
    Await.until(
        "a new leader of " + busiest,
        HEAL_TIMEOUT,
        () -> {
          int now = cluster.leaderOf(busiest);
          return now != -1 && now != leader;
        });
    String moved = busiest + " led by " + leader + ", then by " + cluster.leaderOf(busiest);
    load.awaitSent(0.2, Duration.ofMinutes(2)); // down a while under load, as a crashed machine is
    cluster.node(leader).restart();
    cluster.awaitFullyInSync(HEAL_TIMEOUT);
    windows.add(new Window("leader " + leader + " killed (" + moved + ")", start, now()));
    scenario.report(windows.get(windows.size() - 1).healed());

    // when: the active controller dies, and comes back
    load.awaitSent(0.3, Duration.ofMinutes(2));
    int controller = cluster.activeController();
    start = System.currentTimeMillis();
    kill(cluster, controller);
    Await.until(
        "a new active controller",
        HEAL_TIMEOUT,
        () -> {
          try {
            return cluster.activeController() != controller;
          } catch (Exception e) {
            return false;
          }
        });
    String elected = "controller " + controller + ", then " + cluster.activeController();
    cluster.node(controller).restart();
    cluster.awaitFullyInSync(HEAL_TIMEOUT);
    windows.add(new Window("active controller killed (" + elected + ")", start, now()));
    scenario.report(windows.get(windows.size() - 1).healed());

    // when: a rolling restart, one broker at a time
    load.awaitSent(0.5, Duration.ofMinutes(2));
    start = System.currentTimeMillis();
    List<String> stops = new ArrayList<>();
    for (BrokerProcess node : cluster.nodes()) {
      Duration exit = node.stop();
      assertThat(node.jvm().isAlive()).as("broker " + node.nodeId() + " stopped").isFalse();
      stops.add(node.nodeId() + " exit in " + exit.toMillis() + " ms");
      node.restart();
      cluster.awaitFullyInSync(HEAL_TIMEOUT);
    }
    windows.add(new Window("rolling restart (" + String.join(", ", stops) + ")", start, now()));
    scenario.report(windows.get(windows.size() - 1).healed());

    // when: a broker goes down and stays down while the rest of the load is due
    load.awaitSent(0.7, Duration.ofMinutes(2));
    int down = 2;
    start = System.currentTimeMillis();
    kill(cluster, down);
    Await.until(
        "the controller to count broker " + down + " out",
        HEAL_TIMEOUT,
        () -> !cluster.liveBrokers().contains(down));

    scenario.report("broker " + down + " down, counted out by the controller");

    // then: every task fired once, none early, on the two brokers left
    Verdict verdict;
    try {
      verdict = scenario.verify(Duration.ofMinutes(5));
    } catch (AssertionError e) {
      throw new AssertionError(e.getMessage() + "\n" + cluster.describe(), e);
    }
    windows.add(new Window("broker " + down + " down to the end", start, now()));
    List<Received> fired = scenario.finished();
    for (Window window : windows) {
      Verdict.Lateness lateness = window.lateness(scenario.ledger(), fired);
      scenario.report(
          window.name()
              + ": "
              + lateness.count()
              + " tasks due meanwhile, lateness due->visible "
              + lateness);
    }
    scenario.report("seed " + run.seed() + ": " + verdict.summary());
    assertThat(verdict.clean()).as(verdict.report()).isTrue();
    assertThat(live).allSatisfy(instance -> assertThat(instance.jvm().isAlive()).isTrue());
    assertThat(fleet.threadFailures()).as("stream threads that died").isEmpty();
  }

  /** SIGKILL of a broker, proved: its process is gone. */
  private static void kill(BrokerCluster cluster, int id) {
    BrokerProcess node = cluster.node(id);
    long pid = node.jvm().pid();
    node.kill();
    assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
        .as("broker " + id + " (pid " + pid + ") after SIGKILL")
        .isFalse();
  }

  private static long now() {
    return System.currentTimeMillis();
  }

  /** A fault, from its start to the cluster healed again. */
  private record Window(String name, long startMs, long endMs) {

    /** What a report says once the cluster healed. */
    String healed() {
      return name + ": every replica in sync again " + (endMs - startMs) + " ms after the fault";
    }

    /** The lateness, due to visible, of the tasks due within the window. */
    Verdict.Lateness lateness(Ledger ledger, List<Received> fired) {
      List<Long> late = new ArrayList<>();
      Set<String> seen = new java.util.HashSet<>();
      for (Received received : fired) {
        String key = received.header(DelayHeaders.IDEMPOTENCY_KEY);
        Ledger.Task task = key == null ? null : ledger.task(key);
        if (task != null && task.dueMs() >= startMs && task.dueMs() <= endMs && seen.add(key)) {
          late.add(received.receivedAtMs() - task.dueMs());
        }
      }
      return Verdict.Lateness.of(late);
    }
  }
}

package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.service.faults.CommittedRecords.Received;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
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
 *   <li>the leader of a request partition frozen ({@code SIGSTOP}, as a long GC pause or a frozen
 *       VM), which leaves its connections open with nobody answering on them, for 20 s: the
 *       controller counts it out and kdelay's clients give up what was in flight to it before it
 *       thaws;
 *   <li>a broker that goes down while the load goes on, on the two left: every partition at the
 *       {@code min.insync.replicas} boundary;
 *   <li>with it still down, a target that asks for three replicas in sync, one more than there are:
 *       Kafka refuses every write to it {@code NOT_ENOUGH_REPLICAS}, kdelay's and the transaction
 *       markers of kdelay's transactions alike, until the broker is back.
 * </ol>
 *
 * <p>Each fault is proved: the process is gone (or stopped), the partition's leader moved, a new
 * controller was elected, a broker logged a write to the target refused for too few replicas in
 * sync. For the tasks due while each fault lasted, the test prints their lateness (due to visible
 * to a {@code read_committed} consumer); it asserts none, since timing belongs to the benchmark,
 * and for the deaths how many tasks were later than Kafka's election of new leaders plus 2 s. The
 * load lasts as long as the faults (about three and a half minutes, in the default build: the
 * integration tests run in two JVMs at once).
 */
@FaultSeed(20_261_128L)
@ExtendWith(FaultExtension.class)
class ClusterFaultsIT {

  private static final int BROKERS = 3;
  private static final Duration OWNERS_TIMEOUT = Duration.ofMinutes(3);
  private static final Duration HEAL_TIMEOUT = Duration.ofMinutes(2);

  /**
   * How long the cluster runs on two brokers, after the controller counted the third out, before
   * the next fault: the tasks due meanwhile show what running on two costs, not just the election.
   */
  private static final Duration DOWN_ON_TWO = Duration.ofSeconds(20);

  /**
   * How long a broker stays frozen (longer if the controller takes longer to count it out): past
   * the broker's session timeout (9 s) and kdelay's clients' request timeout (10 s), so that it is
   * the cluster and the clients, not the thaw, that end the wait on it.
   */
  private static final Duration FROZEN_FOR = Duration.ofSeconds(20);

  /** How much later than Kafka's own election of new leaders a task may be visible. */
  private static final Duration ELECTION_SLACK = Duration.ofSeconds(2);

  @Test
  @Tag("integration")
  void shouldFireEveryTaskOnceThroughBrokerDeathsARollingRestartAndTooFewReplicasInSync(
      FaultRun run) throws Exception {
    // given: three brokers, two instances, a load of tasks due over the faults: 50 a second for as
    // long as the faults take (its plan is longer than any run; it stops after the last fault)
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
                60_000,
                Duration.ofSeconds(1_200),
                Duration.ofSeconds(2),
                Duration.ofSeconds(6),
                0.1));
    List<Window> windows = new ArrayList<>();

    // when: the leader of a request partition dies, and comes back
    load.awaitSentCount(900, Duration.ofMinutes(2));
    TopicPartition busiest = new TopicPartition(scenario.requestsTopic(), 0);
    int leader = cluster.leaderOf(busiest);
    long start = System.currentTimeMillis();
    cluster.kill(leader);
    awaitNewLeader(cluster, busiest, leader);
    long elected = now() - start;
    String moved = busiest + " led by " + leader + ", then by " + cluster.leaderOf(busiest);
    load.awaitSentCount(1_800, Duration.ofMinutes(2)); // down a while, as a crashed machine is
    cluster.node(leader).restart();
    cluster.awaitFullyInSync(HEAL_TIMEOUT);
    long caughtUp = awaitCaughtUp(scenario);
    windows.add(
        new Window("leader " + leader + " killed (" + moved + ")", start, caughtUp, elected));
    scenario.report(windows.get(windows.size() - 1).healed());

    // when: the active controller dies, and comes back
    load.awaitSentCount(2_700, Duration.ofMinutes(2));
    int controller = cluster.activeController();
    start = System.currentTimeMillis();
    cluster.kill(controller);
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
    long quorum = now() - start;
    String newController = "controller " + controller + ", then " + cluster.activeController();
    // A node here is a controller and a broker: its partitions get new leaders only once the new
    // controller counts the broker out.
    Await.until(
        "the controller to count broker " + controller + " out",
        HEAL_TIMEOUT,
        () -> cluster.countedOut(controller));
    long countedOut = now() - start;
    cluster.node(controller).restart();
    cluster.awaitFullyInSync(HEAL_TIMEOUT);
    caughtUp = awaitCaughtUp(scenario);
    windows.add(
        new Window(
            "active controller killed (" + newController + " after " + quorum + " ms)",
            start,
            caughtUp,
            countedOut));
    scenario.report(windows.get(windows.size() - 1).healed());

    // when: a rolling restart, one broker at a time
    load.awaitSentCount(4_500, Duration.ofMinutes(2));
    start = System.currentTimeMillis();
    List<String> stops = new ArrayList<>();
    for (BrokerProcess node : cluster.nodes()) {
      Duration exit = node.stop();
      assertThat(node.jvm().isAlive()).as("broker " + node.nodeId() + " stopped").isFalse();
      stops.add(node.nodeId() + " exit in " + exit.toMillis() + " ms");
      node.restart();
      cluster.awaitFullyInSync(HEAL_TIMEOUT);
    }
    caughtUp = awaitCaughtUp(scenario);
    windows.add(
        new Window("rolling restart (" + String.join(", ", stops) + ")", start, caughtUp, 0));
    scenario.report(windows.get(windows.size() - 1).healed());

    // when: the leader of a request partition freezes (SIGSTOP: a long GC pause, a frozen VM):
    // its connections stay open and nothing answers on them, so requests in flight to it wait out
    // the clients' request timeout; it thaws after FROZEN_FOR, the controller having counted it out
    load.awaitSentCount(5_400, Duration.ofMinutes(2));
    int frozen = cluster.leaderOf(busiest);
    start = System.currentTimeMillis();
    String stopped = cluster.freeze(frozen);
    Await.until(
        "the controller to count frozen broker " + frozen + " out",
        HEAL_TIMEOUT,
        () -> cluster.countedOut(frozen));
    long frozenCountedOut = now() - start;
    awaitNewLeader(cluster, busiest, frozen);
    // the fault's length, not a wait for anything
    Await.pause(Math.max(0, start + FROZEN_FOR.toMillis() - now()));
    cluster.thaw(frozen);
    cluster.awaitFullyInSync(HEAL_TIMEOUT);
    caughtUp = awaitCaughtUp(scenario);
    windows.add(
        new Window(
            "broker " + frozen + " frozen (SIGSTOP, " + stopped + ", leader of " + busiest + ")",
            start,
            caughtUp,
            frozenCountedOut));
    scenario.report(windows.get(windows.size() - 1).healed());

    // when: a broker goes down and stays down while the rest of the load is due
    load.awaitSentCount(6_300, Duration.ofMinutes(2));
    int down = 2;
    start = System.currentTimeMillis();
    cluster.kill(down);
    Await.until(
        "the controller to count broker " + down + " out",
        HEAL_TIMEOUT,
        () -> cluster.countedOut(down));
    long downCountedOut = now() - start;

    scenario.report("broker " + down + " down, counted out by the controller");
    Await.pause(DOWN_ON_TWO.toMillis()); // the fault's length, not a wait for anything
    caughtUp = awaitCaughtUp(scenario);
    windows.add(new Window("broker " + down + " down", start, caughtUp, downCountedOut));

    // when: on the two brokers left, a target asks for three replicas in sync; tasks for it are
    // due on every request partition, so both instances have to write to it
    String starved = scenario.targets().get(0);
    Map<BrokerProcess, Long> brokerLogs = new HashMap<>();
    cluster.nodes().stream()
        .filter(node -> node.nodeId() != down)
        .forEach(node -> brokerLogs.put(node, node.jvm().logOffset()));
    start = System.currentTimeMillis();
    minInsyncReplicas(scenario, starved, BROKERS);
    load.sendSentinels("starved", now() + 1_000);
    String refusal = awaitRefused(brokerLogs, starved);
    load.awaitSentCount(8_100, Duration.ofMinutes(2)); // refused a while under load
    cluster.node(down).restart();
    cluster.awaitFullyInSync(HEAL_TIMEOUT);
    minInsyncReplicas(scenario, starved, 2);
    caughtUp = awaitCaughtUp(scenario);
    windows.add(
        new Window(
            "too few in-sync replicas for "
                + starved
                + " ("
                + refusal
                + ") until broker "
                + down
                + " is back",
            start,
            caughtUp,
            0));
    scenario.report(windows.get(windows.size() - 1).healed());

    // then: every fault came under load (a slow heal must not leave a later fault with nothing due)
    load.stopSending();
    assertThat(windows)
        .allSatisfy(
            window ->
                assertThat(window.tasksDue(scenario.ledger()))
                    .as("tasks due during " + window.name())
                    .isPositive());

    // then: every task fired once, none early
    Verdict verdict;
    try {
      verdict = scenario.verify(Duration.ofMinutes(5));
    } catch (AssertionError e) {
      throw new AssertionError(e.getMessage() + "\n" + cluster.describe(), e);
    }
    windows.add(new Window("the rest, on three brokers again", caughtUp, now(), 0));
    List<Received> fired = scenario.finished();
    for (Window window : windows) {
      scenario.report(window.report(scenario.ledger(), fired));
    }
    scenario.report("seed " + run.seed() + ": " + verdict.summary());
    assertThat(verdict.clean()).as(verdict.report()).isTrue();
    assertThat(live).allSatisfy(instance -> assertThat(instance.jvm().isAlive()).isTrue());
    // a broker may answer a commit with an error the producer cannot go on from (seen in CI:
    // UNKNOWN_SERVER_ERROR to an EndTxn during these faults): the thread dies and is replaced, and
    // the verdict above says what that cost; a thread that died of anything else is kdelay's fault
    List<String> failures = fleet.threadFailures();
    List<String> afterBrokers =
        failures.stream().filter(Fleet::replacedAfterABrokersFatalAnswer).toList();
    scenario.report(
        "stream threads replaced after a broker's fatal answer to a transaction request: "
            + afterBrokers.size()
            + (afterBrokers.isEmpty() ? "" : " " + afterBrokers));
    assertThat(failures)
        .filteredOn(failure -> !Fleet.replacedAfterABrokersFatalAnswer(failure))
        .as("stream threads that died of anything but a broker's fatal answer")
        .isEmpty();
  }

  /** Waits until a partition has a leader other than {@code old}: its leadership moved. */
  private static void awaitNewLeader(BrokerCluster cluster, TopicPartition partition, int old) {
    Await.until(
        "a new leader of " + partition,
        HEAL_TIMEOUT,
        () -> {
          int now = cluster.leaderOf(partition);
          return now != -1 && now != old;
        });
  }

  /** Sets a topic's {@code min.insync.replicas}. */
  private static void minInsyncReplicas(FaultScenario scenario, String topic, int replicas)
      throws Exception {
    AlterConfigOp set =
        new AlterConfigOp(
            new ConfigEntry(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG, Integer.toString(replicas)),
            AlterConfigOp.OpType.SET);
    scenario
        .admin()
        .incrementalAlterConfigs(
            Map.of(new ConfigResource(ConfigResource.Type.TOPIC, topic), List.of(set)))
        .all()
        .get(1, TimeUnit.MINUTES);
  }

  /**
   * Proves the fault: the leader of one of the topic's partitions logged a write to it refused for
   * too few replicas in sync, since {@code offsets} of the brokers' logs. Only kdelay writes to its
   * targets, so the write was kdelay's: a record, or a transaction marker of kdelay's transaction
   * that wrote to the topic just before. Kafka's clients log only the first of these, so the broker
   * is asked. Returns the refused partitions the broker named.
   */
  private static String awaitRefused(Map<BrokerProcess, Long> offsets, String topic) {
    Pattern refused =
        Pattern.compile(
            "NotEnoughReplicasException: .* for partition (" + Pattern.quote(topic) + "-\\d+)");
    return Await.value(
        "a broker refusing a write to " + topic + " for too few in-sync replicas",
        HEAL_TIMEOUT,
        () -> {
          Set<String> partitions = new TreeSet<>();
          offsets.forEach(
              (broker, offset) ->
                  broker.jvm().linesMatching(refused, offset).stream()
                      .map(refused::matcher)
                      .filter(Matcher::find)
                      .forEach(matcher -> partitions.add(matcher.group(1))));
          return partitions.isEmpty()
              ? Optional.empty()
              : Optional.of("NOT_ENOUGH_REPLICAS on " + String.join(", ", partitions));
        });
  }

  /**
   * Waits until every task due by now is visible: kdelay caught up with the fault before the next
   * one begins, so that no task's lateness is counted against the wrong fault.
   *
   * @return the instant by which every task due was visible: where the fault's window ends
   */
  private static long awaitCaughtUp(FaultScenario scenario) {
    long now = now();
    List<String> due =
        scenario.ledger().expected().values().stream()
            .filter(task -> task.dueMs() <= now)
            .map(Ledger.Task::idempotencyKey)
            .toList();
    CommittedRecords fired = scenario.fired();
    Await.until(
        "every task due by now visible",
        HEAL_TIMEOUT,
        () -> scenario.ledger().awaited(fired.missing(due), fired::contains).isEmpty());
    return now;
  }

  private static long now() {
    return System.currentTimeMillis();
  }

  /**
   * A fault, from its start to the cluster healed again and kdelay caught up (every task due by
   * then visible), and how long after its start Kafka had elected new leaders for the dead broker's
   * partitions (0 where no broker died).
   */
  private record Window(String name, long startMs, long endMs, long electionMs) {

    /** How many of the load's tasks were due within the window. */
    long tasksDue(Ledger ledger) {
      return ledger.expected().values().stream()
          .filter(task -> task.dueMs() >= startMs && task.dueMs() <= endMs)
          .count();
    }

    /** What a report says once the cluster healed. */
    String healed() {
      return name
          + ": every replica in sync and every task due meanwhile visible "
          + (endMs - startMs)
          + " ms after the fault";
    }

    /**
     * The tasks due within the window: their lateness due to visible and due to fired, and how many
     * were visible later than the election plus {@link #ELECTION_SLACK}, the bound kdelay aims at.
     */
    String report(Ledger ledger, List<Received> fired) {
      List<Long> visible = new ArrayList<>();
      List<Long> firing = new ArrayList<>();
      int overBound = 0;
      int writtenLate = 0;
      Set<String> seen = new java.util.HashSet<>();
      for (Received received : fired) {
        String key = received.header(DelayHeaders.IDEMPOTENCY_KEY);
        Ledger.Task task = key == null ? null : ledger.task(key);
        if (task != null && task.dueMs() >= startMs && task.dueMs() <= endMs && seen.add(key)) {
          long late = received.receivedAtMs() - task.dueMs();
          visible.add(late);
          firing.add(received.headerMs(DelayHeaders.FIRED_AT) - task.dueMs());
          if (late > electionMs + ELECTION_SLACK.toMillis()) {
            overBound++;
          }
          if (task.writtenLate()) {
            writtenLate++;
          }
        }
      }
      Verdict.Lateness lateness = Verdict.Lateness.of(visible);
      return name
          + ": "
          + lateness.count()
          + " tasks due meanwhile ("
          + writtenLate
          + " of them acknowledged to the load only after they were due), lateness due->visible "
          + lateness
          + ", due->fired "
          + Verdict.Lateness.of(firing)
          + (electionMs > 0
              ? "; new leaders "
                  + electionMs
                  + " ms after the fault, "
                  + overBound
                  + " tasks later than that + "
                  + ELECTION_SLACK.toMillis()
                  + " ms"
              : "");
    }
  }
}

package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;

/**
 * A Kafka cluster of several {@link BrokerProcess}es, each a broker and a controller in a child JVM
 * of its own, on loopback ports of its own: one can be killed (SIGKILL) or stopped and started
 * again as the same node with the same data, as a crash or a rolling upgrade does, while the others
 * elect new leaders. The controllers form one static quorum.
 *
 * <p>Its settings are the tests' {@link dev.kdelay.service.broker.BrokerProfile} for a cluster of
 * its size: Apache Kafka's defaults unless told otherwise, so three replicas for the internal
 * topics and transactions that need two in sync.
 */
final class BrokerCluster implements AutoCloseable {

  private static final String HOST = "127.0.0.1";
  private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(30);

  /**
   * How long one of the polled questions (who is live, who leads) may wait for its answer: a frozen
   * broker the admin client happened to ask answers nothing, and the next try goes to another (one
   * with no request in flight), so that the test sees the cluster's view when it changes rather
   * than after the admin's whole API timeout (a frozen broker's count-out was seen 30 s late).
   */
  private static final int QUERY_TIMEOUT_MS = 3_000;

  private final List<BrokerProcess> nodes;
  private final Admin admin;

  private BrokerCluster(List<BrokerProcess> nodes) {
    this.nodes = List.copyOf(nodes);
    this.admin =
        Admin.create(
            Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrapServers(),
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG,
                (int) ADMIN_TIMEOUT.toMillis(),
                // A frozen broker answers nothing: ask another after 10 s, so that the test sees
                // the controller's view of it about when kdelay's clients do.
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG,
                10_000));
  }

  /**
   * Starts a cluster of {@code size} nodes, with ids 1 to {@code size}, their data and logs under
   * {@code dir}, and waits until every node serves.
   */
  static BrokerCluster start(Path dir, int size, Path logConfig) {
    int[] ports = BrokerProcess.freePorts(2 * size);
    List<String> voters = new ArrayList<>();
    for (int i = 0; i < size; i++) {
      voters.add((i + 1) + "@" + HOST + ":" + ports[2 * i + 1]);
    }
    String clusterId = Uuid.randomUuid().toString();
    List<BrokerProcess> nodes = new ArrayList<>();
    for (int i = 0; i < size; i++) {
      int id = i + 1;
      StandaloneBroker.Node node =
          new StandaloneBroker.Node(
              dir.resolve("node-" + id),
              HOST,
              ports[2 * i],
              ports[2 * i + 1],
              id,
              String.join(",", voters),
              clusterId,
              size);
      nodes.add(
          BrokerProcess.of(node, "broker-" + id, dir.resolve("node-" + id + ".log"), logConfig));
    }
    BrokerCluster cluster = new BrokerCluster(nodes);
    try {
      // All at once: a node serves only once a quorum of controllers has elected a leader.
      nodes.forEach(BrokerProcess::launch);
      nodes.forEach(BrokerProcess::awaitServing);
      Await.until(
          "every broker registered with the controller",
          Duration.ofSeconds(60),
          () -> cluster.liveBrokers().size() == size);
    } catch (RuntimeException | AssertionError e) {
      cluster.close();
      throw e;
    }
    return cluster;
  }

  /** Every node's address. */
  String bootstrapServers() {
    return nodes.stream().map(BrokerProcess::bootstrapServers).collect(Collectors.joining(","));
  }

  int size() {
    return nodes.size();
  }

  /** The node of an id, from 1. */
  BrokerProcess node(int id) {
    return nodes.get(id - 1);
  }

  List<BrokerProcess> nodes() {
    return nodes;
  }

  /** SIGKILL of a node, proved: its process is gone. */
  void kill(int id) {
    BrokerProcess node = node(id);
    long pid = node.jvm().pid();
    node.kill();
    assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
        .as("broker " + id + " (pid " + pid + ") after SIGKILL")
        .isFalse();
  }

  /**
   * SIGSTOP of a node, proved: its process is stopped ({@code T} in {@code /proc/PID/stat}). Its
   * connections stay open and nothing answers on them, as with a long GC pause, a frozen VM or a
   * host gone from the network.
   *
   * @return the process state seen
   */
  String freeze(int id) {
    BrokerProcess node = node(id);
    node.jvm().pause();
    long pid = node.jvm().pid();
    Await.until("broker " + id + " stopped", Duration.ofSeconds(10), () -> isStopped(pid));
    return "pid " + pid + " stopped";
  }

  /** SIGCONT of a frozen node, proved: its process runs again. */
  void thaw(int id) {
    BrokerProcess node = node(id);
    node.jvm().resume();
    long pid = node.jvm().pid();
    Await.until("broker " + id + " running again", Duration.ofSeconds(10), () -> !isStopped(pid));
  }

  /** Whether a process is stopped: state {@code T} in {@code /proc/PID/stat}. */
  private static boolean isStopped(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
      // The state follows the command name's closing parenthesis and a space.
      return stat.charAt(stat.lastIndexOf(')') + 2) == 'T';
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  Admin admin() {
    return admin;
  }

  /** The ids of the brokers the controller counts as alive, or none if it does not answer. */
  Set<Integer> liveBrokers() {
    try {
      return admin
          .describeCluster(new DescribeClusterOptions().timeoutMs(QUERY_TIMEOUT_MS))
          .nodes()
          .get(ADMIN_TIMEOUT.toSeconds(), TimeUnit.SECONDS)
          .stream()
          .map(org.apache.kafka.common.Node::id)
          .collect(Collectors.toSet());
    } catch (Exception e) {
      return Set.of();
    }
  }

  /**
   * Whether the controller counts a node out: the cluster answered, and every other node is live
   * and this one is not. An unanswered question is not a yes (a frozen node may be the one the
   * admin client asked).
   */
  boolean countedOut(int id) {
    Set<Integer> live = liveBrokers();
    return live.size() == nodes.size() - 1 && !live.contains(id);
  }

  /** The id of the active controller, the quorum's leader. */
  int activeController() throws Exception {
    return admin
        .describeMetadataQuorum()
        .quorumInfo()
        .get(ADMIN_TIMEOUT.toSeconds(), TimeUnit.SECONDS)
        .leaderId();
  }

  /** The partitions of these topics as the controller describes them now. */
  Map<TopicPartition, TopicPartitionInfo> partitions(Collection<String> topics) throws Exception {
    Map<String, TopicDescription> described =
        admin
            .describeTopics(topics, new DescribeTopicsOptions().timeoutMs(QUERY_TIMEOUT_MS))
            .allTopicNames()
            .get(ADMIN_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    Map<TopicPartition, TopicPartitionInfo> partitions = new java.util.HashMap<>();
    described.forEach(
        (topic, description) ->
            description
                .partitions()
                .forEach(p -> partitions.put(new TopicPartition(topic, p.partition()), p)));
    return partitions;
  }

  /** The id of a partition's leader, or -1 if it has none now or the cluster does not answer. */
  int leaderOf(TopicPartition partition) {
    try {
      TopicPartitionInfo info = partitions(List.of(partition.topic())).get(partition);
      return info == null || info.leader() == null ? -1 : info.leader().id();
    } catch (Exception e) {
      return -1;
    }
  }

  /**
   * Whether every partition of these topics has every one of its replicas in sync and a leader: the
   * cluster has healed.
   */
  boolean fullyInSync(Collection<String> topics) {
    try {
      return partitions(topics).values().stream()
          .allMatch(p -> p.leader() != null && p.isr().size() == p.replicas().size());
    } catch (Exception e) {
      return false; // the cluster did not answer in time: ask again
    }
  }

  /**
   * Waits until every partition of every topic, internal ones included, has every replica in sync:
   * what an operator waits for between two brokers of a rolling restart (no under-replicated
   * partition), so that the next broker down leaves every partition a replica to lead.
   */
  void awaitFullyInSync(Duration timeout) {
    Await.until(
        "every replica of every topic in sync",
        timeout,
        () -> {
          try {
            Set<String> topics =
                admin
                    .listTopics(new ListTopicsOptions().listInternal(true))
                    .names()
                    .get(ADMIN_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            return fullyInSync(topics);
          } catch (Exception e) {
            return false; // the cluster did not answer in time: ask again
          }
        });
  }

  /**
   * The live brokers, the active controller, and every partition without all its replicas in sync
   * (leader, replicas, in-sync replicas): what a failure message shows of the cluster.
   */
  String describe() {
    StringBuilder text = new StringBuilder("cluster: live brokers ").append(liveBrokers());
    try {
      text.append(", active controller ").append(activeController());
      Set<String> topics =
          admin
              .listTopics(new ListTopicsOptions().listInternal(true))
              .names()
              .get(ADMIN_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
      partitions(topics).entrySet().stream()
          .filter(
              e ->
                  e.getValue().isr().size() != e.getValue().replicas().size()
                      || e.getValue().leader() == null)
          .sorted(
              java.util.Map.Entry.comparingByKey(
                  java.util.Comparator.comparing(TopicPartition::toString)))
          .forEach(
              e ->
                  text.append("\n  ")
                      .append(e.getKey())
                      .append(": leader ")
                      .append(e.getValue().leader() == null ? "none" : e.getValue().leader().id())
                      .append(", replicas ")
                      .append(ids(e.getValue().replicas()))
                      .append(", in sync ")
                      .append(ids(e.getValue().isr())));
    } catch (Exception e) {
      text.append(" (the cluster did not answer: ").append(e).append(')');
    }
    return text.toString();
  }

  private static List<Integer> ids(List<org.apache.kafka.common.Node> nodes) {
    return nodes.stream().map(org.apache.kafka.common.Node::id).toList();
  }

  @Override
  public void close() {
    admin.close(Duration.ofSeconds(5));
    for (BrokerProcess node : nodes) {
      node.close();
    }
  }
}

package dev.kdelay.service.broker;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The settings of the brokers kdelay runs on itself: the embedded broker of {@code bin/kdelay}, the
 * benchmark's and the tests' (single nodes, and the nodes of the fault tests' clusters). One
 * definition, so that the figures of the benchmark, of the fault tests and of a newcomer's first
 * run come from brokers that say what they are.
 *
 * <p>Every profile starts from what one node needs whatever else it is set to ({@link
 * #singleNode}): one replica for every internal topic, transactions that need one in-sync replica,
 * and a small log cleaner buffer (memory only; it changes no timing).
 *
 * <ul>
 *   <li>{@link #STOCK}: nothing else. Apache Kafka's defaults, as on a managed cluster whose
 *       brokers cannot be tuned (MSK, Confluent Cloud, Aiven, most company clusters).
 *   <li>{@link #TUNED}: the settings kdelay recommends to those who run their own brokers. They may
 *       only make kdelay faster; correctness and timeliness must hold on {@link #STOCK}.
 * </ul>
 */
public enum BrokerProfile {
  /** Apache Kafka's default settings, beyond what a single node needs. */
  STOCK,
  /** The settings kdelay recommends for a broker of one's own; {@code bin/kdelay} runs it. */
  TUNED;

  /**
   * The system property that picks the tests' profile: {@code stock} (default) or {@code tuned}.
   */
  public static final String TEST_PROPERTY = "kdelay.broker.profile";

  /**
   * The profile a test broker runs: {@value #TEST_PROPERTY}, {@link #STOCK} unless set.
   *
   * @throws IllegalArgumentException if the property names no profile
   */
  public static BrokerProfile forTests() {
    return parse(System.getProperty(TEST_PROPERTY, "stock"));
  }

  /**
   * The profile a name stands for, in any case.
   *
   * @throws IllegalArgumentException if it is neither {@code stock} nor {@code tuned}
   */
  public static BrokerProfile parse(String name) {
    for (BrokerProfile profile : values()) {
      if (profile.label().equals(name.trim().toLowerCase(Locale.ROOT))) {
        return profile;
      }
    }
    throw new IllegalArgumentException("unknown broker profile '" + name + "': stock or tuned");
  }

  /** The profile's name in reports and on command lines: {@code stock} or {@code tuned}. */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The broker settings of this profile for a single node, listeners and directories aside. */
  public Map<String, String> settings() {
    return settings(1);
  }

  /**
   * The broker settings of this profile for each node of a cluster, listeners and directories
   * aside. From three nodes on, the internal topics keep Apache Kafka's defaults (three replicas,
   * transactions that need two in sync); between one and three, as many replicas as there are
   * nodes.
   *
   * @param nodes how many brokers the cluster has
   */
  public Map<String, String> settings(int nodes) {
    if (nodes < 1) {
      throw new IllegalArgumentException("a cluster has at least one node, not " + nodes);
    }
    Map<String, String> props = nodes == 1 ? singleNode() : cluster(nodes);
    if (this == TUNED) {
      props.putAll(tuning());
    }
    return props;
  }

  /** What every node of a cluster of two or more needs, whatever its profile. */
  private static Map<String, String> cluster(int nodes) {
    Map<String, String> props = new HashMap<>();
    if (nodes < 3) {
      String replicas = Integer.toString(nodes);
      props.put("offsets.topic.replication.factor", replicas);
      props.put("transaction.state.log.replication.factor", replicas);
      props.put("share.coordinator.state.topic.replication.factor", replicas);
    }
    // The nodes of a test's or a benchmark's cluster share one machine: memory only.
    props.put("log.cleaner.dedupe.buffer.size", Long.toString(8L * 1024 * 1024));
    return props;
  }

  /** What every single-node broker needs, whatever its profile. */
  private static Map<String, String> singleNode() {
    Map<String, String> props = new HashMap<>();
    // One node: every internal topic gets one replica, and transactions (exactly_once_v2) must
    // not wait for in-sync replicas that cannot exist.
    props.put("offsets.topic.replication.factor", "1");
    props.put("transaction.state.log.replication.factor", "1");
    props.put("transaction.state.log.min.isr", "1");
    props.put("share.coordinator.state.topic.replication.factor", "1");
    props.put("share.coordinator.state.topic.min.isr", "1");
    props.put("min.insync.replicas", "1");
    // The embedded broker shares the heap with the service; the default cleaner buffer is 128 MB.
    props.put("log.cleaner.dedupe.buffer.size", Long.toString(8L * 1024 * 1024));
    return props;
  }

  /** What {@link #TUNED} adds to Apache Kafka's defaults, and why. */
  private static Map<String, String> tuning() {
    Map<String, String> props = new HashMap<>();
    // Few partitions for the internal topics: one process, and a faster first start.
    props.put("offsets.topic.num.partitions", "5");
    props.put("transaction.state.log.num.partitions", "5");
    // Nobody else is going to join the group: assign partitions at once (default: 3 s).
    props.put("group.initial.rebalance.delay.ms", "0");
    // Failover: a killed instance's open transaction blocks read_committed readers until the
    // broker aborts it, which it checks for every 10 s by default: every second instead.
    props.put("transaction.abort.timed.out.transaction.cleanup.interval.ms", "1000");
    // Transaction version 2: a transaction's first produce to a partition is refused with
    // CONCURRENT_TRANSACTIONS while the coordinator still writes the previous transaction's
    // markers. The broker retries that itself every 20 ms for at most 100 ms, then hands the error
    // to the producer, which backs off and re-sends that batch and every batch behind it
    // (OUT_OF_ORDER_SEQUENCE_NUMBER): a marker write slowed past 100 ms (a loaded machine, a new
    // topic's first appends) became a commit of 200-500 ms, and no fire of the stream thread was
    // visible until it ended. Here the broker retries every 5 ms for up to a second, so the
    // producer never sees the error (benchmark, first fires to new topics: first-second p99,
    // median of 9 runs, 423 -> 201 ms; the error 0 times per run instead of 12-62).
    props.put("add.partitions.to.txn.retry.backoff.ms", "5");
    props.put("add.partitions.to.txn.retry.backoff.max.ms", "1000");
    // Session timeouts down to 3 s (default minimum 6 s), for kdelay's fast failover settings.
    props.put("group.min.session.timeout.ms", "3000");
    return props;
  }
}

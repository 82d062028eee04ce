package dev.kdelay.service;

import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;

/**
 * One combined broker+controller KRaft node in this JVM, from Kafka's own test kit: real Apache
 * Kafka, no Docker needed. Tuned like kdelay's embedded broker: one replica for every internal
 * topic, transactions that need one in-sync replica, no initial rebalance delay.
 */
final class KraftTestKitCluster implements KafkaTestCluster {

  private final KafkaClusterTestKit cluster;

  private KraftTestKitCluster(KafkaClusterTestKit cluster) {
    this.cluster = cluster;
  }

  static KraftTestKitCluster start() throws Exception {
    TestKitNodes nodes =
        new TestKitNodes.Builder()
            .setCombined(true)
            .setNumBrokerNodes(1)
            .setNumControllerNodes(1)
            .build();
    KafkaClusterTestKit cluster =
        new KafkaClusterTestKit.Builder(nodes)
            .setConfigProp("offsets.topic.replication.factor", "1")
            .setConfigProp("offsets.topic.num.partitions", "5")
            .setConfigProp("transaction.state.log.replication.factor", "1")
            .setConfigProp("transaction.state.log.min.isr", "1")
            .setConfigProp("transaction.state.log.num.partitions", "5")
            .setConfigProp("min.insync.replicas", "1")
            .setConfigProp("group.initial.rebalance.delay.ms", "0")
            // As kdelay's README asks of a broker for fast failover: abort a dead producer's
            // transaction within a second of its timeout (default: checked every 10 s), and
            // accept session timeouts down to 3 s (default minimum 6 s) for the fast profile.
            .setConfigProp("transaction.abort.timed.out.transaction.cleanup.interval.ms", "1000")
            .setConfigProp("group.min.session.timeout.ms", "3000")
            .build();
    try {
      cluster.format();
      cluster.startup();
      cluster.waitForReadyBrokers();
    } catch (Exception e) {
      cluster.close();
      throw e;
    }
    return new KraftTestKitCluster(cluster);
  }

  @Override
  public String bootstrapServers() {
    return cluster.bootstrapServers();
  }

  @Override
  public void close() throws Exception {
    cluster.close();
  }
}

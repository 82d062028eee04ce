package dev.kdelay.service.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class BrokerProfileTest {

  @Test
  void shouldGiveASingleNodeOneReplicaOfEveryInternalTopic() {
    // when
    Map<String, String> settings = BrokerProfile.STOCK.settings();

    // then
    assertThat(settings)
        .containsEntry("offsets.topic.replication.factor", "1")
        .containsEntry("transaction.state.log.replication.factor", "1")
        .containsEntry("transaction.state.log.min.isr", "1")
        .containsEntry("min.insync.replicas", "1");
  }

  @Test
  void shouldLeaveApacheKafkasReplicationDefaultsToAClusterOfThree() {
    // when
    Map<String, String> settings = BrokerProfile.STOCK.settings(3);

    // then: three replicas and two in sync for transactions, as Kafka has them
    assertThat(settings)
        .doesNotContainKeys(
            "offsets.topic.replication.factor",
            "transaction.state.log.replication.factor",
            "transaction.state.log.min.isr",
            "min.insync.replicas");
  }

  @Test
  void shouldGiveAClusterOfTwoAsManyReplicasAsNodes() {
    // when
    Map<String, String> settings = BrokerProfile.STOCK.settings(2);

    // then
    assertThat(settings)
        .containsEntry("offsets.topic.replication.factor", "2")
        .containsEntry("transaction.state.log.replication.factor", "2");
  }

  @Test
  void shouldAddTheTunedSettingsToAClusterToo() {
    // when
    Map<String, String> settings = BrokerProfile.TUNED.settings(3);

    // then
    assertThat(settings).containsEntry("add.partitions.to.txn.retry.backoff.ms", "5");
  }

  @Test
  void shouldRefuseAClusterOfNoNodes() {
    assertThatThrownBy(() -> BrokerProfile.STOCK.settings(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at least one node");
  }
}

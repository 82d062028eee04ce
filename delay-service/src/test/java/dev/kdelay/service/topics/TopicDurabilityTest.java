package dev.kdelay.service.topics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.topology.DelayConfig;
import dev.kdelay.topology.StreamsTuning;
import java.util.HashMap;
import java.util.Map;
import java.util.OptionalInt;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;

class TopicDurabilityTest {

  private static final String STREAMS_MIN_INSYNC = "topic.min.insync.replicas";

  @Test
  void shouldKeepOneCopyWhenTheClusterHasOneBroker() {
    assertThat(TopicDurability.of(config(Map.of()), 1))
        .isEqualTo(new TopicDurability(1, OptionalInt.of(1)));
  }

  @Test
  void shouldKeepTwoCopiesBothInSyncWhenTheClusterHasTwoBrokers() {
    assertThat(TopicDurability.of(config(Map.of()), 2))
        .isEqualTo(new TopicDurability(2, OptionalInt.of(2)));
  }

  @Test
  void shouldKeepThreeCopiesTwoInSyncWhenTheClusterHasThreeOrMoreBrokers() {
    assertThat(TopicDurability.of(config(Map.of()), 3))
        .isEqualTo(new TopicDurability(3, OptionalInt.of(2)));
    assertThat(TopicDurability.of(config(Map.of()), 9))
        .isEqualTo(new TopicDurability(3, OptionalInt.of(2)));
  }

  @Test
  void shouldUseTheConfiguredReplicationWhenSet() {
    assertThat(
            TopicDurability.of(
                config(Map.of(ServiceConfig.TOPIC_REPLICATION_FACTOR_CONFIG, "1")), 5))
        .isEqualTo(new TopicDurability(1, OptionalInt.of(1)));
    assertThat(
            TopicDurability.of(
                config(Map.of(ServiceConfig.TOPIC_REPLICATION_FACTOR_CONFIG, "5")), 5))
        .isEqualTo(new TopicDurability(5, OptionalInt.of(2)));
  }

  @Test
  void shouldUseTheConfiguredMinInsyncReplicasWhenSet() {
    Map<String, Object> settings =
        Map.of(
            ServiceConfig.TOPIC_REPLICATION_FACTOR_CONFIG, "5",
            ServiceConfig.TOPIC_MIN_INSYNC_REPLICAS_CONFIG, "3");
    assertThat(TopicDurability.of(config(settings), 5))
        .isEqualTo(new TopicDurability(5, OptionalInt.of(3)));
  }

  @Test
  void shouldLeaveBothToTheBrokerWhenTheReplicationFactorIsTheBrokerDefault() {
    assertThat(
            TopicDurability.of(
                config(Map.of(ServiceConfig.TOPIC_REPLICATION_FACTOR_CONFIG, "-1")), 3))
        .isEqualTo(new TopicDurability(-1, OptionalInt.empty()));
  }

  @Test
  void shouldRefuseWhenMinInsyncReplicasExceedTheReplicationFactor() {
    assertThatThrownBy(
            () ->
                TopicDurability.of(
                    config(Map.of(ServiceConfig.TOPIC_MIN_INSYNC_REPLICAS_CONFIG, "2")), 1))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(ServiceConfig.TOPIC_MIN_INSYNC_REPLICAS_CONFIG)
        .hasMessageContaining("value 2")
        .hasMessageContaining("at most the replication factor, 1");
  }

  @Test
  void shouldGiveMinInsyncReplicasToCreatedTopicsWhenDecided() {
    assertThat(new TopicDurability(3, OptionalInt.of(2)).topicConfigs())
        .isEqualTo(Map.of("min.insync.replicas", "2"));
    assertThat(new TopicDurability(-1, OptionalInt.empty()).topicConfigs()).isEmpty();
  }

  @Test
  void shouldGiveKafkaStreamsTheSameDurabilityWhenNothingIsPassedThrough() {
    ServiceConfig applied =
        new TopicDurability(3, OptionalInt.of(2)).applyToStreams(config(Map.of()));

    assertThat(StreamsTuning.streamsProperties(applied.delay()))
        .containsEntry(StreamsConfig.REPLICATION_FACTOR_CONFIG, 3)
        .containsEntry(STREAMS_MIN_INSYNC, 2);
  }

  @Test
  void shouldLeavePassedThroughStreamsSettingsAloneWhenGiven() {
    ServiceConfig passed =
        config(Map.of(StreamsConfig.REPLICATION_FACTOR_CONFIG, "4", STREAMS_MIN_INSYNC, "3"));

    ServiceConfig applied = new TopicDurability(3, OptionalInt.of(2)).applyToStreams(passed);

    assertThat(StreamsTuning.streamsProperties(applied.delay()))
        .containsEntry(StreamsConfig.REPLICATION_FACTOR_CONFIG, "4")
        .containsEntry(STREAMS_MIN_INSYNC, "3");
  }

  private static ServiceConfig config(Map<String, Object> overrides) {
    Map<String, Object> settings = new HashMap<>(overrides);
    settings.put(DelayConfig.APPLICATION_ID_CONFIG, "kdelay-test");
    return new ServiceConfig(settings);
  }
}

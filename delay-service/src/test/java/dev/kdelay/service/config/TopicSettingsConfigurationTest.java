package dev.kdelay.service.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;

/** The keys for the topics the service creates, as an operator sets them. */
class TopicSettingsConfigurationTest {

  @Test
  void shouldLeaveReplicationToTheClusterSizeAndKeepDeadLettersThirtyDaysWhenNothingIsGiven() {
    ServiceConfig config = ConfigSources.load(Optional.empty(), Map.of());

    assertThat(config.topicReplicationFactor()).isEmpty();
    assertThat(config.topicMinInsyncReplicas()).isEmpty();
    assertThat(config.dlqRetentionMs()).isEqualTo(Duration.ofDays(30).toMillis());
    assertThat(config.topicReadyTimeout()).isEqualTo(Duration.ofSeconds(60));
  }

  @Test
  void shouldReadTheKeysWhenSetFromTheEnvironment() {
    ServiceConfig config =
        ConfigSources.load(
            Optional.empty(),
            Map.of(
                "DELAY_TOPIC_REPLICATION_FACTOR", "3",
                "DELAY_TOPIC_MIN_INSYNC_REPLICAS", "2",
                "DELAY_DLQ_RETENTION_MS", "-1",
                "DELAY_TOPIC_READY_TIMEOUT_MS", "5000"));

    assertThat(config.topicReplicationFactor()).hasValue(3);
    assertThat(config.topicMinInsyncReplicas()).hasValue(2);
    assertThat(config.dlqRetentionMs()).isEqualTo(-1);
    assertThat(config.topicReadyTimeout()).isEqualTo(Duration.ofSeconds(5));
  }

  @Test
  void shouldNameKeyValueAndAllowedWhenARetentionWouldLoseDeadLetters() {
    assertThatThrownBy(
            () -> ConfigSources.load(Optional.empty(), Map.of("DELAY_DLQ_RETENTION_MS", "0")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("delay.dlq.retention.ms=0")
        .hasMessageContaining("environment variable DELAY_DLQ_RETENTION_MS")
        .hasMessageContaining("-1 (forever) or at least 1");
  }

  @Test
  void shouldNameKeyValueAndAllowedWhenAReplicationFactorIsZero() {
    assertThatThrownBy(
            () ->
                ConfigSources.load(Optional.empty(), Map.of("DELAY_TOPIC_REPLICATION_FACTOR", "0")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("delay.topic.replication.factor=0")
        .hasMessageContaining("-1 (the broker default) or 1 to 32767");
  }
}

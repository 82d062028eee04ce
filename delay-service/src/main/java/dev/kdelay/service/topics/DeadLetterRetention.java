package dev.kdelay.service.topics;

import dev.kdelay.service.config.ServiceConfig;
import java.util.Optional;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.TopicConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checks that an existing dead-letter topic keeps dead letters at least as long as {@value
 * ServiceConfig#DLQ_RETENTION_CONFIG} says. kdelay sets {@code retention.ms} only on a dead-letter
 * topic it creates; one an operator made, or changed, stays as it is, and a shorter retention is
 * only a warning: the operator may mean it, and the service works either way.
 */
final class DeadLetterRetention {

  private static final Logger log = LoggerFactory.getLogger(DeadLetterRetention.class);

  private DeadLetterRetention() {}

  /** Logs a warning if the topic's {@code retention.ms} is shorter than configured. */
  static void warnIfShorter(String topic, Config existing, long configuredMs) {
    warning(topic, existing, configuredMs).ifPresent(log::warn);
  }

  /**
   * The warning for a dead-letter topic whose {@code retention.ms} is shorter than configured,
   * naming both values; empty if it keeps dead letters at least as long.
   */
  static Optional<String> warning(String topic, Config existing, long configuredMs) {
    return Optional.ofNullable(existing.get(TopicConfig.RETENTION_MS_CONFIG))
        .map(ConfigEntry::value)
        .map(Long::parseLong)
        .filter(retentionMs -> isShorter(retentionMs, configuredMs))
        .map(
            retentionMs ->
                String.format(
                    "event=dlq-retention-shorter topic=%s retention.ms=%d %s=%d hint=\"dead"
                        + " letters are deleted sooner than configured; raise it with kafka-configs"
                        + " --alter --entity-type topics --entity-name %s --add-config"
                        + " retention.ms=%d, or lower %s\"",
                    topic,
                    retentionMs,
                    ServiceConfig.DLQ_RETENTION_CONFIG,
                    configuredMs,
                    topic,
                    configuredMs,
                    ServiceConfig.DLQ_RETENTION_CONFIG));
  }

  /**
   * Whether a retention keeps records for less time than another; -1 (or any negative value) is
   * forever, as in Kafka.
   */
  static boolean isShorter(long retentionMs, long thanMs) {
    if (retentionMs < 0) {
      return false;
    }
    return thanMs < 0 || retentionMs < thanMs;
  }
}

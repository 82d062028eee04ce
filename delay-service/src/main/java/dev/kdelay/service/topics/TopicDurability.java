package dev.kdelay.service.topics;

import static java.util.Objects.requireNonNull;

import dev.kdelay.service.config.ServiceConfig;
import java.util.Map;
import java.util.OptionalInt;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.streams.StreamsConfig;

/**
 * How many copies the topics kdelay creates keep, and how many must have a write before it counts:
 * the same for kdelay's own topics and for Kafka Streams' changelogs, so that the stored tasks are
 * as durable as the requests they came from.
 *
 * <p>Unless configured, the replication factor is {@code min(3, brokers)} and {@code
 * min.insync.replicas} is {@code min(2, replication factor)}: on three brokers or more a write
 * survives the loss of one broker and the topic stays writable while one is down; on a single
 * broker (the embedded one, a laptop) both are 1. A broker default of 1 copy, which is Kafka's,
 * would lose pending tasks with one disk.
 *
 * @param replicationFactor copies of each partition; -1 is the broker's {@code
 *     default.replication.factor}
 * @param minInsyncReplicas copies that must have a write before it is acknowledged; empty is the
 *     broker's {@code min.insync.replicas}
 */
record TopicDurability(int replicationFactor, OptionalInt minInsyncReplicas) {

  /** At most this many copies unless configured: each further one costs disk and traffic. */
  static final int MAX_DEFAULT_REPLICATION = 3;

  /** At most this many acknowledging copies unless configured: one broker may be down. */
  static final int MAX_DEFAULT_MIN_INSYNC = 2;

  TopicDurability {
    requireNonNull(minInsyncReplicas, "minInsyncReplicas cannot be null");
  }

  /**
   * The durability the configuration asks for on a cluster of {@code brokers} brokers.
   *
   * @param config {@code delay.topic.replication.factor} and {@code
   *     delay.topic.min.insync.replicas}, each possibly unset
   * @param brokers the brokers the cluster has now
   * @return the durability
   * @throws ConfigException if the configured {@code min.insync.replicas} exceeds the replication
   *     factor, with which no write could ever be acknowledged
   */
  static TopicDurability of(ServiceConfig config, int brokers) {
    int replication =
        config
            .topicReplicationFactor()
            .orElse(Math.min(MAX_DEFAULT_REPLICATION, Math.max(1, brokers)));
    OptionalInt configured = config.topicMinInsyncReplicas();
    if (replication < 0) {
      return new TopicDurability(replication, configured); // the broker decides both
    }
    if (configured.isPresent() && configured.getAsInt() > replication) {
      throw new ConfigException(
          ServiceConfig.TOPIC_MIN_INSYNC_REPLICAS_CONFIG,
          configured.getAsInt(),
          "at most the replication factor, "
              + replication
              + (config.topicReplicationFactor().isPresent()
                  ? " (" + ServiceConfig.TOPIC_REPLICATION_FACTOR_CONFIG + ")"
                  : " (min(3, " + brokers + " brokers))")
              + "; with more no write to kdelay's topics would ever be acknowledged");
    }
    return new TopicDurability(
        replication,
        OptionalInt.of(configured.orElse(Math.min(MAX_DEFAULT_MIN_INSYNC, replication))));
  }

  /** The topic configs of a topic kdelay creates: {@code min.insync.replicas} if decided here. */
  Map<String, String> topicConfigs() {
    return minInsyncReplicas.isPresent()
        ? Map.of(
            TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG, Integer.toString(minInsyncReplicas.getAsInt()))
        : Map.of();
  }

  /**
   * The configuration with this durability for Kafka Streams' internal topics ({@code
   * replication.factor}, {@code topic.min.insync.replicas}), except where the configuration passes
   * either through itself, which wins as every pass-through Kafka property does.
   */
  ServiceConfig applyToStreams(ServiceConfig config) {
    ServiceConfig applied = config;
    Map<String, Object> passedThrough = config.delay().kafkaProperties();
    if (!passedThrough.containsKey(StreamsConfig.REPLICATION_FACTOR_CONFIG)) {
      applied = applied.with(StreamsConfig.REPLICATION_FACTOR_CONFIG, replicationFactor);
    }
    String minInsync = StreamsConfig.topicPrefix(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG);
    if (minInsyncReplicas.isPresent() && !passedThrough.containsKey(minInsync)) {
      applied = applied.with(minInsync, minInsyncReplicas.getAsInt());
    }
    return applied;
  }
}

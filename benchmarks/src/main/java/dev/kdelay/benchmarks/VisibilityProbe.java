package dev.kdelay.benchmarks;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * Sees records become visible the way a downstream application does: a {@code read_committed}
 * consumer, with {@code fetch.max.wait.ms} small so that the broker answers a fetch as soon as a
 * transaction commits rather than when the wait runs out. One consumer thread per watch.
 */
final class VisibilityProbe {

  /** Settings of the probe's consumer, for the report. */
  static final Map<String, Object> SETTINGS =
      Map.of(
          ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
          ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 5,
          ConsumerConfig.FETCH_MIN_BYTES_CONFIG, 1,
          ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10_000);

  private final String bootstrapServers;

  VisibilityProbe(String bootstrapServers) {
    this.bootstrapServers = bootstrapServers;
  }

  /**
   * Starts watching a topic from its current end (the last stable offset) for the records of one
   * run. Returns once the consumer is positioned, so that nothing sent afterwards is missed.
   *
   * @param topic the topic fired or forwarded records land in
   * @param tag the run's tag: only keys {@code <tag>-<index>} count
   * @param expected how many records the run produces
   */
  Watch watch(String topic, String tag, int expected) {
    Map<String, Object> props = new java.util.HashMap<>(SETTINGS);
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    props.put(ConsumerConfig.CLIENT_ID_CONFIG, "kdelay-bench-probe");
    // The payload is not looked at: do not copy it.
    Deserializer<byte[]> skip = (ignoredTopic, data) -> null;
    KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(props, new ByteArrayDeserializer(), skip);
    List<TopicPartition> partitions =
        consumer.partitionsFor(topic, Duration.ofSeconds(30)).stream()
            .map(info -> new TopicPartition(topic, info.partition()))
            .toList();
    consumer.assign(partitions);
    consumer.seekToEnd(partitions);
    partitions.forEach(consumer::position);
    return new Watch(consumer, new Observation.Builder(tag, expected));
  }
}

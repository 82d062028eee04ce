package dev.kdelay.benchmarks.textbook;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.TopicNameExtractor;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;

/**
 * The textbook delay app: what a team writes in an afternoon with Kafka Streams alone to delay
 * messages, the benchmark's yardstick for the work of delaying. It reads kdelay's schedule requests
 * (key: the schedule id; value: the payload; headers {@code delay-fire-at}, epoch ms, and {@code
 * delay-target-topic}) and nothing else of the contract: no validation, no cancel, no cron.
 *
 * <ul>
 *   <li>One changelogged persistent (RocksDB) key-value store, no cache, keyed by due time then id
 *       ({@link DueOrderKey}), so that its order is due order; one put per request.
 *   <li>A wall-clock punctuator every {@link #PUNCTUATE_INTERVAL} scans each task's store from the
 *       earliest unfired due time up to now, forwards at most {@link #MAX_FIRES_PER_PUNCTUATION}
 *       due entries to their target topics with {@code delay-due-at} and {@code delay-fired-at},
 *       and deletes them.
 * </ul>
 *
 * <p>So one request in makes three records out: the changelog put, the fired record and the
 * changelog tombstone.
 *
 * <pre>{@code
 * Properties props = StreamsTuning.streamsProperties(config);
 * KafkaStreams streams = new KafkaStreams(TextbookDelay.topology("delay-requests"), props);
 * }</pre>
 */
public final class TextbookDelay {

  /** The store of pending requests. */
  public static final String STORE = "textbook-pending";

  /** How often each task looks for due entries, wall-clock time. */
  public static final Duration PUNCTUATE_INTERVAL = Duration.ofMillis(5);

  /** The most entries one punctuation fires, so that the stream thread keeps polling. */
  public static final int MAX_FIRES_PER_PUNCTUATION = 2_000;

  private TextbookDelay() {}

  /**
   * The topology, reading requests from one topic.
   *
   * @param requestsTopic the topic schedule requests arrive on
   * @return a topology for {@code new KafkaStreams(topology, props)}
   * @throws NullPointerException if the topic is null
   */
  public static Topology topology(String requestsTopic) {
    return topology(requestsTopic, Clock.systemUTC());
  }

  /** The topology, with the clock that stamps {@code delay-fired-at}. */
  static Topology topology(String requestsTopic, Clock clock) {
    Objects.requireNonNull(requestsTopic, "requestsTopic cannot be null");
    StoreBuilder<KeyValueStore<Bytes, byte[]>> store =
        Stores.keyValueStoreBuilder(
                Stores.persistentKeyValueStore(STORE), Serdes.Bytes(), Serdes.ByteArray())
            .withLoggingEnabled(Map.of())
            .withCachingDisabled();
    Serializer<RoutedKey> id = (topic, key) -> key.id();
    TopicNameExtractor<RoutedKey, byte[]> target = (key, value, context) -> key.topic();
    ByteArrayDeserializer bytesIn = new ByteArrayDeserializer();
    return new Topology()
        .addSource("requests", bytesIn, bytesIn, requestsTopic)
        .addProcessor("delay", () -> new TextbookDelayProcessor(clock), "requests")
        .addStateStore(store, "delay")
        .addSink("fired", target, id, new ByteArraySerializer(), "delay");
  }
}

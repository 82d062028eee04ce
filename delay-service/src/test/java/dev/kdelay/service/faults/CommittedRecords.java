package dev.kdelay.service.faults;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Reads topics from their beginning as a {@code read_committed} consumer, on a background thread,
 * noting when each record arrived: what a consumer of fired records sees, and when. Aborted
 * transactions never show here; a record that does show was committed.
 *
 * <p>{@link #finish} stops the thread and reads on up to the last stable offset of every partition,
 * so that a duplicate committed at the last moment cannot hide behind a count reached earlier.
 */
final class CommittedRecords implements AutoCloseable {

  /** A record and the wall-clock time, epoch ms, at which this reader received it. */
  record Received(ConsumerRecord<byte[], byte[]> record, long receivedAtMs) {

    /** The last value of a header as UTF-8 text, or null. */
    String header(String name) {
      Header header = record.headers().lastHeader(name);
      return header == null || header.value() == null
          ? null
          : new String(header.value(), StandardCharsets.UTF_8);
    }

    long headerMs(String name) {
      String value = header(name);
      return value == null ? Long.MIN_VALUE : Long.parseLong(value);
    }

    String value() {
      return record.value() == null ? null : new String(record.value(), StandardCharsets.UTF_8);
    }
  }

  private final KafkaConsumer<byte[], byte[]> consumer;
  private final List<Received> received = new ArrayList<>();
  private final Set<String> seenKeys = ConcurrentHashMap.newKeySet();
  private final String indexHeader;
  private final Thread reader;
  private volatile boolean stopping;
  private volatile RuntimeException failure;

  /**
   * Starts reading.
   *
   * @param indexHeader a header whose values {@link #containsAll} can be asked about
   */
  CommittedRecords(String bootstrapServers, Collection<String> topics, String indexHeader) {
    this(bootstrapServers, topics, indexHeader, "read_committed");
  }

  /**
   * Starts reading with the given isolation level: {@code read_uncommitted} shows what a consumer
   * that ignores transactions would see, aborted fires included.
   */
  CommittedRecords(
      String bootstrapServers, Collection<String> topics, String indexHeader, String isolation) {
    this.indexHeader = indexHeader;
    this.consumer =
        new KafkaConsumer<>(
            Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrapServers,
                ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                isolation,
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG,
                5_000,
                // Measure kdelay, not the fetch wait: a fetch returns within 10 ms.
                ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG,
                10,
                // Nor this reader's own wait on a broker that froze or vanished (no connection
                // reset): kdelay's clients give up on it after 10 s, and so does the reader.
                ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG,
                10_000),
            new ByteArrayDeserializer(),
            new ByteArrayDeserializer());
    List<TopicPartition> partitions = new ArrayList<>();
    for (String topic : topics) {
      // For a moment after its creation a topic can be unknown to the broker asked, and
      // partitionsFor then answers an empty list without retrying (Kafka 4.3): a reader of no
      // partitions would see nothing and say nothing. On the compose cluster 5-8 fresh readers in
      // 100 got none.
      Await.value(
              "the partitions of " + topic,
              Duration.ofSeconds(30),
              () -> Optional.of(consumer.partitionsFor(topic)).filter(found -> !found.isEmpty()))
          .forEach(info -> partitions.add(new TopicPartition(topic, info.partition())));
    }
    consumer.assign(partitions);
    consumer.seekToBeginning(partitions);
    this.reader = new Thread(this::readUntilStopped, "committed-records");
    reader.setDaemon(true);
    reader.start();
  }

  private void readUntilStopped() {
    try {
      while (!stopping) {
        pollOnce();
      }
    } catch (RuntimeException e) {
      failure = e;
    }
  }

  private void pollOnce() {
    for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(50))) {
      Received arrived = new Received(record, System.currentTimeMillis());
      synchronized (received) {
        received.add(arrived);
      }
      String indexed = arrived.header(indexHeader);
      if (indexed != null) {
        seenKeys.add(indexed);
      }
    }
  }

  /** Whether records with every one of these index header values have arrived. */
  boolean containsAll(Collection<String> keys) {
    checkHealthy();
    return seenKeys.containsAll(keys);
  }

  /** Whether a record with this index header value has arrived. */
  boolean contains(String key) {
    return seenKeys.contains(key);
  }

  /** Those of these index header values no record has arrived with yet. */
  Set<String> missing(Collection<String> keys) {
    checkHealthy();
    Set<String> missing = new java.util.TreeSet<>(keys);
    missing.removeAll(seenKeys);
    return missing;
  }

  int size() {
    synchronized (received) {
      return received.size();
    }
  }

  /** What has arrived so far. */
  List<Received> snapshot() {
    checkHealthy();
    synchronized (received) {
      return List.copyOf(received);
    }
  }

  /** The earliest-arrived record that matches, if any has arrived. */
  Optional<Received> first(Predicate<Received> matching) {
    return snapshot().stream().filter(matching).findFirst();
  }

  /**
   * Stops the background thread and reads on until every partition's position has reached its last
   * stable offset as of now.
   *
   * @return everything received
   */
  List<Received> finish(Duration timeout) throws InterruptedException {
    stopping = true;
    reader.join(Await.scaled(Duration.ofSeconds(30)).toMillis());
    checkHealthy();
    Map<TopicPartition, Long> ends = consumer.endOffsets(consumer.assignment());
    Await.until(
        "read_committed positions to reach " + ends,
        timeout,
        () -> {
          pollOnce();
          return ends.entrySet().stream()
              .allMatch(end -> consumer.position(end.getKey()) >= end.getValue());
        });
    synchronized (received) {
      return List.copyOf(received);
    }
  }

  private void checkHealthy() {
    if (failure != null) {
      throw new IllegalStateException("the read_committed reader failed", failure);
    }
  }

  @Override
  public void close() throws InterruptedException {
    stopping = true;
    reader.join(Await.scaled(Duration.ofSeconds(30)).toMillis());
    consumer.close();
  }
}

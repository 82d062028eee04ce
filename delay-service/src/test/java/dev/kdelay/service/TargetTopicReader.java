package dev.kdelay.service;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads a target topic from its beginning as a {@code read_committed} consumer, that is as a
 * consumer of fired records sees them, noting when each record was received.
 */
public final class TargetTopicReader implements AutoCloseable {

  /** A record and the wall-clock time, epoch milliseconds, the consumer received it. */
  public record Received(ConsumerRecord<String, String> record, long receivedAtMs) {}

  private final KafkaConsumer<String, String> consumer;
  private final List<Received> received = new ArrayList<>();

  public TargetTopicReader(String bootstrapServers, String topic) {
    consumer =
        new KafkaConsumer<>(
            Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrapServers,
                ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                "read_committed",
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG,
                2_000,
                // Measure kdelay, not the fetch wait: return as soon as records are committed.
                ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG,
                5),
            new StringDeserializer(),
            new StringDeserializer());
    List<TopicPartition> partitions =
        consumer.partitionsFor(topic).stream()
            .map(info -> new TopicPartition(topic, info.partition()))
            .toList();
    consumer.assign(partitions);
    consumer.seekToBeginning(partitions);
  }

  /**
   * Polls until the records received so far satisfy a condition.
   *
   * @return everything received so far
   * @throws AssertionError if the condition does not hold within the timeout
   */
  public List<Received> pollUntil(Predicate<List<Received>> condition, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.test(received)) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "condition not met within " + timeout + "; received " + received.size() + " records");
      }
      for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(20))) {
        received.add(new Received(record, System.currentTimeMillis()));
      }
    }
    return received;
  }

  /**
   * Polls until every committed record at this moment has been received, so that a duplicate
   * already written cannot hide behind a count that was reached.
   *
   * @return everything received so far
   */
  public List<Received> drainCommitted(Duration timeout) {
    // A read_committed consumer's end offsets are the last stable offsets.
    Map<TopicPartition, Long> ends = consumer.endOffsets(consumer.assignment());
    return pollUntil(
        received ->
            ends.entrySet().stream()
                .allMatch(end -> consumer.position(end.getKey()) >= end.getValue()),
        timeout);
  }

  @Override
  public void close() {
    consumer.close();
  }
}

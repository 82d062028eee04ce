package dev.kdelay.benchmarks;

import dev.kdelay.schemas.DelayHeaders;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The load generator: writes schedule requests (key {@code <tag>-<index>}, a {@value
 * #PAYLOAD_BYTES}-byte payload, headers {@code delay-target-topic} and {@code delay-fire-at}), as
 * fast as the producer goes or paced at a rate. The pass-through ceiling gets the very same
 * records, so both applications move the same bytes.
 *
 * <p>One producer thread with batching keeps the benchmark's own CPU use low. Not thread-safe.
 */
final class RequestProducer implements AutoCloseable {

  /** Payload size of every request. */
  static final int PAYLOAD_BYTES = 100;

  /** Settings of the load generator's producer, for the report. */
  static final Map<String, Object> SETTINGS =
      Map.of(
          ProducerConfig.ACKS_CONFIG,
          "all",
          ProducerConfig.LINGER_MS_CONFIG,
          5,
          ProducerConfig.BATCH_SIZE_CONFIG,
          128 * 1024,
          ProducerConfig.BUFFER_MEMORY_CONFIG,
          64L * 1024 * 1024,
          ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
          true);

  /** Chooses the due time of each request. */
  @FunctionalInterface
  interface DueTimes {
    /**
     * The due time of a request.
     *
     * @param index the request's index in its run
     * @param sendMs when it is sent
     */
    long dueMs(int index, long sendMs);
  }

  /**
   * What a send achieved.
   *
   * @param firstSendMs when the first request was handed to the producer
   * @param lastSendMs when the last one was acknowledged
   * @param count how many were sent
   */
  record Sent(long firstSendMs, long lastSendMs, int count) {}

  private static final int CHUNK = 1000;

  private final Producer<byte[], byte[]> producer;
  private final byte[] payload = new byte[PAYLOAD_BYTES];

  RequestProducer(String bootstrapServers) {
    Map<String, Object> props = new java.util.HashMap<>(SETTINGS);
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    props.put(ProducerConfig.CLIENT_ID_CONFIG, "kdelay-bench-load");
    this.producer =
        new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    new Random(42).nextBytes(payload);
  }

  /**
   * Sends {@code count} requests and waits until all are acknowledged.
   *
   * @param topic the requests (or pass-through input) topic
   * @param target the target topic the requests name
   * @param tag the run's tag, the prefix of every key
   * @param count how many
   * @param due the due time of each
   * @param perSecond the rate, or 0 for as fast as the producer goes
   * @throws IllegalStateException if a send fails
   */
  Sent send(String topic, String target, String tag, int count, DueTimes due, double perSecond) {
    AtomicReference<Exception> failure = new AtomicReference<>();
    byte[] targetBytes = target.getBytes(StandardCharsets.UTF_8);
    long startNanos = System.nanoTime();
    long firstSendMs = System.currentTimeMillis();
    int index = 0;
    while (index < count) {
      // Chunks of at most CHUNK, so that send-time-relative due times follow the clock.
      int allowed =
          Math.min(index + CHUNK, perSecond <= 0 ? count : allowedBy(startNanos, perSecond, count));
      long nowMs = System.currentTimeMillis();
      for (; index < allowed; index++) {
        RecordHeaders headers = new RecordHeaders();
        headers.add(DelayHeaders.TARGET_TOPIC, targetBytes);
        headers.add(DelayHeaders.FIRE_AT, ascii(Long.toString(due.dueMs(index, nowMs))));
        producer.send(
            new ProducerRecord<>(topic, null, null, ascii(tag + "-" + index), payload, headers),
            (metadata, e) -> {
              if (e != null) {
                failure.compareAndSet(null, e);
              }
            });
      }
      if (index < count && perSecond > 0) {
        LockSupport.parkNanos(1_000_000);
      }
    }
    producer.flush();
    if (failure.get() != null) {
      throw new IllegalStateException("sending requests failed", failure.get());
    }
    return new Sent(firstSendMs, System.currentTimeMillis(), count);
  }

  /** How many requests a paced run may have sent by now: one more than the rate allows so far. */
  private static int allowedBy(long startNanos, double perSecond, int count) {
    double elapsedSeconds = (System.nanoTime() - startNanos) / 1e9;
    return (int) Math.min(count, (long) (elapsedSeconds * perSecond) + 1);
  }

  static byte[] ascii(String text) {
    return text.getBytes(StandardCharsets.US_ASCII);
  }

  @Override
  public void close() {
    producer.close();
  }
}

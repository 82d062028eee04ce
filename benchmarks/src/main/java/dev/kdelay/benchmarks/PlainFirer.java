package dev.kdelay.benchmarks;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.topology.StreamsTuning;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.StreamsConfig;

/**
 * The first-fire section's yardstick: the same fires written by a plain transactional producer,
 * with none of kdelay around it. At the same rate it writes the records kdelay would fire (key
 * {@code <tag>-<index>}, a {@value RequestProducer#PAYLOAD_BYTES}-byte payload, {@code
 * delay-due-at} and {@code delay-fired-at}), each when it is due, and commits as kdelay does after
 * firing: as soon as a record is written, but no sooner than {@link #COMMIT_GAP_MS} after the last
 * commit ended ({@code delay.fire.commit.interval.ms}). Its producer has the settings kdelay's
 * stream threads give theirs (from {@link StreamsTuning}), so that what it meets on a topic nobody
 * has written to is what the broker gives any client there, and the difference to kdelay's run is
 * kdelay's own.
 *
 * <p>Runs in the benchmark's JVM, on the calling thread. Not thread-safe.
 */
final class PlainFirer implements AutoCloseable {

  /** kdelay's default {@code delay.fire.commit.interval.ms}. */
  static final long COMMIT_GAP_MS = 5;

  private final KafkaProducer<byte[], byte[]> producer;
  private final byte[] payload = new byte[RequestProducer.PAYLOAD_BYTES];

  PlainFirer(String bootstrapServers, Map<String, String> overrides) {
    ServiceConfig config =
        AppKind.config(bootstrapServers, "bench-plain", "unused", "unused", overrides);
    Map<String, Object> settings =
        new StreamsConfig(StreamsTuning.streamsProperties(config.delay()))
            .getProducerConfigs("bench-plain-firer");
    settings.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "bench-plain-firer-" + UUID.randomUUID());
    settings.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    this.producer =
        new KafkaProducer<>(settings, new ByteArraySerializer(), new ByteArraySerializer());
    producer.initTransactions();
  }

  /**
   * Writes {@code count} records to {@code topic}, the first due {@code leadMs} from now and the
   * rest at {@code rate} a second after it, each when it is due.
   *
   * @return the commits made and the time they took, in ns
   */
  Commits fire(String topic, String tag, int count, int rate, long leadMs) {
    long firstDue = System.currentTimeMillis() + leadMs;
    long lastCommitEnd = 0;
    boolean open = false;
    int commits = 0;
    long commitNanos = 0;
    int next = 0;
    while (next < count || open) {
      long now = System.currentTimeMillis();
      while (next < count && dueMs(firstDue, next, rate) <= now) {
        if (!open) {
          producer.beginTransaction();
          open = true;
        }
        producer.send(record(topic, tag, next, dueMs(firstDue, next, rate), now));
        next++;
      }
      if (open && now - lastCommitEnd >= COMMIT_GAP_MS) {
        long started = System.nanoTime();
        producer.commitTransaction();
        commitNanos += System.nanoTime() - started;
        commits++;
        open = false;
        lastCommitEnd = System.currentTimeMillis();
        continue;
      }
      long wakeMs =
          Math.min(
              next < count ? dueMs(firstDue, next, rate) : Long.MAX_VALUE,
              open ? lastCommitEnd + COMMIT_GAP_MS : Long.MAX_VALUE);
      long waitMs = wakeMs - System.currentTimeMillis();
      if (waitMs > 0) {
        LockSupport.parkNanos(Duration.ofMillis(waitMs).toNanos());
      }
    }
    return new Commits(commits, commitNanos);
  }

  /**
   * What a run's transactions cost.
   *
   * @param count how many were committed
   * @param nanos the time the commits took, flush included
   */
  record Commits(int count, long nanos) {}

  private static long dueMs(long firstDue, int index, int rate) {
    return firstDue + (long) (index * 1000.0 / rate);
  }

  private ProducerRecord<byte[], byte[]> record(
      String topic, String tag, int index, long dueMs, long firedMs) {
    RecordHeaders headers = new RecordHeaders();
    headers.add(DelayHeaders.DUE_AT, Long.toString(dueMs).getBytes(StandardCharsets.US_ASCII));
    headers.add(DelayHeaders.FIRED_AT, Long.toString(firedMs).getBytes(StandardCharsets.US_ASCII));
    return new ProducerRecord<>(
        topic,
        null,
        firedMs,
        (tag + "-" + index).getBytes(StandardCharsets.US_ASCII),
        payload,
        headers);
  }

  @Override
  public void close() {
    producer.close(Duration.ofSeconds(10));
  }
}

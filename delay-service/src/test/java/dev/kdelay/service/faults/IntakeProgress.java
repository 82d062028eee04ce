package dev.kdelay.service.faults;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Samples, every {@value #INTERVAL_MS} ms, the offsets kdelay's consumer group has committed on the
 * requests topic: under exactly-once a request is applied in the same transaction that commits its
 * offset, so the samples bound when a request took effect.
 *
 * <p>This is what makes the cancel check sound under any processing lag: a cancelled task may
 * legitimately fire if it came due before its cancel was applied, but never after the cancel's
 * offset was committed.
 */
final class IntakeProgress implements AutoCloseable {

  static final long INTERVAL_MS = 100;

  private record Sample(long atMs, Map<Integer, Long> committed) {}

  private final Admin admin;
  private final String group;
  private final String topic;
  private final List<Sample> samples = new ArrayList<>();
  private final Thread sampler;
  private volatile boolean stopping;

  IntakeProgress(Admin admin, String group, String topic) {
    this.admin = admin;
    this.group = group;
    this.topic = topic;
    this.sampler = new Thread(this::sampleUntilStopped, "intake-progress");
    sampler.setDaemon(true);
    sampler.start();
  }

  private void sampleUntilStopped() {
    while (!stopping) {
      long started = System.currentTimeMillis();
      try {
        Map<TopicPartition, OffsetAndMetadata> offsets =
            admin
                .listConsumerGroupOffsets(group)
                .partitionsToOffsetAndMetadata()
                .get(5, TimeUnit.SECONDS);
        Map<Integer, Long> committed = new TreeMap<>();
        offsets.forEach(
            (partition, offset) -> {
              if (partition.topic().equals(topic) && offset != null) {
                committed.put(partition.partition(), offset.offset());
              }
            });
        synchronized (samples) {
          samples.add(new Sample(started, committed));
        }
      } catch (Exception e) {
        // The broker may be restarting, or the group not exist yet: sample again.
      }
      Await.pause(Math.max(1, INTERVAL_MS - (System.currentTimeMillis() - started)));
    }
  }

  /**
   * The earliest sampled time at which the group had committed past the record at this offset: the
   * request had taken effect by then.
   */
  OptionalLong appliedBy(int partition, long offset) {
    synchronized (samples) {
      return samples.stream()
          .filter(sample -> sample.committed().getOrDefault(partition, -1L) > offset)
          .mapToLong(Sample::atMs)
          .findFirst();
    }
  }

  /** The latest sampled time at which the record at this offset had not yet been committed. */
  OptionalLong notAppliedAt(int partition, long offset) {
    synchronized (samples) {
      return samples.stream()
          .filter(sample -> sample.committed().getOrDefault(partition, -1L) <= offset)
          .mapToLong(Sample::atMs)
          .max();
    }
  }

  @Override
  public void close() throws InterruptedException {
    stopping = true;
    sampler.join(Duration.ofSeconds(10).toMillis());
  }
}

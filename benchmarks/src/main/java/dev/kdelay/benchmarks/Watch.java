package dev.kdelay.benchmarks;

import java.time.Duration;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;

/**
 * One run's consumer, polling on a thread of its own until every expected record is visible or the
 * watch is closed.
 */
final class Watch implements AutoCloseable {

  private static final Duration POLL = Duration.ofMillis(100);

  private final Consumer<byte[], byte[]> consumer;
  private final Observation.Builder observed;
  private final Thread thread;
  private volatile boolean stopped;
  private volatile RuntimeException failure;

  Watch(Consumer<byte[], byte[]> consumer, Observation.Builder observed) {
    this.consumer = consumer;
    this.observed = observed;
    this.thread = new Thread(this::pollUntilComplete, "kdelay-bench-probe");
    thread.setDaemon(true);
    thread.start();
  }

  private void pollUntilComplete() {
    try {
      while (!stopped && !observed.complete()) {
        ConsumerRecords<byte[], byte[]> records = consumer.poll(POLL);
        // Records of one poll became visible together; one clock read for all of them.
        long visibleMs = System.currentTimeMillis();
        for (ConsumerRecord<byte[], byte[]> record : records) {
          observed.add(record, visibleMs);
        }
      }
    } catch (RuntimeException e) {
      failure = e;
    } finally {
      consumer.close(Duration.ZERO);
    }
  }

  /**
   * Waits until every expected record is visible, or the timeout passes.
   *
   * @return what was seen; {@link Observation#complete()} tells whether it is everything
   * @throws IllegalStateException if the consumer failed
   */
  Observation await(Duration timeout) {
    try {
      thread.join(timeout.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    close();
    if (failure != null) {
      throw new IllegalStateException("the visibility probe failed", failure);
    }
    return observed.build();
  }

  /** Stops polling. */
  @Override
  public void close() {
    stopped = true;
    try {
      thread.join(POLL.toMillis() * 20);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

package dev.kdelay.service.limits;

import dev.kdelay.schemas.LogValues;
import dev.kdelay.topology.FireRateLimits;
import dev.kdelay.topology.FireRateLimits.Limit;
import dev.kdelay.topology.FireRateLimitsInEffect;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The fire-rate limits in effect on this instance: {@code delay.fire.rate.limits}, overlaid topic
 * by topic by what the limits topic holds ({@code delay.fire.rate.limits.topic}), so that an
 * operator changes a limit on every instance at once, without a restart ({@code kdelay limits}).
 *
 * <p>{@link LimitsTopic} says what the topic's records hold; one that cannot be read is logged and
 * ignored.
 *
 * <p>A thread of its own reads the topic from the beginning and follows it, and puts what it read
 * in effect ({@link #inEffect}), which the stream threads read from memory. If the topic cannot be
 * read, the limits last read stay in effect and the thread tries again.
 */
public final class FireRateLimitsFeed implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(FireRateLimitsFeed.class);

  private static final Duration POLL = Duration.ofMillis(500);

  /** How long a read waits for the topic's partitions: Kafka's {@code default.api.timeout.ms}. */
  private static final Duration LOOKUP_TIMEOUT = Duration.ofMinutes(1);

  private static final long RETRY_MS = 5_000;
  private static final long STARTING_RETRY_MS = 200;

  private final FireRateLimits configured;
  private final String topic;
  private final Map<String, Object> consumerProperties;
  private final Map<String, Optional<Limit>> overrides = new HashMap<>();
  private final CountDownLatch caughtUp = new CountDownLatch(1);
  private final CountDownLatch stopped = new CountDownLatch(1);
  private final FireRateLimitsInEffect current;
  private volatile KafkaConsumer<byte[], byte[]> consumer;
  private volatile boolean closing;
  private Thread thread;

  /**
   * @param configured {@code delay.fire.rate.limits}
   * @param topic the limits topic
   * @param consumerProperties the connection's properties (bootstrap servers, security)
   */
  public FireRateLimitsFeed(
      FireRateLimits configured, String topic, Map<String, Object> consumerProperties) {
    this.configured = configured;
    this.current = new FireRateLimitsInEffect(configured);
    this.topic = topic;
    this.consumerProperties = new HashMap<>(consumerProperties);
    this.consumerProperties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    this.consumerProperties.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    this.consumerProperties.remove(ConsumerConfig.GROUP_ID_CONFIG);
  }

  /** The limits in effect, as the topology reads them: what this feed read last. */
  public FireRateLimitsInEffect inEffect() {
    return current;
  }

  /** Starts following the limits topic, on a thread of its own. */
  public void start() {
    thread = new Thread(this::follow, "kdelay-fire-rate-limits");
    thread.setDaemon(true);
    thread.start();
  }

  /**
   * Waits until what the limits topic held at start has been read, at most {@code timeout}: after
   * that the instance goes on with the limits read so far, and says so.
   */
  public void awaitRead(Duration timeout) throws InterruptedException {
    if (!caughtUp.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      log.warn(
          "event=fire-rate-limits-not-read topic={} waited_ms={} response=start-with-limits={}",
          topic,
          timeout.toMillis(),
          LogValues.quote(current.get().toString()));
    }
  }

  private void follow() {
    try {
      while (!closing) {
        try {
          read();
        } catch (WakeupException e) {
          return; // closing
        } catch (RuntimeException e) {
          // Refused: the start need not wait for a right it does not have. Anything else while
          // starting (a topic just created and not yet in this client's metadata) is tried again
          // soon, and the start waits for it, up to its timeout.
          boolean refused = e instanceof AuthorizationException;
          boolean starting = caughtUp.getCount() > 0 && !refused;
          long retryMs = starting ? STARTING_RETRY_MS : RETRY_MS;
          if (starting) {
            log.info(
                "event=fire-rate-limits-not-yet-readable topic={} retry_ms={} problem={}",
                topic,
                retryMs,
                LogValues.quote(String.valueOf(e)));
          } else {
            log.error(
                "event=fire-rate-limits-unreadable topic={} response=keep-limits={} retry_ms={}"
                    + " problem={}",
                topic,
                LogValues.quote(current.get().toString()),
                retryMs,
                LogValues.quote(String.valueOf(e)));
            caughtUp.countDown();
          }
          if (stopped.await(retryMs, TimeUnit.MILLISECONDS)) {
            return;
          }
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Reads the topic from its beginning and follows it until closed. */
  private void read() {
    try (KafkaConsumer<byte[], byte[]> reader =
        new KafkaConsumer<>(
            consumerProperties, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      consumer = reader;
      if (closing) {
        return;
      }
      List<TopicPartition> partitions = LimitsTopic.fromBeginning(reader, topic, LOOKUP_TIMEOUT);
      if (partitions.isEmpty()) {
        throw new IllegalStateException("the topic does not exist");
      }
      Map<TopicPartition, Long> ends = reader.endOffsets(partitions);
      overrides.clear();
      while (!closing) {
        boolean changed = false;
        for (ConsumerRecord<byte[], byte[]> record : reader.poll(POLL)) {
          changed |= apply(record);
        }
        if (changed || caughtUp.getCount() > 0) {
          publish(changed);
        }
        if (caughtUp.getCount() > 0
            && partitions.stream().allMatch(p -> reader.position(p) >= ends.get(p))) {
          caughtUp.countDown();
        }
      }
    } finally {
      consumer = null;
    }
  }

  /** Takes one record of the topic in; whether it changed an override. */
  private boolean apply(ConsumerRecord<byte[], byte[]> record) {
    LimitsTopic.Change change = LimitsTopic.read(record);
    if (change instanceof LimitsTopic.Unreadable unreadable) {
      log.warn(
          "event=fire-rate-limit-ignored topic={} offset={} target={} value={} problem={}",
          topic,
          record.offset(),
          LogValues.quote(String.valueOf(unreadable.target())),
          LogValues.quote(String.valueOf(unreadable.value())),
          LogValues.quote(unreadable.problem()));
    }
    return change.applyTo(overrides);
  }

  private void publish(boolean changed) {
    FireRateLimits next = configured.overriddenBy(Map.copyOf(overrides));
    if (changed && !next.equals(current.get())) {
      log.info("event=fire-rate-limits limits={}", LogValues.quote(next.toString()));
    }
    current.set(next);
  }

  @Override
  public void close() throws InterruptedException {
    closing = true;
    stopped.countDown();
    KafkaConsumer<byte[], byte[]> reading = consumer;
    if (reading != null) {
      try {
        reading.wakeup();
      } catch (IllegalStateException closedMeanwhile) {
        // the thread closed it after reading the flag: nothing to wake
      }
    }
    if (thread != null) {
      thread.join(10_000);
    }
  }
}

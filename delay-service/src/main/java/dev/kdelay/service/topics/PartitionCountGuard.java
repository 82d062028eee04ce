package dev.kdelay.service.topics;

import dev.kdelay.schemas.LogValues;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.utils.ThreadUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches, while an instance runs, that the request topics (the shared one and each tenant's) keep
 * the partition count the instance started with, which is the count its stores were made for.
 *
 * <p>A schedule belongs to partition {@code murmur2(id) mod count}. Partitions added to the
 * requests topic by hand ({@code kafka-topics --alter --partitions}) send producers' requests for
 * some ids to the new partitions, where no store holds them. Kafka Streams then cannot assign the
 * new partitions (the requests and reroute topics must have the same count) and the group leader's
 * stream thread fails at every rebalance. Checked whenever a rebalance begins (Kafka's clients see
 * a new count within {@code metadata.max.age.ms}, 5 minutes by default), whenever a stream thread
 * fails, and every {@link #EVERY}: a changed count stops the instance with the message that says
 * what happened and where the supported way is; what is stored stays in the changelogs, and
 * requests on the new partitions stay unread.
 */
public final class PartitionCountGuard implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(PartitionCountGuard.class);

  /** How often it looks besides at rebalances: one description of one topic per instance. */
  static final Duration EVERY = Duration.ofSeconds(30);

  private final Admin admin;
  private final List<String> requestsTopics;
  private final int expected;
  private final Consumer<String> onChanged;
  private final Duration timeout;
  private final ScheduledExecutorService executor;
  private final AtomicBoolean pending = new AtomicBoolean();
  private final AtomicBoolean reported = new AtomicBoolean();

  /**
   * @param admin the client that describes the topic; not closed here
   * @param requestsTopics the request topics, the shared one first
   * @param expected the partition count the instance started with
   * @param onChanged told, once, the message for a changed count
   * @param timeout how long a description may take
   */
  public PartitionCountGuard(
      Admin admin,
      List<String> requestsTopics,
      int expected,
      Consumer<String> onChanged,
      Duration timeout) {
    this.admin = admin;
    this.requestsTopics = List.copyOf(requestsTopics);
    this.expected = expected;
    this.onChanged = onChanged;
    this.timeout = timeout;
    this.executor =
        Executors.newSingleThreadScheduledExecutor(
            ThreadUtils.createThreadFactory("kdelay-partition-count", true));
    executor.scheduleWithFixedDelay(
        this::checkSoon, EVERY.toMillis(), EVERY.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * What a start or a running instance says when the requests topic's count is not the one the
   * stores were made for.
   */
  static String changedMessage(String requestsTopic, int now, int stored, String storedIn) {
    return String.format(
        "The requests topic %s has %d partitions, but kdelay's schedules are stored for %d (%s)."
            + " A schedule belongs to partition murmur2(id) mod the count: with another count its"
            + " cancels and changes would reach a partition that does not hold it, so kdelay does"
            + " not run; nothing pending is lost while it waits. Kafka cannot take partitions away"
            + " again: move the schedules, and the requests sent meanwhile, to a new deployment"
            + " whose requests topic has the count you need, with kdelay move (see 'Changing the"
            + " partition count' in docs/operations.md).",
        requestsTopic, now, stored, storedIn);
  }

  /** Checks on a thread of its own; returns at once. Calls while one waits are folded into it. */
  public void checkSoon() {
    if (!pending.compareAndSet(false, true)) {
      return;
    }
    try {
      executor.execute(
          () -> {
            pending.set(false);
            try {
              checkNow().ifPresent(this::report);
            } catch (RuntimeException e) {
              log.warn("event=partition-count-check-failed error={}", LogValues.quote(e));
            }
          });
    } catch (RejectedExecutionException e) {
      // Closed: nothing more to check.
    }
  }

  private void report(String message) {
    if (reported.compareAndSet(false, true)) {
      onChanged.accept(message);
    }
  }

  /**
   * The message for a changed count, or empty while the count is the one the instance started with.
   *
   * @throws IllegalStateException if Kafka does not describe the topic within the timeout
   */
  public Optional<String> checkNow() {
    Map<String, TopicDescription> described;
    try {
      described =
          admin
              .describeTopics(requestsTopics)
              .allTopicNames()
              .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("could not describe " + requestsTopics + ": " + e, e);
    }
    for (String topic : requestsTopics) {
      int now = described.get(topic).partitions().size();
      if (now != expected) {
        return Optional.of(
            changedMessage(topic, now, expected, "the count this instance started with"));
      }
    }
    return Optional.empty();
  }

  @Override
  public void close() {
    executor.shutdownNow();
  }
}

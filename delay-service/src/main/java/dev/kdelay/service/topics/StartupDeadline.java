package dev.kdelay.service.topics;

import dev.kdelay.service.DelayServiceException;
import dev.kdelay.service.config.ServiceConfig;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.TimeoutException;

/**
 * The time one start may spend getting its topics ready ({@value
 * ServiceConfig#TOPIC_READY_TIMEOUT_CONFIG}), and the admin requests made within it.
 *
 * <p>Several instances of one deployment start at the same moment, so at start a topic is often
 * being created by another instance and not yet in the metadata of the broker that answers: an
 * unknown topic, a partition without a leader or a request that times out is the normal course of a
 * start, not a failure. Such transient errors (Kafka's {@link RetriableException}s) are retried
 * with exponential back-off until the deadline; any other error is thrown at once.
 *
 * <pre>{@code
 * StartupDeadline deadline = StartupDeadline.after(config.topicReadyTimeout());
 * Collection<Node> brokers = deadline.retry("describe the cluster", () -> admin.describeCluster().nodes());
 * }</pre>
 */
final class StartupDeadline {

  private static final long FIRST_BACKOFF_MS = 10;
  private static final long MAX_BACKOFF_MS = 500;

  private final Duration timeout;
  private final long deadlineNanos;

  private StartupDeadline(Duration timeout) {
    this.timeout = timeout;
    this.deadlineNanos = System.nanoTime() + timeout.toNanos();
  }

  /** A deadline {@code timeout} from now. */
  static StartupDeadline after(Duration timeout) {
    return new StartupDeadline(timeout);
  }

  /**
   * Sends a request until it is answered without a transient error.
   *
   * @param what what the request does, for the message if the deadline passes: "describe the
   *     cluster"
   * @param request sends the request
   * @return the answer
   * @throws DelayServiceException if the deadline passes first
   * @throws org.apache.kafka.common.KafkaException if Kafka answers with an error that is not
   *     transient, such as a missing permission
   */
  <T> T retry(String what, Supplier<? extends Future<T>> request) {
    for (int attempt = 0; ; attempt++) {
      try {
        return await(request.get());
      } catch (RetriableException e) {
        backOff(attempt, () -> "Could not " + what + ": " + e);
      }
    }
  }

  /**
   * Waits for one answer, at most until the deadline.
   *
   * @throws RetriableException if Kafka answered with a transient error, or did not answer in time
   *     ({@link TimeoutException})
   * @throws org.apache.kafka.common.KafkaException if Kafka answered with another error
   */
  <T> T await(Future<T> answer) {
    try {
      return answer.get(Math.max(1, remainingNanos()), TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException cause) {
        throw cause;
      }
      throw new DelayServiceException("Kafka admin request failed: " + e.getCause(), e);
    } catch (java.util.concurrent.TimeoutException e) {
      throw new TimeoutException("Kafka did not answer in time", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new DelayServiceException("Interrupted while setting up topics", e);
    }
  }

  /**
   * Pauses before another try: 10 ms after the first, twice as long after each further one, at most
   * half a second.
   *
   * @param attempt how many tries came before this one's, from 0
   * @param notReady what is not ready yet and what was seen, for the message if the deadline
   *     passes: "Topic 'delay-dlq' is not usable yet: partitions [2] have no leader"
   * @throws DelayServiceException naming what was not ready and the setting that bounds the wait,
   *     if the deadline has passed
   */
  void backOff(int attempt, Supplier<String> notReady) {
    long remainingMs = TimeUnit.NANOSECONDS.toMillis(remainingNanos());
    if (remainingMs <= 0) {
      throw new DelayServiceException(
          String.format(
              "%s (waited %d ms). Check that the brokers are up and reachable, and that"
                  + " security.protocol and the SASL/TLS settings match their listener (a client"
                  + " without them gets no error from a SASL listener, only closed connections);"
                  + " or allow a start longer with %s (now %d).",
              notReady.get(),
              timeout.toMillis(),
              ServiceConfig.TOPIC_READY_TIMEOUT_CONFIG,
              timeout.toMillis()));
    }
    try {
      long backoffMs = FIRST_BACKOFF_MS << Math.min(attempt, 10);
      Thread.sleep(Math.min(Math.min(backoffMs, MAX_BACKOFF_MS), remainingMs));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new DelayServiceException("Interrupted while waiting for topics", e);
    }
  }

  private long remainingNanos() {
    return deadlineNanos - System.nanoTime();
  }
}

package dev.kdelay.service.failover;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.common.KafkaFuture;

/** Waits for the answers of Kafka's admin client on a background thread of kdelay's own. */
final class AdminCalls {

  private AdminCalls() {}

  /**
   * The answer, within the timeout.
   *
   * @throws RuntimeException Kafka's own error for the call, as it is (so callers can catch, say,
   *     {@code UnknownMemberIdException}); {@link IllegalStateException} when interrupted (the
   *     interrupt is kept) or when Kafka did not answer in time
   */
  static <T> T await(KafkaFuture<T> future, Duration timeout) {
    try {
      return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException cause) {
        throw cause;
      }
      throw new IllegalStateException(e.getCause());
    } catch (TimeoutException e) {
      throw new IllegalStateException("Kafka did not answer within " + timeout.toMillis() + " ms");
    }
  }
}

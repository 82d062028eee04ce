package dev.kdelay.spring.kafka;

import static java.util.Objects.requireNonNull;

import dev.kdelay.client.retry.RetryHandler;
import dev.kdelay.client.retry.RetryOutcome;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.springframework.kafka.listener.CommonErrorHandler;
import org.springframework.kafka.listener.ListenerExecutionFailedException;
import org.springframework.kafka.listener.MessageListenerContainer;

/**
 * A Spring Kafka error handler that retries a record the listener failed on later, through kdelay,
 * instead of blocking its partition: the record is scheduled back to its topic (or a retry topic)
 * after the {@link dev.kdelay.client.retry.RetryPolicy RetryPolicy}'s delay, and after the last
 * attempt, or for an exception the policy does not retry, written to a dead-letter topic. The
 * listener's container then commits the record's offset and goes on with the next one.
 *
 * <pre>{@code
 * @Bean
 * KdelayRetryErrorHandler retryErrorHandler(ProducerFactory<byte[], byte[]> bytes) {
 *   RetryHandler retries =
 *       RetryHandler.builder(bytes.createProducer(), "payments")
 *           .policy(RetryPolicy.builder().maxAttempts(5).initialDelay(Duration.ofSeconds(2)).build())
 *           .deadLetterTopic("payments.dlt")
 *           .valueSerializer(new JacksonJsonSerializer<>())   // matches the listener's deserializer
 *           .build();
 *   return new KdelayRetryErrorHandler(retries);
 * }
 *
 * @Bean
 * ConcurrentKafkaListenerContainerFactory<String, Payment> kafkaListenerContainerFactory(
 *     ConsumerFactory<String, Payment> consumers, KdelayRetryErrorHandler retryErrorHandler) {
 *   var factory = new ConcurrentKafkaListenerContainerFactory<String, Payment>();
 *   factory.setConsumerFactory(consumers);
 *   factory.setCommonErrorHandler(retryErrorHandler);
 *   return factory;
 * }
 * }</pre>
 *
 * <p>The handler waits for the broker to acknowledge the retry request or the dead letter before
 * the container commits the offset, so a failed record is never lost. If the send fails, or takes
 * longer than the send timeout, it tells the container the record was not handled, and the
 * container delivers it again: handled again, it gets the same schedule id, so it still fires once
 * if the first send did land.
 *
 * <p>For record listeners of containers without a transaction manager. The exception handed to the
 * {@link RetryHandler} is the listener's own, not Spring's {@link ListenerExecutionFailedException}
 * around it, so the policy classifies and the headers name what the listener threw.
 */
public final class KdelayRetryErrorHandler implements CommonErrorHandler {

  private final RetryHandler retries;
  private final Duration sendTimeout;

  /**
   * A handler that waits up to 30 seconds for each send.
   *
   * @param retries the retry handler, with its policy and topics
   * @throws NullPointerException if {@code retries} is null
   */
  public KdelayRetryErrorHandler(RetryHandler retries) {
    this(retries, Duration.ofSeconds(30));
  }

  /**
   * A handler that waits up to the given time for each send.
   *
   * @param retries the retry handler, with its policy and topics
   * @param sendTimeout how long to wait for the broker to acknowledge a retry or a dead letter
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code sendTimeout} is not positive
   */
  public KdelayRetryErrorHandler(RetryHandler retries, Duration sendTimeout) {
    this.retries = requireNonNull(retries, "retries cannot be null");
    requireNonNull(sendTimeout, "sendTimeout cannot be null");
    if (sendTimeout.isNegative() || sendTimeout.isZero()) {
      throw new IllegalArgumentException("sendTimeout must be positive, got " + sendTimeout);
    }
    this.sendTimeout = sendTimeout;
  }

  /**
   * Retries or dead-letters the record, and says whether that was done.
   *
   * @return true once the retry or dead letter is acknowledged: the container commits the offset;
   *     false if it could not be sent: the container delivers the record again
   */
  @Override
  public boolean handleOne(
      Exception thrownException,
      ConsumerRecord<?, ?> record,
      Consumer<?, ?> consumer,
      MessageListenerContainer container) {
    Throwable failure = listenersOwn(thrownException);
    try {
      RetryOutcome outcome =
          retries.handle(record, failure).get(sendTimeout.toMillis(), TimeUnit.MILLISECONDS);
      logger().debug(() -> "failed record " + origin(record) + ": " + outcome);
      return true;
    } catch (ExecutionException | TimeoutException | RuntimeException e) {
      logger()
          .error(
              e, () -> "could not retry " + origin(record) + "; the container delivers it again");
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** The listener's exception, without the wrappers Spring puts around it. */
  private static Throwable listenersOwn(Exception thrown) {
    Throwable failure = thrown;
    while (failure instanceof ListenerExecutionFailedException && failure.getCause() != null) {
      failure = failure.getCause();
    }
    return failure;
  }

  private static String origin(ConsumerRecord<?, ?> record) {
    return record.topic() + "-" + record.partition() + "@" + record.offset();
  }
}

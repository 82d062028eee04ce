package dev.kdelay.spring.kafka;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.client.retry.RetryHandler;
import dev.kdelay.client.retry.RetryHeaders;
import dev.kdelay.client.retry.RetryPolicy;
import java.time.Duration;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.springframework.kafka.listener.ListenerExecutionFailedException;

class KdelayRetryErrorHandlerTest {

  private final MockProducer<byte[], byte[]> producer =
      new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer());
  private final RetryHandler retries =
      RetryHandler.builder(producer, "billing")
          .policy(RetryPolicy.builder().notRetryable(IllegalArgumentException.class).build())
          .build();
  private final KdelayRetryErrorHandler handler = new KdelayRetryErrorHandler(retries);
  private final ConsumerRecord<String, String> record =
      new ConsumerRecord<>("orders", 0, 7, "order-1", "pay");

  @Test
  void shouldHandTheListenersOwnExceptionToTheRetryHandlerWhenSpringWrappedIt() {
    Exception thrown =
        new ListenerExecutionFailedException(
            "listener failed", new IllegalStateException("downstream down"));

    assertThat(handler.handleOne(thrown, record, null, null)).isTrue();

    assertThat(header(RetryHeaders.EXCEPTION)).isEqualTo(IllegalStateException.class.getName());
    assertThat(header(RetryHeaders.EXCEPTION_MESSAGE)).isEqualTo("downstream down");
    assertThat(producer.history().get(0).topic()).isEqualTo("delay-requests");
  }

  @Test
  void shouldClassifyTheListenersOwnException() {
    Exception thrown =
        new ListenerExecutionFailedException("listener failed", new IllegalArgumentException());

    assertThat(handler.handleOne(thrown, record, null, null)).isTrue();

    assertThat(producer.history().get(0).topic()).isEqualTo("orders-dlt");
  }

  @Test
  void shouldLeaveTheRecordToBeDeliveredAgainWhenTheRetryCannotBeSent() {
    producer.sendException = new TimeoutException("no broker");

    assertThat(handler.handleOne(new IllegalStateException(), record, null, null)).isFalse();
  }

  @Test
  void shouldRefuseASendTimeoutThatIsNotPositive() {
    assertThatThrownBy(() -> new KdelayRetryErrorHandler(retries, Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("PT0S");
  }

  private String header(String name) {
    return new String(producer.history().get(0).headers().lastHeader(name).value(), UTF_8);
  }
}

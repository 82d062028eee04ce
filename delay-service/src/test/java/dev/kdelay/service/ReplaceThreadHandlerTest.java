package dev.kdelay.service;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
import static org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.topology.DelayConfig;
import dev.kdelay.topology.internals.delivery.DeliveryQuarantine;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.errors.StreamsException;
import org.junit.jupiter.api.Test;

class ReplaceThreadHandlerTest {

  private final SettableClock clock = new SettableClock();
  private final DelayConfig config = new DelayConfig(Map.of());
  private final DeliveryQuarantine quarantine =
      new DeliveryQuarantine(config, () -> clock.millis());
  private final ReplaceThreadHandler handler =
      new ReplaceThreadHandler(2, Duration.ofMinutes(1), clock, quarantine);
  private final RuntimeException failure = new TestFailure();

  @Test
  void shouldReplaceTheThreadWhenFailuresAreRare() {
    assertThat(handler.handle(failure)).isEqualTo(REPLACE_THREAD);
    clock.advance(Duration.ofSeconds(40));
    assertThat(handler.handle(failure)).isEqualTo(REPLACE_THREAD);
    clock.advance(Duration.ofSeconds(40));
    assertThat(handler.handle(failure)).isEqualTo(REPLACE_THREAD);
  }

  @Test
  void shouldShutDownWhenFailuresRepeatWithinTheWindow() {
    handler.handle(failure);
    handler.handle(failure);

    assertThat(handler.handle(failure)).isEqualTo(SHUTDOWN_CLIENT);
  }

  @Test
  void shouldNotCountTowardsTheLimitAFailureOverARecordTheQuarantineLearned() {
    // given: three records refused at once, each failing a thread in turn (limit: 2 a minute)
    for (int i = 0; i < 3; i++) {
      InvalidRecordException refusal = new InvalidRecordException("refused " + i);
      RecordHeaders headers = new RecordHeaders();
      headers.add(DelayHeaders.IDEMPOTENCY_KEY, ("id-" + i + "@1").getBytes(UTF_8));
      quarantine.recordRefused(
          new ProducerRecord<>("orders", null, 1L, new byte[0], new byte[0], headers), refusal);

      // when / then: each is progress (the retry dead-letters it), not a loop
      assertThat(handler.handle(new StreamsException("send failed", refusal)))
          .isEqualTo(REPLACE_THREAD);
    }

    // and: other failures still count
    handler.handle(failure);
    handler.handle(failure);
    assertThat(handler.handle(failure)).isEqualTo(SHUTDOWN_CLIENT);
  }

  @Test
  void shouldHoldBackATargetTopicWhenItsWriteWasRefusedForWantOfPermission() {
    // given: Kafka Streams wraps the producer's fatal authorization error
    RuntimeException denied =
        new StreamsException(
            "Error encountered sending record to topic orders",
            new TopicAuthorizationException(Set.of("orders")));

    // when
    assertThat(handler.handle(denied)).isEqualTo(REPLACE_THREAD);

    // then: its fires are held back for a while, then tried again
    assertThat(quarantine.topicRefusal("orders"))
        .get()
        .asString()
        .startsWith("TOPIC_AUTHORIZATION_FAILED");
    assertThat(quarantine.topicRefusal("payments")).isEmpty();
    clock.advance(Duration.ofMinutes(2));
    assertThat(quarantine.topicRefusal("orders")).isEmpty();
  }

  @Test
  void shouldNeverHoldBackKdelaysOwnTopicsWhenTheyRefuseAWrite() {
    RuntimeException denied =
        new StreamsException(
            "denied", new TopicAuthorizationException(Set.of(config.dlqTopic(), "kdelay-x")));

    handler.handle(denied);

    assertThat(quarantine.topicRefusal(config.dlqTopic())).isEmpty();
    assertThat(quarantine.topicRefusal("kdelay-x")).isEmpty();
    assertThat(quarantine.isEmpty()).isTrue();
  }

  /** Without a stack trace, which the handler would log. */
  private static final class TestFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    TestFailure() {
      super("test failure", null, false, false);
    }
  }
}

package dev.kdelay.service;

import static org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
import static org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.topology.DelayConfig;
import dev.kdelay.topology.DeliveryQuarantine;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.errors.TopicAuthorizationException;
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

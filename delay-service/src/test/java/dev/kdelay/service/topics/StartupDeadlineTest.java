package dev.kdelay.service.topics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.service.DelayServiceException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.errors.LeaderNotAvailableException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.internals.KafkaFutureImpl;
import org.junit.jupiter.api.Test;

class StartupDeadlineTest {

  @Test
  void shouldRetryTransientErrorsWhenTheTopicIsStillPropagating() {
    Deque<KafkaFuture<String>> answers =
        new ArrayDeque<>(
            List.of(
                failed(new UnknownTopicOrPartitionException("not yet")),
                failed(new LeaderNotAvailableException("electing")),
                KafkaFuture.completedFuture("described")));

    String answer =
        StartupDeadline.after(Duration.ofSeconds(30)).retry("describe", answers::removeFirst);

    assertThat(answer).isEqualTo("described");
    assertThat(answers).isEmpty();
  }

  @Test
  void shouldThrowAtOnceWhenTheErrorIsNotTransient() {
    Deque<KafkaFuture<String>> answers =
        new ArrayDeque<>(
            List.of(
                failed(new TopicAuthorizationException("no")),
                KafkaFuture.completedFuture("never")));

    assertThatThrownBy(
            () ->
                StartupDeadline.after(Duration.ofSeconds(30))
                    .retry("describe", answers::removeFirst))
        .isInstanceOf(TopicAuthorizationException.class);
    assertThat(answers).hasSize(1);
  }

  @Test
  void shouldNameWhatWasSeenAndTheSettingWhenTheDeadlinePasses() {
    StartupDeadline passed = StartupDeadline.after(Duration.ZERO);

    assertThatThrownBy(
            () ->
                passed.retry(
                    "describe topic 'x'",
                    () -> failed(new LeaderNotAvailableException("electing"))))
        .isInstanceOf(DelayServiceException.class)
        .hasMessageContaining("Could not describe topic 'x'")
        .hasMessageContaining("LeaderNotAvailableException: electing")
        .hasMessageContaining("delay.topic.ready.timeout.ms (now 0)");
  }

  private static KafkaFuture<String> failed(RuntimeException error) {
    KafkaFutureImpl<String> future = new KafkaFutureImpl<>();
    future.completeExceptionally(error);
    return future;
  }
}

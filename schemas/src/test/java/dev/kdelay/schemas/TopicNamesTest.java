package dev.kdelay.schemas;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TopicNamesTest {

  @ParameterizedTest
  @ValueSource(strings = {"t", "orders.timeouts", "A-z_0.9", "...", "_internal", "-"})
  void shouldAcceptTopicNameWhenItIsLegalInKafka(String name) {
    assertThat(TopicNames.isLegal(name)).isTrue();
  }

  @ParameterizedTest
  @ValueSource(strings = {"", ".", "..", "a b", "a/b", "tópico", "a:b", "a\u0000"})
  void shouldRejectTopicNameWhenItIsIllegalInKafka(String name) {
    assertThat(TopicNames.isLegal(name)).isFalse();
  }

  @Test
  void shouldAcceptTopicNamesUpTo249CharactersWhenCheckingLength() {
    assertThat(TopicNames.isLegal("t".repeat(249))).isTrue();
    assertThat(TopicNames.isLegal("t".repeat(250))).isFalse();
  }

  @Test
  void shouldQuoteTheNameWhenRequiredTopicIsIllegal() {
    assertThatThrownBy(() -> TopicNames.requireLegal("a b", "targetTopic"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "targetTopic must be a legal Kafka topic name (1..249 of [a-zA-Z0-9._-], not '.' or"
                + " '..'), got 'a b'");
  }
}

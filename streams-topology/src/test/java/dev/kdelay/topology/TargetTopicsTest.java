package dev.kdelay.topology;

import static dev.kdelay.topology.DelayDriver.START;
import static dev.kdelay.topology.DelayDriver.TARGET;
import static dev.kdelay.topology.DelayDriver.header;
import static dev.kdelay.topology.DelayDriver.headerText;
import static dev.kdelay.topology.DelayDriver.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Target topics that do not exist, or stop existing, never reach a producer. */
class TargetTopicsTest {

  @TempDir Path stateDir;
  private final Map<String, Integer> topics = new ConcurrentHashMap<>();
  private DelayDriver delay;

  @BeforeEach
  void start() {
    topics.put(TARGET, 3);
    delay =
        new DelayDriver(
            stateDir,
            Map.of(),
            TargetTopics.of(
                topic ->
                    topics.containsKey(topic)
                        ? TargetTopic.present(topics.get(topic))
                        : TargetTopic.ABSENT));
  }

  @AfterEach
  void stop() {
    delay.close();
  }

  @Test
  void shouldDeadLetterARequestWhenItsTargetTopicDoesNotExist() {
    delay.request(
        "lost", "v", header(DelayHeaders.TARGET_TOPIC, "nowhere"), header(DelayHeaders.AFTER, "0"));
    delay.scheduleAt("found", START, "v");
    delay.advance(java.time.Duration.ofMillis(10));

    assertThat(delay.deadLetters())
        .extracting(r -> headerText(r.headers(), DelayHeaders.ERROR))
        .containsExactly("UNKNOWN_TOPIC");
    assertThat(delay.fired()).extracting(r -> text(r.key())).containsExactly("found");
  }

  @Test
  void shouldDeadLetterARequestWhenItsTargetPartitionDoesNotExist() {
    delay.scheduleAt("p3", START, "v", header(DelayHeaders.TARGET_PARTITION, "3"));
    delay.scheduleAt("p2", START, "v", header(DelayHeaders.TARGET_PARTITION, "2"));
    delay.advance(java.time.Duration.ofMillis(10));

    assertThat(delay.deadLetters())
        .extracting(r -> headerText(r.headers(), DelayHeaders.ERROR_MESSAGE))
        .singleElement()
        .asString()
        .contains("3 partitions");
    assertThat(delay.fired()).extracting(r -> text(r.key())).containsExactly("p2");
  }

  @Test
  void shouldDeadLetterATaskWhenItsTopicWasDeletedBeforeItFired() {
    // given
    delay.scheduleAt("orphan", START.plusSeconds(5), "payload", header("traceparent", "t-1"));
    delay.advance(java.time.Duration.ofSeconds(1));

    // when: the topic goes away before the due time
    topics.remove(TARGET);
    delay.advanceTo(START.plusSeconds(5));

    // then: the task is not lost, and nothing stalls
    assertThat(delay.fired()).isEmpty();
    List<TestRecord<byte[], byte[]>> dead = delay.deadLetters();
    assertThat(dead).hasSize(1);
    TestRecord<byte[], byte[]> letter = dead.get(0);
    assertThat(text(letter.key())).isEqualTo("orphan");
    assertThat(text(letter.value())).isEqualTo("payload");
    assertThat(headerText(letter.headers(), "traceparent")).isEqualTo("t-1");
    assertThat(headerText(letter.headers(), DelayHeaders.ID)).isEqualTo("orphan");
    assertThat(headerText(letter.headers(), DelayHeaders.TARGET_TOPIC)).isEqualTo(TARGET);
    assertThat(headerText(letter.headers(), DelayHeaders.ERROR)).isEqualTo("UNKNOWN_TOPIC");
  }
}

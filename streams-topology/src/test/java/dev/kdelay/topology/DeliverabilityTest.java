package dev.kdelay.topology;

import static dev.kdelay.topology.DelayDriver.TARGET;
import static dev.kdelay.topology.DelayDriver.header;
import static dev.kdelay.topology.DelayDriver.headerText;
import static dev.kdelay.topology.DelayDriver.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.topology.internals.delivery.Causes;
import dev.kdelay.topology.internals.delivery.DeliveryQuarantine;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A record the broker would refuse never reaches the producer: refused at intake when that can be
 * known then, dead-lettered as UNDELIVERABLE when the task comes due, and never sent again after
 * the producer refused it once. The tasks around it fire as usual.
 */
class DeliverabilityTest {

  @TempDir Path stateDir;

  private final Map<String, TargetTopic> topics = new ConcurrentHashMap<>();
  private final TargetTopics targetTopics =
      TargetTopics.of(topic -> topics.getOrDefault(topic, TargetTopic.present(1)));

  @Test
  void shouldRefuseAtIntakeAPayloadTooLargeForTheTargetTopic() {
    topics.put(TARGET, TargetTopic.present(3).withMaxMessageBytes(1000));
    try (DelayDriver delay = driver(Map.of())) {
      // when
      delay.scheduleAt("big", delay.now().plusSeconds(1), "x".repeat(2000));
      delay.scheduleAt("small", delay.now().plusSeconds(1), "x".repeat(100));
      delay.advance(Duration.ofSeconds(2));

      // then
      TestRecord<byte[], byte[]> dead = single(delay.deadLetters());
      assertThat(headerText(dead.headers(), DelayHeaders.ERROR)).isEqualTo("TOO_LARGE");
      assertThat(headerText(dead.headers(), DelayHeaders.ERROR_MESSAGE))
          .contains("accepts at most 1000 (max.message.bytes)");
      assertThat(delay.fired()).extracting(r -> text(r.key())).containsExactly("small");
    }
  }

  @Test
  void shouldRefuseAtIntakeAPayloadOverTheProducersMaxRequestSize() {
    try (DelayDriver delay = driver(Map.of("producer.max.request.size", 5000))) {
      delay.scheduleAt("big", delay.now().plusSeconds(1), "x".repeat(6000));
      delay.scheduleAt("fits", delay.now().plusSeconds(1), "x".repeat(3000));
      delay.advance(Duration.ofSeconds(2));

      TestRecord<byte[], byte[]> dead = single(delay.deadLetters());
      assertThat(headerText(dead.headers(), DelayHeaders.ERROR)).isEqualTo("TOO_LARGE");
      assertThat(headerText(dead.headers(), DelayHeaders.ERROR_MESSAGE))
          .contains("max.request.size is 5000");
      assertThat(delay.fired()).extracting(r -> text(r.key())).containsExactly("fits");
    }
  }

  @Test
  void shouldRefuseAtIntakeATargetKdelayMayNotWriteTo() {
    topics.put(TARGET, TargetTopic.present(3).withWritable(false));
    try (DelayDriver delay = driver(Map.of())) {
      delay.scheduleAt("a", delay.now().plusSeconds(1), "v");

      TestRecord<byte[], byte[]> dead = single(delay.deadLetters());
      assertThat(headerText(dead.headers(), DelayHeaders.ERROR)).isEqualTo("TARGET_NOT_ALLOWED");
      assertThat(headerText(dead.headers(), DelayHeaders.ERROR_MESSAGE)).contains("lacks WRITE");
    }
  }

  @Test
  void shouldDeadLetterAtFireATaskItsTargetNoLongerTakesAndFireTheOthers() {
    // given: accepted while the topic took 1 MB records
    topics.put(TARGET, TargetTopic.present(3));
    try (DelayDriver delay = driver(Map.of())) {
      Instant due = delay.now().plusSeconds(10);
      delay.scheduleAt("before", due.minusMillis(5), "ok");
      delay.scheduleAt("big", due, "x".repeat(2000), header("traceparent", "00-1-2-01"));
      delay.scheduleAt("after", due.plusMillis(5), "ok");

      // when: the topic's max.message.bytes shrinks before the task is due
      topics.put(TARGET, TargetTopic.present(3).withMaxMessageBytes(1000));
      delay.advanceTo(due.plusMillis(20));

      // then
      assertThat(delay.fired()).extracting(r -> text(r.key())).containsExactly("before", "after");
      TestRecord<byte[], byte[]> dead = single(delay.deadLetters());
      assertThat(text(dead.key())).isEqualTo("big");
      assertThat(dead.value()).hasSize(2000);
      assertThat(headerText(dead.headers(), DelayHeaders.ERROR)).isEqualTo("UNDELIVERABLE");
      assertThat(headerText(dead.headers(), DelayHeaders.ERROR_MESSAGE))
          .startsWith("MESSAGE_TOO_LARGE: the fired record is ")
          .contains("accepts at most 1000");
      assertThat(headerText(dead.headers(), DelayHeaders.TARGET_TOPIC)).isEqualTo(TARGET);
      assertThat(headerText(dead.headers(), DelayHeaders.IDEMPOTENCY_KEY))
          .isEqualTo("big@" + due.toEpochMilli());
      assertThat(headerText(dead.headers(), "traceparent")).isEqualTo("00-1-2-01");

      // and: it is gone, not fired later
      delay.advance(Duration.ofMinutes(1));
      assertThat(delay.fired()).isEmpty();
      assertThat(delay.deadLetters()).isEmpty();
    }
  }

  @Test
  void shouldDeadLetterAtFireATaskStampedOlderThanTheTargetAccepts() {
    topics.put(TARGET, TargetTopic.present(3).withMaxTimestampAgeMs(60_000));
    try (DelayDriver delay = driver(Map.of())) {
      delay.scheduleAt("long-overdue", delay.now().minus(Duration.ofHours(1)), "v");
      delay.scheduleAt("just-overdue", delay.now().minusSeconds(1), "v");
      delay.advance(Duration.ofMillis(10));

      TestRecord<byte[], byte[]> dead = single(delay.deadLetters());
      assertThat(text(dead.key())).isEqualTo("long-overdue");
      assertThat(headerText(dead.headers(), DelayHeaders.ERROR_MESSAGE))
          .startsWith("INVALID_TIMESTAMP:")
          .contains("message.timestamp.before.max.ms");
      assertThat(delay.fired()).extracting(r -> text(r.key())).containsExactly("just-overdue");
    }
  }

  @Test
  void shouldDeadLetterATaskTheProducerRefusedInsteadOfSendingItAgain() {
    DelayConfig config = DelayDriver.config(stateDir, Map.of());
    DeliveryQuarantine quarantine = new DeliveryQuarantine(config);
    try (DelayDriver delay = new DelayDriver(stateDir, Map.of(), targetTopics, quarantine)) {
      Instant due = delay.now().plusSeconds(1);
      delay.scheduleAt("refused", due, "v");
      delay.scheduleAt("fine", due, "v");

      // when: the broker refused "refused" in a transaction that was then aborted
      quarantine.refused(
          Causes.fired("refused@" + due.toEpochMilli()),
          "MESSAGE_TOO_LARGE: The request included a message larger than the max message size");
      delay.advanceTo(due.plusMillis(10));

      // then
      assertThat(delay.fired()).extracting(r -> text(r.key())).containsExactly("fine");
      TestRecord<byte[], byte[]> dead = single(delay.deadLetters());
      assertThat(text(dead.key())).isEqualTo("refused");
      assertThat(headerText(dead.headers(), DelayHeaders.ERROR)).isEqualTo("UNDELIVERABLE");
      assertThat(headerText(dead.headers(), DelayHeaders.ERROR_MESSAGE))
          .contains("refused this record before")
          .contains("MESSAGE_TOO_LARGE");
    }
  }

  @Test
  void shouldDeadLetterTasksAsLargeAsOneTheTopicRefusedWithoutTryingThem() {
    DelayConfig config = DelayDriver.config(stateDir, Map.of());
    DeliveryQuarantine quarantine = new DeliveryQuarantine(config);
    try (DelayDriver delay = new DelayDriver(stateDir, Map.of(), targetTopics, quarantine)) {
      Instant due = delay.now().plusSeconds(1);
      delay.scheduleAt("large", due, "x".repeat(2000));
      delay.scheduleAt("small", due, "x".repeat(100));

      // when: the topic refused a 1,500-byte record (its max.message.bytes shrank)
      quarantine.sizeRefused(TARGET, 1500);
      delay.advanceTo(due.plusMillis(10));

      // then
      assertThat(delay.fired()).extracting(r -> text(r.key())).containsExactly("small");
      assertThat(headerText(single(delay.deadLetters()).headers(), DelayHeaders.ERROR_MESSAGE))
          .startsWith("MESSAGE_TOO_LARGE: topic 'target' refused a record of 1500 bytes lately");
    }
  }

  @Test
  void shouldHoldBackFiresToATopicThatRefusedKdelaysWrites() {
    DelayConfig config = DelayDriver.config(stateDir, Map.of());
    DeliveryQuarantine quarantine = new DeliveryQuarantine(config);
    try (DelayDriver delay = new DelayDriver(stateDir, Map.of(), targetTopics, quarantine)) {
      delay.scheduleAt("a", delay.now().plusSeconds(1), "v");

      // when: a stream thread died of a write the ACLs refused
      quarantine.learn(
          new StreamsException("send failed", new TopicAuthorizationException(Set.of(TARGET))));
      delay.advance(Duration.ofSeconds(2));

      // then
      assertThat(delay.fired()).isEmpty();
      assertThat(headerText(single(delay.deadLetters()).headers(), DelayHeaders.ERROR_MESSAGE))
          .contains("TOPIC_AUTHORIZATION_FAILED");
    }
  }

  private DelayDriver driver(Map<String, Object> overrides) {
    return new DelayDriver(stateDir, overrides, targetTopics);
  }

  private static TestRecord<byte[], byte[]> single(List<TestRecord<byte[], byte[]>> records) {
    assertThat(records).hasSize(1);
    return records.get(0);
  }
}

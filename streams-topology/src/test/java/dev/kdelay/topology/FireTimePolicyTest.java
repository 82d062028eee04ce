package dev.kdelay.topology;

import static dev.kdelay.topology.DelayDriver.START;
import static dev.kdelay.topology.DelayDriver.header;
import static dev.kdelay.topology.DelayDriver.headerText;
import static dev.kdelay.topology.DelayDriver.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.client.DeadLetter;
import dev.kdelay.client.DelayClient;
import dev.kdelay.client.Replay;
import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.topology.internals.store.ChangelogReplay;
import dev.kdelay.topology.internals.store.StoreFormat;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The target policy holds for tasks stored before it was narrowed: an instance restarted with a
 * narrower {@code delay.target.topic.allow} dead-letters, as {@code TARGET_NOT_ALLOWED}, the stored
 * one-shots, cron occurrences and triggers whose topic the policy now refuses, and writes nothing
 * to it; tasks for topics it still allows fire as before.
 */
class FireTimePolicyTest {

  @TempDir Path before;
  @TempDir Path after;

  @Test
  void shouldDeadLetterStoredTasksWhoseTargetTheRestartedInstanceRefuses() {
    // given: tasks stored by an instance that allows every topic
    List<TestRecord<byte[], byte[]>> changelog;
    try (DelayDriver open = new DelayDriver(before)) {
      for (int i = 0; i < 10; i++) {
        open.request("pol-" + i, "p" + i, to("pol-x"), at(START.plusSeconds(10 + i)));
      }
      open.request("orders-1", "o", to("orders.eu"), at(START.plusSeconds(12)));
      open.request("nightly", "c", to("pol-x"), header(DelayHeaders.CRON, "*/5 * * * * ?"));
      open.request("triggered", "t", to("pol-x"), at(START.plusSeconds(3_600)));
      assertThat(open.deadLetters()).isEmpty();
      changelog =
          open.output(StoreFormat.changelogTopic(open.config.applicationId())).readRecordsToList();
    }

    // when: restarted with an allowlist of the orders topics only, its store restored
    try (DelayDriver narrowed =
        new DelayDriver(after, Map.of(DelayConfig.TARGET_TOPIC_ALLOW_CONFIG, "orders\\..*"))) {
      ChangelogReplay.restore(StoredSchedules.of(narrowed.driver), changelog);
      narrowed.request("triggered", null, header(DelayHeaders.ACTION, "trigger")); // fire it now
      for (int second = 0; second < 25; second++) {
        narrowed.advance(Duration.ofSeconds(1));
      }

      // then: nothing written to pol-x; each refused task dead-lettered with the reason
      assertThat(narrowed.output("pol-x").readRecordsToList()).isEmpty();
      List<TestRecord<byte[], byte[]>> fired = narrowed.output("orders.eu").readRecordsToList();
      assertThat(fired).hasSize(1);
      List<TestRecord<byte[], byte[]>> deadLetters = narrowed.deadLetters();
      assertThat(deadLetters)
          .allSatisfy(
              letter -> {
                assertThat(headerText(letter.headers(), DelayHeaders.ERROR))
                    .isEqualTo("TARGET_NOT_ALLOWED");
                assertThat(headerText(letter.headers(), DelayHeaders.ERROR_MESSAGE))
                    .contains("does not match delay.target.topic.allow")
                    .contains("checked again as the task fell due");
              });
      assertThat(deadLetters.stream().map(letter -> headerText(letter.headers(), DelayHeaders.ID)))
          .contains("pol-0", "pol-9", "nightly", "triggered")
          .filteredOn(id -> id.startsWith("pol-"))
          .hasSize(10);
      // the cron schedule goes on: each occurrence is refused, none is lost
      assertThat(
              deadLetters.stream()
                  .filter(letter -> "nightly".equals(headerText(letter.headers(), DelayHeaders.ID)))
                  .count())
          .isGreaterThanOrEqualTo(4);
    }
  }

  @Test
  void shouldFireARefusedTaskOnceWhenItsDeadLetterIsReplayedToAnAllowedTopic() {
    // given: a one-shot stored for pol-x, refused as it fell due by an instance that allows only
    // the orders topics
    List<TestRecord<byte[], byte[]>> changelog;
    try (DelayDriver open = new DelayDriver(before)) {
      open.request("pol-1", "p1", to("pol-x"), at(START.plusSeconds(10)));
      changelog =
          open.output(StoreFormat.changelogTopic(open.config.applicationId())).readRecordsToList();
    }
    try (DelayDriver narrowed =
        new DelayDriver(after, Map.of(DelayConfig.TARGET_TOPIC_ALLOW_CONFIG, "orders\\..*"))) {
      ChangelogReplay.restore(StoredSchedules.of(narrowed.driver), changelog);
      narrowed.advance(Duration.ofSeconds(15));
      TestRecord<byte[], byte[]> letter = narrowed.deadLetters().get(0);
      assertThat(headerText(letter.headers(), DelayHeaders.ERROR)).isEqualTo("TARGET_NOT_ALLOWED");

      // when: an operator replays it as it was, and then to an allowed topic (kdelay dlq replay)
      replay(narrowed, letter, Replay.asIs());
      narrowed.advance(Duration.ofSeconds(1));
      List<TestRecord<byte[], byte[]>> refusedAgain = narrowed.deadLetters();
      // (due now by the driver's clock: without a time, a replay is due when it is sent, by the
      // wall clock, months after the driver's)
      replay(narrowed, letter, Replay.asIs().targetTopic("orders.eu").fireAt(narrowed.now()));
      narrowed.advance(Duration.ofSeconds(1));

      // then: as it was, refused again at once (not lost); corrected, fired once with its payload
      assertThat(refusedAgain)
          .singleElement()
          .satisfies(
              again ->
                  assertThat(headerText(again.headers(), DelayHeaders.ERROR))
                      .isEqualTo("TARGET_NOT_ALLOWED"));
      assertThat(narrowed.output("pol-x").readRecordsToList()).isEmpty();
      List<TestRecord<byte[], byte[]>> fired = narrowed.output("orders.eu").readRecordsToList();
      assertThat(fired).singleElement().satisfies(f -> assertThat(text(f.value())).isEqualTo("p1"));
      assertThat(text(fired.get(0).key())).isEqualTo("pol-1");
      narrowed.advance(Duration.ofSeconds(5));
      assertThat(narrowed.output("orders.eu").readRecordsToList()).isEmpty();
      assertThat(narrowed.deadLetters()).isEmpty();
    }
  }

  /**
   * Sends a dead letter back as the SDK's {@link DelayClient#replay} does ({@code kdelay dlq
   * replay} uses it), to the driver's request topic.
   */
  private static void replay(DelayDriver delay, TestRecord<byte[], byte[]> letter, Replay how) {
    MockProducer<byte[], byte[]> sent =
        new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer());
    try (DelayClient client = new DelayClient(sent, delay.config.requestsTopic())) {
      client
          .replay(
              DeadLetter.from(
                  new ConsumerRecord<>(
                      delay.config.dlqTopic(),
                      0,
                      0L,
                      letter.timestamp(),
                      TimestampType.CREATE_TIME,
                      letter.key().length,
                      letter.value() == null ? -1 : letter.value().length,
                      letter.key(),
                      letter.value(),
                      letter.headers(),
                      Optional.empty())),
              how)
          .join();
    }
    ProducerRecord<byte[], byte[]> request = sent.history().get(0);
    delay.request(
        request.key(),
        request.value(),
        Instant.ofEpochMilli(request.timestamp()),
        request.headers().toArray());
  }

  private static org.apache.kafka.common.header.Header to(String topic) {
    return header(DelayHeaders.TARGET_TOPIC, topic);
  }

  private static org.apache.kafka.common.header.Header at(java.time.Instant due) {
    return header(DelayHeaders.FIRE_AT, Long.toString(due.toEpochMilli()));
  }
}

package dev.kdelay.topology;

import static dev.kdelay.topology.DelayDriver.TARGET;
import static dev.kdelay.topology.DelayDriver.bytes;
import static dev.kdelay.topology.DelayDriver.header;
import static dev.kdelay.topology.DelayDriver.headerText;
import static dev.kdelay.topology.DelayDriver.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.Rejection;
import dev.kdelay.topology.internals.delivery.Causes;
import dev.kdelay.topology.internals.delivery.DeliveryQuarantine;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A dead letter never fails for its size: it is fitted to the dead-letter topic, leaving out its
 * value, then its carried headers, then its key, and says what it left out.
 */
class DeadLetterFitTest {

  private static final int DLQ_MAX_BYTES = 4000;

  @TempDir Path stateDir;

  @Test
  void shouldBoundTheMessageWhenARequestEchoesAHugeValue() {
    try (DelayDriver delay = driver(Map.of())) {
      // given: 600 KB of garbage in delay-fire-at
      delay.request(
          "garbage",
          "v",
          header(DelayHeaders.TARGET_TOPIC, TARGET),
          header(DelayHeaders.FIRE_AT, "9".repeat(600_000) + "x"));

      TestRecord<byte[], byte[]> dead = single(delay.deadLetters());
      assertThat(headerText(dead.headers(), DelayHeaders.ERROR)).isEqualTo("BAD_TIME");
      assertThat(headerText(dead.headers(), DelayHeaders.ERROR_MESSAGE))
          .hasSizeLessThanOrEqualTo(Rejection.MAX_MESSAGE_CHARS);
    }
  }

  @Test
  void shouldLeaveOutTheValueWhenTheDeadLetterWouldNotFitTheTopic() {
    try (DelayDriver delay = driver(Map.of())) {
      // when: a rejected request whose payload alone is larger than the dead-letter topic takes
      delay.request(
          "big",
          "x".repeat(5000),
          header(DelayHeaders.TARGET_TOPIC, TARGET),
          header("trace", "t-1"));

      // then
      TestRecord<byte[], byte[]> dead = single(delay.deadLetters());
      assertThat(text(dead.key())).isEqualTo("big");
      assertThat(dead.value()).isNull();
      assertThat(headerText(dead.headers(), DelayHeaders.ERROR)).isEqualTo("MISSING_TIME");
      assertThat(headerText(dead.headers(), DelayHeaders.ERROR_OMITTED))
          .isEqualTo("value (5000 bytes)");
      assertThat(headerText(dead.headers(), "trace")).isEqualTo("t-1");
      assertThat(headerText(dead.headers(), DelayHeaders.TARGET_TOPIC)).isEqualTo(TARGET);
    }
  }

  @Test
  void shouldLeaveOutTheCarriedHeadersWhenLeavingOutTheValueIsNotEnough() {
    try (DelayDriver delay = driver(Map.of())) {
      delay.request(
          "huge-header",
          "v",
          header(DelayHeaders.TARGET_TOPIC, TARGET),
          header("junk", "j".repeat(5000)),
          header("trace", "t-1"));

      TestRecord<byte[], byte[]> dead = single(delay.deadLetters());
      assertThat(text(dead.key())).isEqualTo("huge-header");
      assertThat(dead.value()).isNull();
      assertThat(headerText(dead.headers(), "junk")).isNull();
      assertThat(headerText(dead.headers(), "trace")).isNull();
      assertThat(headerText(dead.headers(), DelayHeaders.TARGET_TOPIC)).isEqualTo(TARGET);
      assertThat(headerText(dead.headers(), DelayHeaders.ERROR)).isEqualTo("MISSING_TIME");
      assertThat(headerText(dead.headers(), DelayHeaders.ERROR_OMITTED))
          .isEqualTo("value (1 bytes), headers (2, 5012 bytes)");
    }
  }

  @Test
  void shouldWriteTheSmallestFormWhenTheProducerRefusedTheDeadLetterOnce() {
    DeliveryQuarantine quarantine = new DeliveryQuarantine(DelayDriver.config(stateDir, Map.of()));
    try (DelayDriver delay =
        new DelayDriver(stateDir, Map.of(), TargetTopics.UNCHECKED, quarantine)) {
      // given: the dead letter of the request at offset 1 was refused; the retry, at the same
      // offset, writes it again (a test driver cannot read an offset twice: offset 0 is another
      // request, dead-lettered as usual)
      Header target = header(DelayHeaders.TARGET_TOPIC, TARGET);
      delay.request(bytes("r"), bytes("v"), delay.now(), target);
      TestRecord<byte[], byte[]> first = single(delay.deadLetters());
      assertThat(headerText(first.headers(), DelayHeaders.SOURCE))
          .isEqualTo(delay.config.requestsTopic() + "-0@0");
      RecordHeaders atOffsetOne = new RecordHeaders(first.headers().toArray());
      atOffsetOne.remove(DelayHeaders.SOURCE);
      atOffsetOne.add(DelayHeaders.SOURCE, bytes(delay.config.requestsTopic() + "-0@1"));
      quarantine.refused(Causes.deadLetter(atOffsetOne), "MESSAGE_TOO_LARGE: refused");

      // when: the request at offset 1
      delay.request(bytes("r"), bytes("v"), first.getRecordTime(), target);

      // then
      TestRecord<byte[], byte[]> retried = single(delay.deadLetters());
      assertThat(retried.key()).isNull();
      assertThat(retried.value()).isNull();
      assertThat(headerText(retried.headers(), DelayHeaders.ERROR)).isEqualTo("MISSING_TIME");
      assertThat(headerText(retried.headers(), DelayHeaders.ERROR_OMITTED))
          .isEqualTo("value (1 bytes), headers (0, 0 bytes), key (1 bytes)");

      // and: refused a second time, it is dropped rather than looping; its smallest form keeps
      // what it is about, so the retry is known
      quarantine.refused(Causes.deadLetter(retried.headers()), "again");
      assertThat(quarantine.refusal(Causes.deadLetter(atOffsetOne)))
          .hasValueSatisfying(refusal -> assertThat(refusal.count()).isEqualTo(2));
    }
  }

  @Test
  void shouldKeyEveryDeadLetterWhenTheDeadLetterTopicIsCompacted() {
    // given: a compacted dead-letter topic, which refuses a record without a key (INVALID_RECORD,
    // a refusal that failed the transaction, every retry)
    try (DelayDriver delay =
        new DelayDriver(
            stateDir,
            Map.of(),
            TargetTopics.of(
                topic ->
                    topic.equals("delay-dlq")
                        ? TargetTopic.present(6).withCompacted(true)
                        : TargetTopic.present(3)))) {
      // when: two requests without a key
      delay.request(null, bytes("v"), delay.now(), header(DelayHeaders.TARGET_TOPIC, TARGET));
      delay.request(null, bytes("w"), delay.now(), header(DelayHeaders.TARGET_TOPIC, TARGET));

      // then: each dead letter is keyed by where its request was read, apart from the other
      List<TestRecord<byte[], byte[]>> dead = delay.deadLetters();
      assertThat(dead).hasSize(2);
      assertThat(dead).allSatisfy(letter -> assertThat(letter.key()).isNotNull());
      assertThat(text(dead.get(0).key())).isNotEqualTo(text(dead.get(1).key()));
      assertThat(text(dead.get(0).key())).contains(delay.config.requestsTopic() + "-0@0");
    }
  }

  private DelayDriver driver(Map<String, Object> overrides) {
    return new DelayDriver(
        stateDir,
        overrides,
        TargetTopics.of(
            topic ->
                topic.equals("delay-dlq")
                    ? TargetTopic.present(6).withMaxMessageBytes(DLQ_MAX_BYTES)
                    : TargetTopic.present(3)));
  }

  private static TestRecord<byte[], byte[]> single(List<TestRecord<byte[], byte[]>> records) {
    assertThat(records).hasSize(1);
    return records.get(0);
  }
}

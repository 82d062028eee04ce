package dev.kdelay.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.schemas.DelayHeaders;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

class ReplayTest {

  private static final Instant NOW = Instant.parse("2026-11-23T12:00:00Z");
  private static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);
  private static final long DEAD_LETTER_TIME = NOW.minus(Duration.ofHours(2)).toEpochMilli();
  private static final String REQUESTS = "delay-requests";

  @Test
  void shouldSubmitARejectedRequestAgainWithAnotherTargetAndWithoutTheErrorHeaders() {
    // given: a request dead-lettered because its target topic did not exist
    DeadLetter letter =
        letter(
            "order-42",
            "payload",
            "UNKNOWN_TOPIC",
            DelayHeaders.TARGET_TOPIC,
            "orders.timeout",
            DelayHeaders.AFTER,
            "PT15M",
            "traceparent",
            "00-abc-def-01");

    // when
    ProducerRecord<byte[], byte[]> request =
        Replay.asIs().targetTopic("orders.timeouts").request(letter, REQUESTS, CLOCK);

    // then: the same request, to the corrected topic, ordered as the original was
    assertThat(request.topic()).isEqualTo(REQUESTS);
    assertThat(text(request.key())).isEqualTo("order-42");
    assertThat(text(request.value())).isEqualTo("payload");
    assertThat(request.timestamp()).isEqualTo(DEAD_LETTER_TIME);
    assertThat(names(request))
        .containsExactly(DelayHeaders.AFTER, "traceparent", DelayHeaders.TARGET_TOPIC);
    assertThat(header(request, DelayHeaders.TARGET_TOPIC)).isEqualTo("orders.timeouts");
    assertThat(header(request, DelayHeaders.AFTER)).isEqualTo("PT15M");
  }

  @Test
  void shouldSendTheRequestWithItsOwnTimestampWhenTheDeadLetterIsStampedWhenWritten() {
    // given: a dead letter written at DEAD_LETTER_TIME of a request stamped a minute before
    long requested = DEAD_LETTER_TIME - 60_000;
    DeadLetter letter =
        letter(
            "order-42",
            "payload",
            "UNKNOWN_TOPIC",
            DelayHeaders.TARGET_TOPIC,
            "orders.timeout",
            DelayHeaders.AFTER,
            "PT15M",
            DelayHeaders.SOURCE,
            "delay-requests-3@17",
            DelayHeaders.REQUESTED_AT,
            Long.toString(requested));

    // when
    ProducerRecord<byte[], byte[]> request =
        Replay.asIs().targetTopic("orders.timeouts").request(letter, REQUESTS, CLOCK);

    // then: ordered as the original was, and without kdelay's dead-letter headers
    assertThat(letter.requestTimestamp()).isEqualTo(requested);
    assertThat(request.timestamp()).isEqualTo(requested);
    assertThat(names(request)).containsExactly(DelayHeaders.AFTER, DelayHeaders.TARGET_TOPIC);
  }

  @Test
  void shouldCountAnAfterCorrectionFromWhenTheReplayIsSent() {
    DeadLetter letter =
        letter(
            "order-42",
            "payload",
            "TOO_FAR",
            DelayHeaders.TARGET_TOPIC,
            "orders",
            DelayHeaders.FIRE_AT,
            "2099-01-01T00:00:00Z");

    ProducerRecord<byte[], byte[]> request =
        Replay.asIs().after(Duration.ofMinutes(5)).request(letter, REQUESTS, CLOCK);

    assertThat(names(request)).containsExactly(DelayHeaders.TARGET_TOPIC, DelayHeaders.FIRE_AT);
    assertThat(header(request, DelayHeaders.FIRE_AT))
        .isEqualTo(Long.toString(NOW.plus(Duration.ofMinutes(5)).toEpochMilli()));
  }

  @Test
  void shouldFireAnUndeliverableTaskAtOnceToItsKeyUnderItsScheduleId() {
    // given: a task that came due, dead-lettered as its fired record
    DeadLetter letter =
        letter(
            "customer-7",
            "payload",
            "UNDELIVERABLE",
            DelayHeaders.ID,
            "order-42",
            DelayHeaders.IDEMPOTENCY_KEY,
            "order-42@1",
            DelayHeaders.DUE_AT,
            "1",
            DelayHeaders.FIRED_AT,
            "2",
            DelayHeaders.OCCURRENCE,
            "1",
            DelayHeaders.TARGET_TOPIC,
            "orders",
            "carried",
            "yes");

    // when
    ProducerRecord<byte[], byte[]> request = Replay.asIs().request(letter, REQUESTS, CLOCK);

    // then
    assertThat(text(request.key())).isEqualTo("order-42");
    assertThat(names(request))
        .containsExactly(
            DelayHeaders.TARGET_TOPIC, "carried", DelayHeaders.FIRE_AT, DelayHeaders.TARGET_KEY);
    assertThat(header(request, DelayHeaders.FIRE_AT)).isEqualTo(Long.toString(NOW.toEpochMilli()));
    assertThat(header(request, DelayHeaders.TARGET_KEY)).isEqualTo("customer-7");
  }

  @Test
  void shouldReplayACancelAsACancel() {
    DeadLetter cancel = letter("order-42", null, "SUPERSEDED");

    ProducerRecord<byte[], byte[]> request = Replay.asIs().request(cancel, REQUESTS, CLOCK);

    assertThat(request.value()).isNull();
    assertThat(request.headers().toArray()).isEmpty();
  }

  @Test
  void shouldRefuseWhatCannotBeRebuilt() {
    DeadLetter cut =
        letter(
            "order-42",
            null,
            "TOO_LARGE",
            DelayHeaders.TARGET_TOPIC,
            "orders",
            DelayHeaders.ERROR_OMITTED,
            "value (2000000 bytes)");
    DeadLetter unreadable = letter("order-42", "bytes", "UNREADABLE_TASK");
    DeadLetter cron = letter("nightly", "p", "UNKNOWN_TOPIC", DelayHeaders.CRON, "0 0 2 * * ?");
    DeadLetter keyless = letter(null, "p", "BAD_ID");
    DeadLetter notADeadLetter = letter("order-42", "p", null);

    assertThatThrownBy(() -> Replay.asIs().request(cut, REQUESTS, CLOCK))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("value (2000000 bytes) left out");
    assertThatThrownBy(() -> Replay.asIs().request(unreadable, REQUESTS, CLOCK))
        .hasMessageContaining("could not be decoded");
    assertThatThrownBy(() -> Replay.asIs().fireAt(NOW).request(cron, REQUESTS, CLOCK))
        .hasMessageContaining("cron schedule");
    assertThatThrownBy(() -> Replay.asIs().request(keyless, REQUESTS, CLOCK))
        .hasMessageContaining("no schedule id");
    assertThatThrownBy(() -> Replay.asIs().request(notADeadLetter, REQUESTS, CLOCK))
        .hasMessageContaining("no dead letter");
  }

  @Test
  void shouldSendTheReplayToTheRequestTopic() {
    MockProducer<byte[], byte[]> producer =
        new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer());
    DeadLetter letter =
        letter("order-42", "payload", "UNKNOWN_TOPIC", DelayHeaders.TARGET_TOPIC, "missing");

    try (DelayClient client = new DelayClient(producer, REQUESTS)) {
      client.replay(letter, Replay.asIs().targetTopic("orders"), CLOCK).join();
    }

    assertThat(producer.history()).hasSize(1);
    assertThat(header(producer.history().get(0), DelayHeaders.TARGET_TOPIC)).isEqualTo("orders");
  }

  /** A dead letter with the given code (none if null) after the given header pairs. */
  private static DeadLetter letter(String key, String value, String code, String... headers) {
    RecordHeaders all = new RecordHeaders();
    for (int i = 0; i < headers.length; i += 2) {
      all.add(headers[i], headers[i + 1].getBytes(StandardCharsets.UTF_8));
    }
    if (code != null) {
      all.add(DelayHeaders.ERROR, code.getBytes(StandardCharsets.UTF_8));
      all.add(DelayHeaders.ERROR_MESSAGE, "why".getBytes(StandardCharsets.UTF_8));
    }
    return DeadLetter.from(
        new ConsumerRecord<>(
            "delay-dlq",
            3,
            17,
            DEAD_LETTER_TIME,
            TimestampType.CREATE_TIME,
            -1,
            -1,
            key == null ? null : key.getBytes(StandardCharsets.UTF_8),
            value == null ? null : value.getBytes(StandardCharsets.UTF_8),
            all,
            Optional.empty()));
  }

  private static List<String> names(ProducerRecord<byte[], byte[]> record) {
    List<String> names = new ArrayList<>();
    for (Header header : record.headers()) {
      names.add(header.key());
    }
    return names;
  }

  private static String header(ProducerRecord<byte[], byte[]> record, String name) {
    Header header = record.headers().lastHeader(name);
    return header == null ? null : text(header.value());
  }

  private static String text(byte[] bytes) {
    return new String(bytes, StandardCharsets.UTF_8);
  }
}

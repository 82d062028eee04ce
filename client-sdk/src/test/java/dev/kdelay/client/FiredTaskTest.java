package dev.kdelay.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

class FiredTaskTest {

  private static final long DUE_MS = 1_772_355_600_000L;

  @Test
  void shouldReadKdelayHeadersWhenRecordIsFiredOneShot() {
    ConsumerRecord<String, String> record =
        fired(
            headers()
                .add("traceparent", bytes("00-abc-def-01"))
                .add("delay-id", bytes("order-42"))
                .add("delay-idempotency-key", bytes("order-42@" + DUE_MS))
                .add("delay-due-at", bytes(Long.toString(DUE_MS)))
                .add("delay-fired-at", bytes(Long.toString(DUE_MS + 7))));

    FiredTask task = FiredTask.from(record);

    assertThat(task.id()).isEqualTo("order-42");
    assertThat(task.idempotencyKey()).isEqualTo("order-42@" + DUE_MS);
    assertThat(task.dueAt()).isEqualTo(Instant.ofEpochMilli(DUE_MS));
    assertThat(task.firedAt()).isEqualTo(Instant.ofEpochMilli(DUE_MS + 7));
    assertThat(task.occurrence()).isEmpty();
    assertThat(task.lateness()).isEqualTo(Duration.ofMillis(7));
    assertThat(FiredTask.isFired(record)).isTrue();
  }

  @Test
  void shouldReadOccurrenceWhenRecordIsFiredRecurring() {
    FiredTask task = FiredTask.from(fired(firedHeaders().add("delay-occurrence", bytes("12"))));

    assertThat(task.occurrence()).hasValue(12);
  }

  @Test
  void shouldReadTheTenantWhenATenantsScheduleFired() {
    FiredTask tenants = FiredTask.from(fired(firedHeaders().add("delay-tenant", bytes("orders"))));
    FiredTask plain = FiredTask.from(fired(firedHeaders()));

    assertThat(tenants.tenant()).contains("orders");
    assertThat(plain.tenant()).isEmpty();
    assertThat(tenants).isNotEqualTo(plain);
    assertThat(tenants.toString()).contains("tenant=orders");
  }

  @Test
  void shouldReadLastValueWhenHeaderIsRepeated() {
    Headers headers = headers().add("delay-id", bytes("stale"));
    firedHeaders().forEach(headers::add);

    FiredTask task = FiredTask.from(fired(headers));

    assertThat(task.id()).isEqualTo("nightly");
  }

  @Test
  void shouldReadSameTaskWhenGivenHeadersOnly() {
    assertThat(FiredTask.from(firedHeaders())).isEqualTo(FiredTask.from(fired(firedHeaders())));
    assertThat(FiredTask.isFired(firedHeaders())).isTrue();
  }

  @Test
  void shouldRejectRecordWhenItIsNotFired() {
    ConsumerRecord<String, String> plain = fired(headers().add("traceparent", bytes("x")));

    assertThatThrownBy(() -> FiredTask.from(plain))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("not a kdelay fired record: header 'delay-id' is missing");
    assertThat(FiredTask.isFired(plain)).isFalse();
  }

  @Test
  void shouldRejectRecordWhenAKdelayHeaderIsMissing() {
    Headers headers = firedHeaders().remove("delay-fired-at");

    assertThatThrownBy(() -> FiredTask.from(fired(headers)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("not a kdelay fired record: header 'delay-fired-at' is missing");
    assertThat(FiredTask.isFired(fired(headers))).isFalse();
  }

  @Test
  void shouldRejectRecordWhenTimeIsNotANumber() {
    Headers headers =
        firedHeaders().remove("delay-due-at").add("delay-due-at", bytes("2026-03-01T09:00Z"));

    assertThatThrownBy(() -> FiredTask.from(fired(headers)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "not a kdelay fired record: header 'delay-due-at' must be a number, got"
                + " '2026-03-01T09:00Z'");
    assertThat(FiredTask.isFired(fired(headers))).isFalse();
  }

  @Test
  void shouldRejectRecordWhenOccurrenceIsNotPositive() {
    Headers headers = firedHeaders().add("delay-occurrence", bytes("0"));

    assertThatThrownBy(() -> FiredTask.from(fired(headers)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "not a kdelay fired record: header 'delay-occurrence' must be at least 1, got 0");
  }

  @Test
  void shouldRejectNullWhenReading() {
    assertThatThrownBy(() -> FiredTask.from((ConsumerRecord<?, ?>) null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("record cannot be null");
    assertThatThrownBy(() -> FiredTask.isFired((Headers) null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("headers cannot be null");
  }

  private static Headers firedHeaders() {
    return headers()
        .add("delay-id", bytes("nightly"))
        .add("delay-idempotency-key", bytes("nightly@" + DUE_MS))
        .add("delay-due-at", bytes(Long.toString(DUE_MS)))
        .add("delay-fired-at", bytes(Long.toString(DUE_MS + 3)));
  }

  private static Headers headers() {
    return new RecordHeaders();
  }

  private static ConsumerRecord<String, String> fired(Headers headers) {
    return new ConsumerRecord<>(
        "reports",
        0,
        42L,
        DUE_MS,
        TimestampType.CREATE_TIME,
        -1,
        -1,
        "nightly",
        "run",
        headers,
        Optional.empty());
  }

  private static byte[] bytes(String text) {
    return text.getBytes(UTF_8);
  }
}

package dev.kdelay.schemas;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The header names are the wire contract: a rename here breaks every client. */
class DelayHeadersTest {

  @Test
  void shouldUseTheContractNamesWhenNamingRequestHeaders() {
    assertThat(DelayHeaders.REQUEST_HEADERS)
        .containsExactlyInAnyOrder(
            "delay-action",
            "delay-target-topic",
            "delay-target-key",
            "delay-target-partition",
            "delay-fire-at",
            "delay-after",
            "delay-cron",
            "delay-cron-type",
            "delay-zone",
            "delay-start-at",
            "delay-end-at",
            "delay-max-fires",
            "delay-misfire");
  }

  @Test
  void shouldUseTheContractNamesWhenNamingOutputHeaders() {
    assertThat(DelayHeaders.OUTPUT_HEADERS)
        .containsExactlyInAnyOrder(
            "delay-id",
            "delay-tenant",
            "delay-idempotency-key",
            "delay-due-at",
            "delay-fired-at",
            "delay-occurrence",
            "delay-error",
            "delay-error-message",
            "delay-error-omitted",
            "delay-error-id",
            "delay-source",
            "delay-requested-at");
    assertThat(DelayHeaders.ID).isEqualTo("delay-id");
    assertThat(DelayHeaders.TENANT).isEqualTo("delay-tenant");
    assertThat(DelayHeaders.IDEMPOTENCY_KEY).isEqualTo("delay-idempotency-key");
    assertThat(DelayHeaders.DUE_AT).isEqualTo("delay-due-at");
    assertThat(DelayHeaders.FIRED_AT).isEqualTo("delay-fired-at");
    assertThat(DelayHeaders.OCCURRENCE).isEqualTo("delay-occurrence");
    assertThat(DelayHeaders.ERROR).isEqualTo("delay-error");
    assertThat(DelayHeaders.ERROR_MESSAGE).isEqualTo("delay-error-message");
    assertThat(DelayHeaders.ERROR_ID).isEqualTo("delay-error-id");
    assertThat(DelayHeaders.SOURCE).isEqualTo("delay-source");
    assertThat(DelayHeaders.REQUESTED_AT).isEqualTo("delay-requested-at");
  }

  @Test
  void shouldKeepRequestAndOutputHeadersApartWhenBothAreDefined() {
    Set<String> both = new HashSet<>(DelayHeaders.REQUEST_HEADERS);
    both.retainAll(DelayHeaders.OUTPUT_HEADERS);

    assertThat(both).isEmpty();
  }

  @Test
  void shouldNotCarryWhenHeaderIsARequestOrOutputHeader() {
    Set<String> all = new HashSet<>(DelayHeaders.REQUEST_HEADERS);
    all.addAll(DelayHeaders.OUTPUT_HEADERS);

    assertThat(all).noneMatch(DelayHeaders::isCarried);
  }

  @Test
  void shouldCarryWhenHeaderIsAnyOtherName() {
    assertThat(
            Set.of("traceparent", "tracestate", "Delay-Id", "DELAY-ACTION", "delay-priority", ""))
        .allMatch(DelayHeaders::isCarried);
  }

  @Test
  void shouldJoinIdAndDueTimeWithAnAtSignWhenMakingTheIdempotencyKey() {
    assertThat(DelayHeaders.idempotencyKey("order-42", 1_767_225_900_000L))
        .isEqualTo("order-42@1767225900000");
    assertThat(DelayHeaders.idempotencyKey("a@b", -5)).isEqualTo("a@b@-5");
  }
}

package dev.kdelay.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.schemas.DelayHeaders;
import java.time.Duration;
import java.time.Instant;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class DelayedMessageTest {

  private static final Instant DUE = Instant.parse("2026-03-01T09:00:00Z");

  @Test
  void shouldStampTheRequestWithTheGivenTimeOrLeaveItToTheProducer() {
    Instant stamp = DUE.minusSeconds(3_600);

    DelayedMessage stamped =
        DelayedMessage.builder("retry-1", "orders")
            .fireAt(DUE)
            .payload("p")
            .requestTimestamp(stamp)
            .build();
    DelayedMessage unstamped =
        DelayedMessage.builder("retry-1", "orders").fireAt(DUE).payload("p").build();

    assertThat(stamped.toRequest("delay-requests").timestamp()).isEqualTo(stamp.toEpochMilli());
    assertThat(unstamped.toRequest("delay-requests").timestamp()).isNull();
  }

  @Test
  void shouldExposeWhatWasSetWhenBuilt() {
    DelayedMessage message =
        DelayedMessage.builder("invoice-7", "reminders")
            .fireAt(DUE)
            .targetKey("customer-12".getBytes(UTF_8))
            .targetPartition(0)
            .payload("hello")
            .header("traceparent", new byte[] {1, 2})
            .build();

    assertThat(message.id()).isEqualTo("invoice-7");
    assertThat(message.targetTopic()).isEqualTo("reminders");
    assertThat(message.fireAt()).contains(DUE);
    assertThat(message.after()).isEmpty();
    assertThat(message.cron()).isEmpty();
    assertThat(message.targetKey()).contains("customer-12");
    assertThat(message.targetPartition()).hasValue(0);
    assertThat(message.payload()).isEqualTo("hello".getBytes(UTF_8));
    assertThat(message.isTombstone()).isFalse();
    assertThat(message.headers())
        .singleElement()
        .satisfies(
            header -> {
              assertThat(header.key()).isEqualTo("traceparent");
              assertThat(header.value()).containsExactly(1, 2);
            });
  }

  @Test
  void shouldStayUnchangedWhenCallerChangesArraysAfterwards() {
    byte[] payload = {1, 2, 3};
    byte[] headerValue = {4};
    DelayedMessage message =
        DelayedMessage.builder("a", "t")
            .after(Duration.ZERO)
            .payload(payload)
            .header("h", headerValue)
            .build();

    payload[0] = 9;
    headerValue[0] = 9;
    message.payload()[1] = 9;
    message.headers().get(0).value()[0] = 8;

    assertThat(message.payload()).containsExactly(1, 2, 3);
    assertThat(message.headers().get(0).value()).containsExactly(4);
  }

  @Test
  void shouldHaveNullPayloadWhenTombstone() {
    DelayedMessage message =
        DelayedMessage.builder("a", "t").cron(CronSchedule.of("0 0 * * * ?")).tombstone().build();

    assertThat(message.isTombstone()).isTrue();
    assertThat(message.payload()).isNull();
  }

  @Test
  void shouldAcceptIdWhenExactly1024Utf8Bytes() {
    String id = "€".repeat(341) + "x"; // 341 * 3 + 1 bytes

    assertThat(DelayedMessage.builder(id, "t").after(Duration.ZERO).payload("").build().id())
        .isEqualTo(id);
  }

  @Test
  void shouldRejectIdWhenLongerThan1024Utf8Bytes() {
    String id = "€".repeat(342); // 342 characters, 1026 bytes

    assertThatThrownBy(() -> DelayedMessage.builder(id, "t"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("id must be 1..1024 UTF-8 bytes, got 1026 bytes: '€€€")
        .hasMessageEndingWith("...'");
  }

  @Test
  void shouldRejectIdWhenEmpty() {
    assertThatThrownBy(() -> DelayedMessage.builder("", "t"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("id must be 1..1024 UTF-8 bytes, got 0 bytes: ''");
  }

  @Test
  void shouldRejectIdWhenItHoldsAnUnpairedSurrogate() {
    assertThatThrownBy(() -> DelayedMessage.builder("order-\uD800", "t"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("id must be well-formed Unicode text, got 'order-\uD800'");
  }

  @Test
  void shouldNameTheArgumentWhenItIsNull() {
    assertThatThrownBy(() -> DelayedMessage.builder(null, "t"))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("id cannot be null");
    assertThatThrownBy(() -> DelayedMessage.builder("a", null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("targetTopic cannot be null");
    DelayedMessage.Builder builder = DelayedMessage.builder("a", "t");
    assertThatThrownBy(() -> builder.fireAt(null)).hasMessage("dueAt cannot be null");
    assertThatThrownBy(() -> builder.after(null)).hasMessage("delay cannot be null");
    assertThatThrownBy(() -> builder.cron(null)).hasMessage("cron cannot be null");
    assertThatThrownBy(() -> builder.targetKey((String) null))
        .hasMessage("targetKey cannot be null");
    assertThatThrownBy(() -> builder.header(null, new byte[0])).hasMessage("name cannot be null");
  }

  @Test
  void shouldPointToTombstoneWhenPayloadIsNull() {
    DelayedMessage.Builder builder = DelayedMessage.builder("a", "t");

    assertThatThrownBy(() -> builder.payload((byte[]) null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("payload cannot be null; use tombstone() for a delayed delete");
    assertThatThrownBy(() -> builder.payload((String) null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("payload cannot be null; use tombstone() for a delayed delete");
  }

  @Test
  void shouldRejectTargetTopicWhenNotALegalTopicName() {
    assertThatThrownBy(() -> DelayedMessage.builder("a", "orders/eu"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "targetTopic must be a legal Kafka topic name (1..249 of [a-zA-Z0-9._-], not '.' or"
                + " '..'), got 'orders/eu'");
    assertThatThrownBy(() -> DelayedMessage.builder("a", ".."))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> DelayedMessage.builder("a", "t".repeat(250)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void shouldRejectBuildWhenNoTimeIsSet() {
    DelayedMessage.Builder builder = DelayedMessage.builder("a", "t").payload("x");

    assertThatThrownBy(builder::build)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("exactly one of fireAt, after and cron must be set for 'a', got none");
  }

  @Test
  void shouldRejectBuildWhenMoreThanOneTimeIsSet() {
    DelayedMessage.Builder builder =
        DelayedMessage.builder("a", "t")
            .fireAt(DUE)
            .cron(CronSchedule.of("0 0 * * * ?"))
            .payload("x");

    assertThatThrownBy(builder::build)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "exactly one of fireAt, after and cron must be set for 'a', got fireAt and cron");
  }

  @Test
  void shouldRejectBuildWhenNeitherPayloadNorTombstoneIsSet() {
    DelayedMessage.Builder builder = DelayedMessage.builder("a", "t").fireAt(DUE);

    assertThatThrownBy(builder::build)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("a payload must be set for 'a', or tombstone() for a delayed delete");
  }

  @Test
  void shouldRejectPartitionWhenNegative() {
    assertThatThrownBy(() -> DelayedMessage.builder("a", "t").targetPartition(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("partition must not be negative, got -1");
  }

  @Test
  void shouldRejectDelayWhenNegativeOrTooLong() {
    assertThatThrownBy(() -> DelayedMessage.builder("a", "t").after(Duration.ofSeconds(-5)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("delay must not be negative, got PT-5S");
    assertThatThrownBy(
            () -> DelayedMessage.builder("a", "t").after(Duration.ofSeconds(Long.MAX_VALUE)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("delay must fit in a long of milliseconds");
  }

  @Test
  void shouldRejectFireAtWhenOutsideEpochMillis() {
    assertThatThrownBy(() -> DelayedMessage.builder("a", "t").fireAt(Instant.MAX))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("dueAt must be within the range of epoch milliseconds");
  }

  @Test
  void shouldRejectTargetKeyWhenBytesAreNotUtf8() {
    assertThatThrownBy(
            () -> DelayedMessage.builder("a", "t").targetKey(new byte[] {(byte) 0xC3, 0x28}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("targetKey must be well-formed UTF-8, got 2 bytes that are not");
  }

  @ParameterizedTest
  @MethodSource("kdelayHeaders")
  void shouldRejectCarriedHeaderWhenNameIsReservedByKdelay(String name) {
    DelayedMessage.Builder builder = DelayedMessage.builder("a", "t");

    assertThatThrownBy(() -> builder.header(name, new byte[0]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("header name '" + name + "' is reserved by kdelay and cannot be carried");
  }

  static Stream<String> kdelayHeaders() {
    return Stream.concat(
        DelayHeaders.REQUEST_HEADERS.stream(), DelayHeaders.OUTPUT_HEADERS.stream());
  }
}

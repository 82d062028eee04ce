package dev.kdelay.client.retry;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.client.retry.RetryOutcome.DeadLettered;
import dev.kdelay.client.retry.RetryOutcome.Retried;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.LongSerializer;
import org.junit.jupiter.api.Test;

class RetryHandlerTest {

  private static final Instant NOW = Instant.parse("2026-03-01T09:00:00.100Z");

  /** A consumer's group metadata, from the mock: its constructors are deprecated for removal. */
  private static final ConsumerGroupMetadata GROUP =
      new MockConsumer<byte[], byte[]>("earliest").groupMetadata();

  private final MockProducer<byte[], byte[]> producer =
      new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer());
  private final RetryPolicy policy =
      RetryPolicy.builder()
          .maxAttempts(3)
          .initialDelay(Duration.ofSeconds(1))
          .jitter(0)
          .notRetryable(IllegalArgumentException.class)
          .build();
  private final RetryHandler handler =
      RetryHandler.builder(producer, "billing")
          .requestsTopic("requests")
          .policy(policy)
          .deadLetterTopic("orders.dlt")
          .clock(Clock.fixed(NOW, ZoneOffset.UTC))
          .build();

  @Test
  void shouldScheduleTheRecordBackToItsTopicWhenTheFirstAttemptFails() {
    // given
    ConsumerRecord<byte[], byte[]> record =
        record("orders", 2, 17, "order-42", headers("trace", "t1"));

    // when
    RetryOutcome outcome = handler.handle(record, new IllegalStateException("down")).join();

    // then
    assertThat(outcome)
        .isEqualTo(new Retried(1, "orders", "billing:orders:2:17:1", NOW.plusSeconds(1)));
    ProducerRecord<byte[], byte[]> request = onlySent();
    assertThat(request.topic()).isEqualTo("requests");
    assertThat(text(request.key())).isEqualTo("billing:orders:2:17:1");
    assertThat(text(request.value())).isEqualTo("value of order-42");
    assertThat(headers(request.headers()))
        .containsExactly(
            "delay-action=schedule",
            "delay-target-topic=orders",
            "delay-target-key=order-42",
            "delay-fire-at=" + NOW.plusSeconds(1).toEpochMilli(),
            "trace=t1",
            "kdelay-retry-attempt=1",
            "kdelay-retry-first-failure-at=" + NOW.toEpochMilli(),
            "kdelay-retry-origin-topic=orders",
            "kdelay-retry-origin-partition=2",
            "kdelay-retry-origin-offset=17",
            "kdelay-retry-exception=java.lang.IllegalStateException",
            "kdelay-retry-exception-message=down");
  }

  @Test
  void shouldCountOnFromTheRetryHeadersWhenARetryFailsAgain() {
    // given: the first retry, as kdelay fired it on the retry topic
    Headers fired = headers("trace", "t1");
    handler.handle(record("orders", 2, 17, "order-42", fired), new IllegalStateException("down"));
    Headers retryHeaders = new RecordHeaders(onlySent().headers().toArray());
    retryHeaders.add("delay-id", bytes("billing:orders:2:17:1"));
    retryHeaders.remove("delay-action");
    producer.clear();

    // when
    RetryOutcome outcome =
        handler
            .handle(
                record("orders", 0, 99, "order-42", retryHeaders),
                new IllegalStateException("again"))
            .join();

    // then: attempt 2, the origin and first failure kept, the delay doubled
    assertThat(outcome)
        .isEqualTo(new Retried(2, "orders", "billing:orders:2:17:2", NOW.plusSeconds(2)));
    List<String> headers = headers(onlySent().headers());
    assertThat(headers)
        .contains(
            "kdelay-retry-attempt=2",
            "kdelay-retry-origin-partition=2",
            "kdelay-retry-origin-offset=17",
            "kdelay-retry-exception-message=again")
        .containsOnlyOnce("kdelay-retry-attempt=2", "trace=t1")
        .noneMatch(header -> header.startsWith("delay-id") || header.endsWith("down"));
  }

  @Test
  void shouldGiveTheSameScheduleIdWhenTheSameFailureIsHandledTwice() {
    ConsumerRecord<byte[], byte[]> record = record("orders", 2, 17, "order-42", headers());

    RetryOutcome first = handler.handle(record, new IllegalStateException()).join();
    RetryOutcome second = handler.handle(record, new IllegalStateException()).join();

    assertThat(((Retried) second).scheduleId()).isEqualTo(((Retried) first).scheduleId());
  }

  @Test
  void shouldDeadLetterWithEveryHeaderWhenTheLastAttemptFails() {
    // given: a record that failed twice already
    Headers headers = headers("trace", "t1");
    headers.add(RetryHeaders.ATTEMPT, bytes("2"));
    headers.add(RetryHeaders.FIRST_FAILURE_AT, bytes("1000"));
    headers.add(RetryHeaders.ORIGIN_TOPIC, bytes("orders"));
    headers.add(RetryHeaders.ORIGIN_PARTITION, bytes("2"));
    headers.add(RetryHeaders.ORIGIN_OFFSET, bytes("17"));

    // when
    RetryOutcome outcome =
        handler
            .handle(record("orders", 1, 40, "order-42", headers), new IllegalStateException("x"))
            .join();

    // then
    assertThat(outcome)
        .isEqualTo(new DeadLettered(3, "orders.dlt", DeadLetterReason.ATTEMPTS_EXHAUSTED));
    ProducerRecord<byte[], byte[]> letter = onlySent();
    assertThat(letter.topic()).isEqualTo("orders.dlt");
    assertThat(text(letter.key())).isEqualTo("order-42");
    assertThat(headers(letter.headers()))
        .containsExactly(
            "trace=t1",
            "kdelay-retry-attempt=3",
            "kdelay-retry-first-failure-at=1000",
            "kdelay-retry-origin-topic=orders",
            "kdelay-retry-origin-partition=2",
            "kdelay-retry-origin-offset=17",
            "kdelay-retry-exception=java.lang.IllegalStateException",
            "kdelay-retry-exception-message=x",
            "kdelay-retry-dead-letter-reason=ATTEMPTS_EXHAUSTED");
  }

  @Test
  void shouldDeadLetterAtOnceWhenTheExceptionIsNotRetryable() {
    RetryOutcome outcome =
        handler
            .handle(
                record("orders", 0, 5, "k", headers()),
                new RuntimeException(new NumberFormatException()))
            .join();

    assertThat(outcome)
        .isEqualTo(new DeadLettered(1, "orders.dlt", DeadLetterReason.NOT_RETRYABLE));
    assertThat(headers(onlySent().headers())).contains("kdelay-retry-attempt=1");
  }

  @Test
  void shouldDeadLetterWhenTheKeyIsNotText() {
    ConsumerRecord<byte[], byte[]> record =
        new ConsumerRecord<>(
            "orders",
            0,
            5,
            0L,
            TimestampType.CREATE_TIME,
            0,
            0,
            new byte[] {(byte) 0xff},
            bytes("v"),
            headers(),
            Optional.empty());

    RetryOutcome outcome = handler.handle(record, new IllegalStateException()).join();

    assertThat(outcome).isEqualTo(new DeadLettered(1, "orders.dlt", DeadLetterReason.KEY_NOT_TEXT));
    assertThat(onlySent().key()).containsExactly((byte) 0xff);
  }

  @Test
  void shouldLeaveOutKdelayRequestHeadersWhenRetrying() {
    Headers headers = headers("delay-after", "PT1H");
    headers.add("delay-target-topic", bytes("elsewhere"));

    handler.handle(record("orders", 0, 5, "k", headers), new IllegalStateException()).join();

    assertThat(headers(onlySent().headers()))
        .containsOnlyOnce("delay-target-topic=orders")
        .doesNotContain("delay-after=PT1H", "delay-target-topic=elsewhere");
  }

  @Test
  void shouldBoundTheExceptionMessage() {
    handler
        .handle(
            record("orders", 0, 5, "k", headers()), new IllegalStateException("x".repeat(100_000)))
        .join();

    byte[] message = onlySent().headers().lastHeader(RetryHeaders.EXCEPTION_MESSAGE).value();
    assertThat(text(message)).hasSize(RetryHeaders.MAX_MESSAGE_CHARS).endsWith("x...");
  }

  @Test
  void shouldKeyTheRetryByItsScheduleIdWhenTheRecordHasNoKey() {
    ConsumerRecord<byte[], byte[]> record = new ConsumerRecord<>("orders", 0, 5, null, bytes("v"));

    handler.handle(record, new IllegalStateException()).join();

    assertThat(headers(onlySent().headers())).noneMatch(h -> h.startsWith("delay-target-key"));
  }

  @Test
  void shouldSerializeTypedValuesWithTheConfiguredSerializer() {
    RetryHandler typed =
        RetryHandler.builder(producer, "billing").valueSerializer(new LongSerializer()).build();

    typed.handle(new ConsumerRecord<>("orders", 0, 5, "k", 7L), new IllegalStateException()).join();

    assertThat(onlySent().value()).isEqualTo(new LongSerializer().serialize("orders", 7L));
  }

  @Test
  void shouldRefuseATypedValueWithoutASerializer() {
    assertThatThrownBy(
            () ->
                handler.handle(
                    new ConsumerRecord<>("orders", 0, 5, "k", 7L), new IllegalStateException()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("java.lang.Long")
        .hasMessageContaining("value serializer");
  }

  @Test
  void shouldCommitTheRetryAndTheOffsetTogetherWhenInATransaction() {
    producer.initTransactions();

    RetryOutcome outcome =
        handler.handleInTransaction(
            record("orders", 2, 17, "k", headers()), new IllegalStateException(), GROUP);

    assertThat(outcome).isInstanceOf(Retried.class);
    assertThat(producer.transactionCommitted()).isTrue();
    assertThat(producer.history()).hasSize(1);
    assertThat(producer.consumerGroupOffsetsHistory())
        .containsExactly(
            Map.of(
                GROUP.groupId(),
                Map.of(new TopicPartition("orders", 2), new OffsetAndMetadata(18))));
  }

  @Test
  void shouldAbortTheTransactionWhenTheSendFails() {
    MockProducer<byte[], byte[]> failing =
        new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer());
    failing.initTransactions();
    RetryHandler transactional = RetryHandler.builder(failing, "billing").build();
    ConsumerRecord<byte[], byte[]> record = record("orders", 0, 5, "k", headers());
    // A send that fails before it reaches the broker: the transaction alone would still commit.
    failing.sendException = new org.apache.kafka.common.errors.TimeoutException("no broker");

    assertThatThrownBy(
            () -> transactional.handleInTransaction(record, new IllegalStateException(), GROUP))
        .hasRootCauseInstanceOf(org.apache.kafka.common.errors.TimeoutException.class);
    assertThat(failing.transactionAborted()).isTrue();
    assertThat(failing.transactionCommitted()).isFalse();
  }

  private ProducerRecord<byte[], byte[]> onlySent() {
    assertThat(producer.history()).hasSize(1);
    return producer.history().get(0);
  }

  private static ConsumerRecord<byte[], byte[]> record(
      String topic, int partition, long offset, String key, Headers headers) {
    return new ConsumerRecord<>(
        topic,
        partition,
        offset,
        0L,
        TimestampType.CREATE_TIME,
        0,
        0,
        bytes(key),
        bytes("value of " + key),
        headers,
        Optional.empty());
  }

  private static Headers headers(String... namesAndValues) {
    Headers headers = new RecordHeaders();
    for (int i = 0; i < namesAndValues.length; i += 2) {
      headers.add(namesAndValues[i], bytes(namesAndValues[i + 1]));
    }
    return headers;
  }

  private static List<String> headers(Headers headers) {
    return java.util.Arrays.stream(headers.toArray())
        .map((Header h) -> h.key() + "=" + text(h.value()))
        .toList();
  }

  private static byte[] bytes(String text) {
    return text.getBytes(UTF_8);
  }

  private static String text(byte[] bytes) {
    return new String(bytes, UTF_8);
  }
}

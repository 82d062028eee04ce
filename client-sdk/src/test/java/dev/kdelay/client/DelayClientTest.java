package dev.kdelay.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.schemas.CronFlavor;
import dev.kdelay.schemas.Misfire;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

class DelayClientTest {

  private static final String REQUESTS = "delay-requests";
  private static final Instant DUE = Instant.parse("2026-03-01T09:00:00.123Z");

  private final MockProducer<byte[], byte[]> producer =
      new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer());
  private final DelayClient client = new DelayClient(producer, REQUESTS);

  @Test
  void shouldWriteFireAtAsEpochMillisWhenScheduledAt() {
    client.scheduleAt("order-42", "orders", DUE, bytes("timeout"));

    ProducerRecord<byte[], byte[]> request = onlyRequest();
    assertThat(request.topic()).isEqualTo(REQUESTS);
    assertThat(request.key()).isEqualTo(bytes("order-42"));
    assertThat(request.value()).isEqualTo(bytes("timeout"));
    assertThat(headers(request))
        .containsExactly(
            "delay-action=schedule", "delay-target-topic=orders", "delay-fire-at=1772355600123");
  }

  @Test
  void shouldWriteToATenantsTopicWithTheSameProducerAndLeaveItOpenWhenClosed() {
    DelayClient tenants = client.onTopic(REQUESTS + ".orders");

    tenants.cancel("order-42");
    tenants.close();
    client.cancel("order-43");

    assertThat(producer.history())
        .extracting(ProducerRecord::topic)
        .containsExactly(REQUESTS + ".orders", REQUESTS);
    assertThat(producer.closed()).isFalse();
    assertThatThrownBy(() -> client.onTopic("not a topic"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void shouldWriteDelayAsMillisWhenScheduledAfter() {
    client.scheduleAfter("order-42", "orders", Duration.ofMinutes(15), bytes("timeout"));

    ProducerRecord<byte[], byte[]> request = onlyRequest();
    assertThat(request.topic()).isEqualTo(REQUESTS);
    assertThat(request.key()).isEqualTo(bytes("order-42"));
    assertThat(request.value()).isEqualTo(bytes("timeout"));
    assertThat(headers(request))
        .containsExactly(
            "delay-action=schedule", "delay-target-topic=orders", "delay-after=900000");
  }

  @Test
  void shouldWriteCronWithDefaultsWhenScheduledCronWithExpressionOnly() {
    client.scheduleCron("nightly", "reports", CronSchedule.of("0 15 2 * * ?"), bytes("run"));

    ProducerRecord<byte[], byte[]> request = onlyRequest();
    assertThat(request.topic()).isEqualTo(REQUESTS);
    assertThat(request.key()).isEqualTo(bytes("nightly"));
    assertThat(request.value()).isEqualTo(bytes("run"));
    assertThat(headers(request))
        .containsExactly(
            "delay-action=schedule",
            "delay-target-topic=reports",
            "delay-cron=0 15 2 * * ?",
            "delay-cron-type=quartz",
            "delay-zone=UTC",
            "delay-misfire=fire-once");
  }

  @Test
  void shouldWriteEveryCronOptionWhenScheduledCronWithAllOptions() {
    CronSchedule cron =
        CronSchedule.of("15 2 * * *")
            .type(CronFlavor.UNIX)
            .zone(ZoneId.of("Europe/Berlin"))
            .startAt(Instant.ofEpochMilli(1_000))
            .endAt(Instant.ofEpochMilli(2_000))
            .maxFires(7)
            .misfire(Misfire.FIRE_ALL);

    client.scheduleCron("nightly", "reports", cron, bytes("run"));

    ProducerRecord<byte[], byte[]> request = onlyRequest();
    assertThat(request.topic()).isEqualTo(REQUESTS);
    assertThat(request.key()).isEqualTo(bytes("nightly"));
    assertThat(request.value()).isEqualTo(bytes("run"));
    assertThat(headers(request))
        .containsExactly(
            "delay-action=schedule",
            "delay-target-topic=reports",
            "delay-cron=15 2 * * *",
            "delay-cron-type=unix",
            "delay-zone=Europe/Berlin",
            "delay-start-at=1000",
            "delay-end-at=2000",
            "delay-max-fires=7",
            "delay-misfire=fire-all");
  }

  @Test
  void shouldWriteTargetAndCarriedHeadersInOrderWhenMessageHasThem() {
    DelayedMessage message =
        DelayedMessage.builder("invoice-7", "reminders")
            .fireAt(DUE)
            .targetKey("customer-12")
            .targetPartition(3)
            .payload("{\"invoice\":7}")
            .header("traceparent", bytes("00-abc-def-01"))
            .header("tenant", bytes("acme"))
            .header("tenant", null)
            .build();

    client.schedule(message);

    ProducerRecord<byte[], byte[]> request = onlyRequest();
    assertThat(request.topic()).isEqualTo(REQUESTS);
    assertThat(request.key()).isEqualTo(bytes("invoice-7"));
    assertThat(request.value()).isEqualTo(bytes("{\"invoice\":7}"));
    assertThat(headers(request))
        .containsExactly(
            "delay-action=schedule",
            "delay-target-topic=reminders",
            "delay-target-key=customer-12",
            "delay-target-partition=3",
            "delay-fire-at=1772355600123",
            "traceparent=00-abc-def-01",
            "tenant=acme",
            "tenant=null");
  }

  @Test
  void shouldWriteNullValueWithExplicitScheduleActionWhenTombstoneScheduled() {
    client.schedule(
        DelayedMessage.builder("expire-user-9", "users")
            .after(Duration.ofDays(30))
            .targetKey("user-9")
            .tombstone()
            .build());

    ProducerRecord<byte[], byte[]> request = onlyRequest();
    assertThat(request.topic()).isEqualTo(REQUESTS);
    assertThat(request.key()).isEqualTo(bytes("expire-user-9"));
    assertThat(request.value()).isNull();
    assertThat(headers(request))
        .containsExactly(
            "delay-action=schedule",
            "delay-target-topic=users",
            "delay-target-key=user-9",
            "delay-after=2592000000");
  }

  @Test
  void shouldWriteCancelActionWithNullValueWhenCancelled() {
    client.cancel("order-42");

    assertControlRequest("order-42", "delay-action=cancel");
  }

  @Test
  void shouldWritePauseActionWithNullValueWhenPaused() {
    client.pause("nightly");

    assertControlRequest("nightly", "delay-action=pause");
  }

  @Test
  void shouldWriteResumeActionWithNullValueWhenResumed() {
    client.resume("nightly");

    assertControlRequest("nightly", "delay-action=resume");
  }

  @Test
  void shouldWriteTriggerActionWithNullValueWhenTriggered() {
    client.trigger("nightly");

    assertControlRequest("nightly", "delay-action=trigger");
  }

  @Test
  void shouldWriteTheNewDueTimeWithoutTargetOrPayloadWhenRescheduledAt() {
    client.rescheduleAt("order-42", DUE);

    assertControlRequest(
        "order-42", "delay-action=reschedule", "delay-fire-at=" + DUE.toEpochMilli());
  }

  @Test
  void shouldWriteTheDelayAsMillisWhenRescheduledAfter() {
    client.rescheduleAfter("order-42", Duration.ofMinutes(30));

    assertControlRequest("order-42", "delay-action=reschedule", "delay-after=1800000");
  }

  @Test
  void shouldWriteTheCronHeadersWhenRescheduledToACron() {
    client.rescheduleCron(
        "nightly", CronSchedule.of("0 15 2 * * ?").zone(ZoneId.of("Europe/Berlin")));

    assertControlRequest(
        "nightly",
        "delay-action=reschedule",
        "delay-cron=0 15 2 * * ?",
        "delay-cron-type=quartz",
        "delay-zone=Europe/Berlin",
        "delay-misfire=fire-once");
  }

  @Test
  void shouldSendNothingWhenARescheduleIsInvalid() {
    assertThatThrownBy(() -> client.rescheduleAfter("order-42", Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> client.rescheduleAt("order-42", null))
        .isInstanceOf(NullPointerException.class);

    assertThat(producer.history()).isEmpty();
  }

  @Test
  void shouldCompleteWithMetadataWhenSendSucceeds() throws Exception {
    RecordMetadata metadata = client.scheduleAt("a", "t", DUE, bytes("x")).get();

    assertThat(metadata.topic()).isEqualTo(REQUESTS);
  }

  @Test
  void shouldCompleteExceptionallyWhenSendFails() {
    MockProducer<byte[], byte[]> manual =
        new MockProducer<>(false, null, new ByteArraySerializer(), new ByteArraySerializer());
    DelayClient manualClient = new DelayClient(manual, REQUESTS);
    List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
    futures.add(manualClient.scheduleAt("a", "t", DUE, bytes("x")));
    futures.add(manualClient.cancel("a"));
    futures.add(manualClient.pause("a"));
    futures.add(manualClient.resume("a"));
    NotLeaderOrFollowerException failure = new NotLeaderOrFollowerException("broker gone");

    assertThat(futures).noneMatch(CompletableFuture::isDone);
    while (manual.errorNext(failure)) {
      // fail every pending send
    }

    assertThat(futures)
        .allSatisfy(
            future ->
                assertThatThrownBy(future::get)
                    .isInstanceOf(ExecutionException.class)
                    .hasCause(failure));
  }

  @Test
  void shouldCompleteExceptionallyWhenProducerThrowsOnSend() {
    IllegalStateException failure = new IllegalStateException("producer fenced");
    producer.sendException = failure;

    CompletableFuture<RecordMetadata> future = client.cancel("a");

    assertThat(future).isCompletedExceptionally();
    assertThatThrownBy(future::get).hasCause(failure);
  }

  @Test
  void shouldLeaveGivenProducerOpenWhenClosed() {
    client.close();

    assertThat(producer.closed()).isFalse();
  }

  @Test
  void shouldCloseOwnProducerWhenClosed() {
    DelayClient own =
        DelayClient.create(
            Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:9"), REQUESTS);

    own.close();

    assertThat(own.cancel("a")).isCompletedExceptionally();
  }

  @Test
  void shouldForceSerializersAcksAndIdempotenceWhenCreatingProducer() {
    Map<String, Object> config =
        DelayClient.producerConfig(
            Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "broker:9092",
                ProducerConfig.ACKS_CONFIG, "1",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false));

    assertThat(config)
        .containsEntry(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "broker:9092")
        .containsEntry(ProducerConfig.ACKS_CONFIG, "all")
        .containsEntry(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true)
        .containsEntry(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class)
        .containsEntry(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
  }

  @Test
  void shouldRejectArgumentsWhenConstructing() {
    assertThatThrownBy(() -> new DelayClient(null, REQUESTS))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("producer cannot be null");
    assertThatThrownBy(() -> new DelayClient(producer, null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("requestsTopic cannot be null");
    assertThatThrownBy(() -> new DelayClient(producer, "delay requests"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'delay requests'");
    assertThatThrownBy(() -> DelayClient.create(null, REQUESTS))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("producerConfig cannot be null");
  }

  @Test
  void shouldSendNothingWhenIdIsInvalid() {
    assertThatThrownBy(() -> client.cancel(""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("id must be 1..1024 UTF-8 bytes, got 0 bytes: ''");
    assertThatThrownBy(() -> client.pause(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("id cannot be null");
    assertThatThrownBy(() -> client.scheduleAfter("a", "t", Duration.ofMillis(-1), bytes("x")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("delay must not be negative, got PT-0.001S");

    assertThat(producer.history()).isEmpty();
  }

  private void assertControlRequest(String id, String... headers) {
    ProducerRecord<byte[], byte[]> request = onlyRequest();
    assertThat(request.topic()).isEqualTo(REQUESTS);
    assertThat(request.key()).isEqualTo(bytes(id));
    assertThat(request.value()).isNull();
    assertThat(headers(request)).containsExactly(headers);
  }

  private ProducerRecord<byte[], byte[]> onlyRequest() {
    assertThat(producer.history()).hasSize(1);
    return producer.history().get(0);
  }

  /** Headers as {@code name=value} text, in record order, so order and values are checked. */
  private static List<String> headers(ProducerRecord<byte[], byte[]> record) {
    List<String> headers = new ArrayList<>();
    for (Header header : record.headers()) {
      String value = header.value() == null ? "null" : new String(header.value(), UTF_8);
      headers.add(header.key() + "=" + value);
    }
    return headers;
  }

  private static byte[] bytes(String text) {
    return text.getBytes(UTF_8);
  }
}

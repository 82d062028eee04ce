package dev.kdelay.topology;

import static dev.kdelay.topology.DelayDriver.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.topology.internals.delivery.Causes;
import dev.kdelay.topology.internals.delivery.DeliveryFailureHandler;
import dev.kdelay.topology.internals.delivery.DeliveryQuarantine;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.InvalidTimestampException;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.ProductionExceptionHandler.Result;
import org.junit.jupiter.api.Test;

class DeliveryFailureHandlerTest {

  private final DelayConfig config = new DelayConfig(Map.of());
  private final DeliveryQuarantine quarantine = new DeliveryQuarantine(config);
  private final DeliveryFailureHandler handler = installed();

  @Test
  void shouldQuarantineARefusedFiredRecordByItsIdempotencyKeyAndFail() {
    RecordHeaders headers = new RecordHeaders();
    headers.add("traceparent", bytes("x"));
    headers.add(DelayHeaders.IDEMPOTENCY_KEY, bytes("order-1@1700000000000"));
    ProducerRecord<byte[], byte[]> fired =
        new ProducerRecord<>("orders", null, 1_700_000_000_000L, bytes("k"), bytes("v"), headers);

    Result result =
        handler.handleError(null, fired, new RecordTooLargeException("too large")).result();

    assertThat(result).isEqualTo(Result.FAIL);
    assertThat(quarantine.refusal(Causes.fired("order-1@1700000000000")))
        .hasValueSatisfying(
            refusal -> {
              assertThat(refusal.count()).isEqualTo(1);
              assertThat(refusal.error()).isEqualTo("MESSAGE_TOO_LARGE: too large");
            });
    assertThat(quarantine.refusedSize("orders")).isPresent();
  }

  @Test
  void shouldQuarantineARefusedDeadLetterByItsCodeAndSourceWhateverItsTimeAndMessage() {
    RecordHeaders headers = new RecordHeaders();
    headers.add(DelayHeaders.ERROR, bytes("BAD_TIME"));
    headers.add(DelayHeaders.ERROR_MESSAGE, bytes("delay-fire-at is not a time"));
    headers.add(DelayHeaders.SOURCE, bytes("delay-requests-3@17"));
    ProducerRecord<byte[], byte[]> deadLetter =
        new ProducerRecord<>(config.dlqTopic(), null, 42L, null, null, headers);
    RecordHeaders retried = new RecordHeaders(headers.toArray());
    retried.remove(DelayHeaders.ERROR_MESSAGE);
    retried.add(DelayHeaders.ERROR_MESSAGE, bytes("another wording"));
    ProducerRecord<byte[], byte[]> retry =
        new ProducerRecord<>(config.dlqTopic(), null, 4_242L, null, null, retried);

    handler.handleError(null, deadLetter, new InvalidTimestampException("old"));
    handler.handleError(null, retry, new InvalidTimestampException("old"));

    assertThat(quarantine.refusal(Causes.deadLetter(headers)))
        .hasValueSatisfying(refusal -> assertThat(refusal.count()).isEqualTo(2));
  }

  @Test
  void shouldFailWithoutQuarantiningARecordItCannotTraceToATask() {
    ProducerRecord<byte[], byte[]> changelog =
        new ProducerRecord<>("kdelay-delay-tasks-changelog", bytes("k"), bytes("v"));

    Result result =
        handler.handleError(null, changelog, new RecordTooLargeException("too large")).result();

    assertThat(result).isEqualTo(Result.FAIL);
    assertThat(quarantine.isEmpty()).isTrue();
  }

  @Test
  void shouldRetryWithoutQuarantiningWhatSaysNothingOfTheRecordButOfTheCluster() {
    RecordHeaders headers = new RecordHeaders();
    headers.add(DelayHeaders.IDEMPOTENCY_KEY, bytes("order-1@1700000000000"));
    ProducerRecord<byte[], byte[]> fired =
        new ProducerRecord<>("orders", null, 1_700_000_000_000L, bytes("k"), bytes("v"), headers);

    Result timedOut =
        handler
            .handleError(null, fired, new TimeoutException("orders not present in metadata"))
            .result();
    Result shortOfReplicas =
        handler.handleError(null, fired, new NotEnoughReplicasException("2 of 3")).result();

    // Kafka Streams closes the thread's tasks and revives them; the thread is not replaced.
    assertThat(timedOut).isEqualTo(Result.RETRY);
    assertThat(shortOfReplicas).isEqualTo(Result.RETRY);
    assertThat(quarantine.isEmpty()).isTrue();
  }

  @Test
  void shouldRefuseToStartWithoutTheQuarantineOfItsInstance() {
    assertThatThrownBy(() -> new DeliveryFailureHandler().configure(Map.of()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(DeliveryFailureHandler.CONFIG);
  }

  private DeliveryFailureHandler installed() {
    Properties props = new Properties();
    DeliveryFailureHandler.install(props, quarantine);
    assertThat(props.get(StreamsConfig.PRODUCTION_EXCEPTION_HANDLER_CLASS_CONFIG))
        .isEqualTo(DeliveryFailureHandler.class);
    DeliveryFailureHandler installed = new DeliveryFailureHandler();
    @SuppressWarnings("unchecked")
    Map<String, Object> configs = (Map<String, Object>) (Map<?, ?>) props;
    installed.configure(configs);
    return installed;
  }
}

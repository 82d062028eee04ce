package dev.kdelay.service.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

class WatchCommandTest {

  @Test
  void shouldPrintIdsTimesAndLatenessWhenTheRecordWasFired() {
    // given
    RecordHeaders headers = new RecordHeaders();
    headers.add(DelayHeaders.ID, bytes("order-42"));
    headers.add(DelayHeaders.IDEMPOTENCY_KEY, bytes("order-42@1893488400000"));
    headers.add(DelayHeaders.DUE_AT, bytes("1893488400000"));
    headers.add(DelayHeaders.FIRED_AT, bytes("1893488400004"));
    ConsumerRecord<String, String> record = record("k-42", "{}", headers);

    // when
    String line = WatchCommand.describe(record, Instant.ofEpochMilli(1893488400012L));

    // then
    assertThat(line)
        .isEqualTo(
            "fired timeouts-2@17 id=order-42 idempotency-key=order-42@1893488400000 key=k-42"
                + " due=2030-01-01T09:00:00Z fired=2030-01-01T09:00:00.004Z lateness=12 ms"
                + " value={}");
  }

  @Test
  void shouldNameTheTenantWhenATenantsTaskFired() {
    RecordHeaders headers = new RecordHeaders();
    headers.add(DelayHeaders.ID, bytes("job-3"));
    headers.add(DelayHeaders.TENANT, bytes("orders"));
    headers.add(DelayHeaders.IDEMPOTENCY_KEY, bytes("job-3@1893488400000"));
    headers.add(DelayHeaders.DUE_AT, bytes("1893488400000"));
    headers.add(DelayHeaders.FIRED_AT, bytes("1893488400004"));

    String line =
        WatchCommand.describe(record("job-3", "{}", headers), Instant.ofEpochMilli(1893488400012L));

    assertThat(line).startsWith("fired timeouts-2@17 tenant=orders id=job-3 idempotency-key=");
  }

  @Test
  void shouldSayItWasNotFiredWhenTheRecordHasNoKdelayHeaders() {
    String line = WatchCommand.describe(record("k", "plain", new RecordHeaders()), Instant.now());

    assertThat(line).isEqualTo("record timeouts-2@17 (not fired by kdelay) key=k value=plain");
  }

  private static ConsumerRecord<String, String> record(
      String key, String value, RecordHeaders headers) {
    return new ConsumerRecord<>(
        "timeouts",
        2,
        17,
        1893488400000L,
        TimestampType.CREATE_TIME,
        -1,
        -1,
        key,
        value,
        headers,
        Optional.empty());
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}

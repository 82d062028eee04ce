package dev.kdelay.benchmarks.textbook;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

class PendingRecordTest {

  @Test
  void shouldReadBackTopicHeadersInOrderAndPayload() {
    // given
    Headers headers = new RecordHeaders();
    headers.add("trace-id", utf8("abc"));
    headers.add("empty", null);
    headers.add("trace-id", utf8("def"));
    PendingRecord record = new PendingRecord("order-timeouts", headers, utf8("{\"id\":42}"));

    // when
    PendingRecord read = PendingRecord.fromBytes(record.toBytes());

    // then
    assertThat(read.topic()).isEqualTo("order-timeouts");
    assertThat(read.payload()).isEqualTo(utf8("{\"id\":42}"));
    assertThat(read.headers().toArray()).containsExactly(headers.toArray());
  }

  @Test
  void shouldKeepANullPayloadNullWhenThereAreNoHeaders() {
    PendingRecord read =
        PendingRecord.fromBytes(new PendingRecord("t", new RecordHeaders(), null).toBytes());

    assertThat(read.payload()).isNull();
    assertThat(read.headers().toArray()).isEmpty();
  }

  private static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}

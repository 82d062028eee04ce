package dev.kdelay.client.retry;

import dev.kdelay.schemas.WireText;
import java.time.Instant;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * One failed delivery of a record: which attempt it was, and what it carries forward from the
 * attempts before (read from the {@link RetryHeaders} of a record that was itself a retry).
 */
record FailedAttempt(
    int attempt,
    Instant failedAt,
    Instant firstFailureAt,
    String topic,
    String originTopic,
    int originPartition,
    long originOffset,
    Throwable exception,
    Headers headers) {

  static FailedAttempt of(ConsumerRecord<?, ?> record, Throwable exception, Instant now) {
    Headers headers = record.headers();
    int before = RetryHeaders.attempt(headers);
    String originTopic = RetryHeaders.text(headers, RetryHeaders.ORIGIN_TOPIC);
    long originPartition = RetryHeaders.number(headers, RetryHeaders.ORIGIN_PARTITION);
    long originOffset = RetryHeaders.number(headers, RetryHeaders.ORIGIN_OFFSET);
    long firstFailure = RetryHeaders.number(headers, RetryHeaders.FIRST_FAILURE_AT);
    boolean retried =
        before > 0
            && originTopic != null
            && originPartition >= 0
            && originPartition <= Integer.MAX_VALUE
            && originOffset >= 0
            && firstFailure >= 0;
    // A record without (complete) retry headers is on its first delivery: it is its own origin.
    return retried
        ? new FailedAttempt(
            before + 1,
            now,
            Instant.ofEpochMilli(firstFailure),
            record.topic(),
            originTopic,
            (int) originPartition,
            originOffset,
            exception,
            headers)
        : new FailedAttempt(
            1,
            now,
            now,
            record.topic(),
            record.topic(),
            record.partition(),
            record.offset(),
            exception,
            headers);
  }

  /**
   * {@code <group>:<origin topic>:<partition>:<offset>:<attempt>}; topic names cannot hold a colon,
   * so ids of different origins never meet.
   */
  String scheduleId(String group) {
    return group + ":" + originTopic + ":" + originPartition + ":" + originOffset + ":" + attempt;
  }

  /** The record's headers, less the retry headers of an earlier attempt. */
  Iterable<Header> carried() {
    RecordHeaders carried = new RecordHeaders();
    for (Header header : headers) {
      if (!RetryHeaders.isRetryHeader(header.key())) {
        carried.add(header);
      }
    }
    return carried;
  }

  /** This attempt's retry headers, in the order {@link RetryHeaders} documents them. */
  Headers retryHeaders() {
    RecordHeaders out = new RecordHeaders();
    out.add(RetryHeaders.ATTEMPT, WireText.of(attempt));
    out.add(RetryHeaders.FIRST_FAILURE_AT, WireText.of(firstFailureAt.toEpochMilli()));
    out.add(RetryHeaders.ORIGIN_TOPIC, WireText.of(originTopic));
    out.add(RetryHeaders.ORIGIN_PARTITION, WireText.of(originPartition));
    out.add(RetryHeaders.ORIGIN_OFFSET, WireText.of(originOffset));
    out.add(RetryHeaders.EXCEPTION, WireText.of(exception.getClass().getName()));
    out.add(RetryHeaders.EXCEPTION_MESSAGE, WireText.of(RetryHeaders.message(exception)));
    return out;
  }
}

package dev.kdelay.topology.internals.delivery;

import dev.kdelay.schemas.DelayHeaders;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.Record;

/**
 * The forms of a dead letter, from whole to smallest. A dead letter that does not fit whole leaves
 * out, in this order, as little as it must:
 *
 * <ol>
 *   <li>its value;
 *   <li>its carried headers, keeping kdelay's own ({@code delay-error}, {@code
 *       delay-error-message}, {@code delay-id}, {@code delay-due-at}, ...) and the target topic;
 *   <li>its key.
 * </ol>
 *
 * <p>{@code delay-error-omitted} then says what was left out and how large it was.
 */
final class DeadLetterForms {

  private DeadLetterForms() {}

  /** The dead letter as it is if it fits {@code limit} bytes, else with as little left out. */
  static Record<byte[], byte[]> fitted(Record<byte[], byte[]> deadLetter, long limit) {
    if (size(deadLetter) <= limit) {
      return deadLetter;
    }
    Record<byte[], byte[]> withoutValue = withoutValue(deadLetter);
    if (size(withoutValue) <= limit) {
      return withoutValue;
    }
    Record<byte[], byte[]> withoutHeaders = withoutCarriedHeaders(deadLetter);
    if (size(withoutHeaders) <= limit) {
      return withoutHeaders;
    }
    return smallest(deadLetter);
  }

  /** The smallest form: no key, no value, only kdelay's own headers. */
  static Record<byte[], byte[]> smallest(Record<byte[], byte[]> deadLetter) {
    Record<byte[], byte[]> withoutHeaders = withoutCarriedHeaders(deadLetter);
    String omitted =
        omittedText(withoutHeaders.headers())
            + ", key ("
            + (deadLetter.key() == null ? 0 : deadLetter.key().length)
            + " bytes)";
    return new Record<>(
        null, null, deadLetter.timestamp(), replaceOmitted(withoutHeaders.headers(), omitted));
  }

  private static Record<byte[], byte[]> withoutValue(Record<byte[], byte[]> deadLetter) {
    Headers headers = new RecordHeaders(deadLetter.headers().toArray());
    headers.add(
        DelayHeaders.ERROR_OMITTED,
        OutputRecords.utf8("value (" + length(deadLetter.value()) + " bytes)"));
    return new Record<>(deadLetter.key(), null, deadLetter.timestamp(), headers);
  }

  private static Record<byte[], byte[]> withoutCarriedHeaders(Record<byte[], byte[]> deadLetter) {
    Headers kept = new RecordHeaders();
    int count = 0;
    long bytes = 0;
    for (Header header : deadLetter.headers()) {
      if (isKept(header)) {
        kept.add(header);
      } else {
        count++;
        bytes += header.key().length() + length(header.value());
      }
    }
    kept.add(
        DelayHeaders.ERROR_OMITTED,
        OutputRecords.utf8(
            "value ("
                + length(deadLetter.value())
                + " bytes), headers ("
                + count
                + ", "
                + bytes
                + " bytes)"));
    return new Record<>(deadLetter.key(), null, deadLetter.timestamp(), kept);
  }

  /** kdelay's own headers, and a target topic short enough to be a legal topic name. */
  private static boolean isKept(Header header) {
    if (DelayHeaders.OUTPUT_HEADERS.contains(header.key())) {
      return !header.key().equals(DelayHeaders.ERROR_OMITTED);
    }
    return header.key().equals(DelayHeaders.TARGET_TOPIC) && length(header.value()) <= 249;
  }

  private static Headers replaceOmitted(Headers headers, String omitted) {
    Headers replaced = new RecordHeaders();
    for (Header header : headers) {
      if (!header.key().equals(DelayHeaders.ERROR_OMITTED)) {
        replaced.add(header);
      }
    }
    replaced.add(DelayHeaders.ERROR_OMITTED, OutputRecords.utf8(omitted));
    return replaced;
  }

  private static String omittedText(Headers headers) {
    Header omitted = headers.lastHeader(DelayHeaders.ERROR_OMITTED);
    return new String(omitted.value(), StandardCharsets.UTF_8);
  }

  static String code(Headers headers) {
    Header code = headers.lastHeader(DelayHeaders.ERROR);
    return code == null || code.value() == null
        ? ""
        : new String(code.value(), StandardCharsets.UTF_8);
  }

  private static long size(Record<byte[], byte[]> record) {
    return RecordSize.of(record.key(), record.value(), record.headers());
  }

  private static int length(byte[] bytes) {
    return bytes == null ? 0 : bytes.length;
  }
}

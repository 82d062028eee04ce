package dev.kdelay.benchmarks.textbook;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * The value of the textbook app's store: what the fired record is made of.
 *
 * <pre>
 * +--------------+-------------+--------------+---------------------------+----------------+---------+
 * | topic length | topic UTF-8 | header count | each header:              | payload length | payload |
 * | int          |             | int          | name length, name UTF-8,  | int, -1: null  |         |
 * |              |             |              | value length (-1: null),  |                |         |
 * |              |             |              | value                     |                |         |
 * +--------------+-------------+--------------+---------------------------+----------------+---------+
 * </pre>
 *
 * @param topic the target topic
 * @param headers the request's headers but the two the app consumed, in order
 * @param payload the request's value; may be null
 */
record PendingRecord(String topic, Headers headers, byte[] payload) {

  private static final int NULL_LENGTH = -1;

  /** The record as the store holds it. */
  byte[] toBytes() {
    byte[] topicBytes = utf8(topic);
    int size = Integer.BYTES + topicBytes.length + Integer.BYTES + sizeOf(payload);
    int count = 0;
    for (Header header : headers) {
      size += sizeOf(utf8(header.key())) + sizeOf(header.value());
      count++;
    }
    ByteBuffer out = ByteBuffer.allocate(size);
    putBytes(out, topicBytes).putInt(count);
    for (Header header : headers) {
      putBytes(putBytes(out, utf8(header.key())), header.value());
    }
    return putBytes(out, payload).array();
  }

  /** A record as {@link #toBytes()} wrote it. */
  static PendingRecord fromBytes(byte[] bytes) {
    ByteBuffer in = ByteBuffer.wrap(bytes);
    String topic = new String(getBytes(in), StandardCharsets.UTF_8);
    int count = in.getInt();
    Headers headers = new RecordHeaders();
    for (int i = 0; i < count; i++) {
      headers.add(new String(getBytes(in), StandardCharsets.UTF_8), getBytes(in));
    }
    return new PendingRecord(topic, headers, getBytes(in));
  }

  private static int sizeOf(byte[] bytes) {
    return Integer.BYTES + (bytes == null ? 0 : bytes.length);
  }

  private static ByteBuffer putBytes(ByteBuffer out, byte[] bytes) {
    return bytes == null ? out.putInt(NULL_LENGTH) : out.putInt(bytes.length).put(bytes);
  }

  private static byte[] getBytes(ByteBuffer in) {
    int length = in.getInt();
    if (length == NULL_LENGTH) {
      return null;
    }
    byte[] bytes = new byte[length];
    in.get(bytes);
    return bytes;
  }

  private static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}

package dev.kdelay.topology.internals.delivery;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.utils.ByteUtils;
import org.apache.kafka.common.utils.Utils;

/**
 * The size of a record alone in a record batch (format v2), as the producer checks it against
 * {@code max.request.size} and the broker against a topic's {@code max.message.bytes}. An upper
 * bound: the producer's own estimate, which counts the timestamp and offset deltas at their widest.
 *
 * <pre>
 * batch header                                          61 bytes
 * record length, attributes, timestamp and offset delta at most 21 bytes
 * key:   varint length (-1: null), bytes
 * value: varint length (-1: null), bytes
 * varint header count, then per header: varint name length, UTF-8 name, varint value length, bytes
 * </pre>
 *
 * <p>A compressed batch is smaller on the wire; this counts it uncompressed.
 */
public final class RecordSize {

  static final int BATCH_OVERHEAD = 61;
  static final int MAX_RECORD_OVERHEAD = 21;
  private static final int NULL_LENGTH = ByteUtils.sizeOfVarint(-1);

  private RecordSize() {}

  /**
   * The size of a one-record batch holding this record.
   *
   * @param key the serialized key, or null
   * @param value the serialized value, or null
   * @param headers the headers
   * @return an upper bound of the batch's size in bytes
   */
  public static long of(byte[] key, byte[] value, Iterable<Header> headers) {
    long size = BATCH_OVERHEAD + MAX_RECORD_OVERHEAD + field(key) + field(value);
    int count = 0;
    for (Header header : headers) {
      int nameLength = Utils.utf8Length(header.key());
      size += ByteUtils.sizeOfVarint(nameLength) + nameLength + field(header.value());
      count++;
    }
    return size + ByteUtils.sizeOfVarint(count);
  }

  private static long field(byte[] bytes) {
    return bytes == null ? NULL_LENGTH : ByteUtils.sizeOfVarint(bytes.length) + bytes.length;
  }
}

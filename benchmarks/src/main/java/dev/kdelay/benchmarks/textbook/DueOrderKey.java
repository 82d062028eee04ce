package dev.kdelay.benchmarks.textbook;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The key of the textbook app's store: the due time first, so that the store's order is due order
 * and the entries due by now are a prefix of what is left.
 *
 * <pre>
 * +------------------------------------------+--------------------------------+
 * | due time, epoch ms: 8 bytes, big-endian, | schedule id: the request's key |
 * | sign bit flipped                         | bytes, 0 or more               |
 * +------------------------------------------+--------------------------------+
 * </pre>
 *
 * <p>RocksDB and Kafka Streams' {@code Bytes} compare keys as unsigned bytes: with the sign bit
 * flipped that is the numeric order of the due times, negative ones included. Entries due in the
 * same millisecond sort by id; a request with the id and due time of a pending one replaces it.
 */
final class DueOrderKey {

  /** Bytes of the due time at the start of every key. */
  static final int DUE_BYTES = Long.BYTES;

  private static final long SIGN_BIT = Long.MIN_VALUE;
  private static final byte[] NO_ID = new byte[0];

  private DueOrderKey() {}

  /** The key of the entry with this due time and schedule id. */
  static byte[] of(long dueMs, byte[] id) {
    return ByteBuffer.allocate(DUE_BYTES + id.length).putLong(dueMs ^ SIGN_BIT).put(id).array();
  }

  /** The lowest key of all those due at {@code dueMs}: where a scan from that time starts. */
  static byte[] firstDueAt(long dueMs) {
    return of(dueMs, NO_ID);
  }

  /** The due time of a key. */
  static long dueMs(byte[] key) {
    return ByteBuffer.wrap(key).getLong() ^ SIGN_BIT;
  }

  /** The schedule id of a key. */
  static byte[] id(byte[] key) {
    return Arrays.copyOfRange(key, DUE_BYTES, key.length);
  }
}

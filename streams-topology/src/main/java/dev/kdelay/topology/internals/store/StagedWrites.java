package dev.kdelay.topology.internals.store;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.rocksdb.WriteBatch;

/**
 * Puts and deletes collected on the heap, then handed to RocksDB as one write batch in a single
 * call. RocksJava's {@code WriteBatch.put} is a JNI call that copies its key and value each time; a
 * restore stages two or three writes per changelog record, and a profile of a restoring instance
 * put those calls at a sixth of its restore thread. So the batch is encoded here, in RocksDB's own
 * serialized form, which is also the write-ahead log's record format and so does not change between
 * versions ({@code db/write_batch.cc}): a 12-byte header (sequence number, fixed64, left 0 for
 * RocksDB to set; count, fixed32, little-endian), then per write a type byte ({@code 0x1} put,
 * {@code 0x0} delete), the key as a varint32 length and its bytes, and for a put the value the same
 * way.
 *
 * <p>Writes keep the order staged, unless {@link #sortByKey} orders them by key first. RocksDB
 * inserts a batch into its memtable one key after another, each insert searching its skip list from
 * where the previous one landed; in key order those searches are short. Staged in the order made,
 * writes jump between distant key ranges: a restore's index keys lie scattered over the whole time
 * range, and a fire writes an entry key, a due key and an expiry key. The sort is stable, so writes
 * to one key keep their order; writes to different keys do not depend on each other.
 */
final class StagedWrites {

  private static final int HEADER_BYTES = 12;
  private static final int COUNT_OFFSET = 8;
  private static final byte DELETE = 0x0;
  private static final byte PUT = 0x1;

  /** A put ({@code value} not null) or a delete. */
  private record Write(byte[] key, byte[] value) {}

  private final List<Write> writes = new ArrayList<>();
  private long bytes;

  /**
   * Stages an id's new entry with its index key, and the removal of {@code oldIndex}, the index key
   * of the entry it replaces (if any, and if it differs); {@code bounds} learn of both.
   *
   * @param next the new entry, or null to delete the id's entry
   */
  void entry(byte[] id, byte[] oldIndex, byte[] next, IndexBounds bounds) {
    byte[] newIndex = StoreKeys.indexOf(id, next);
    if (oldIndex != null && (newIndex == null || !Arrays.equals(oldIndex, newIndex))) {
      delete(oldIndex);
      bounds.removed(oldIndex);
    }
    if (next == null) {
      delete(StoreKeys.entry(id));
      return;
    }
    put(StoreKeys.entry(id), next);
    if (newIndex != null) {
      // The index key holds the entry's size, so that a scan can keep to its byte budget before it
      // reads a single entry.
      put(newIndex, ByteBuffer.allocate(Integer.BYTES).putInt(next.length).array());
      bounds.added(newIndex);
    }
  }

  void put(byte[] key, byte[] value) {
    writes.add(new Write(key, value));
    bytes += key.length + value.length;
  }

  void delete(byte[] key) {
    writes.add(new Write(key, null));
    bytes += key.length;
  }

  boolean isEmpty() {
    return writes.isEmpty();
  }

  /** How many writes are staged. */
  int count() {
    return writes.size();
  }

  /** The bytes of the staged writes' keys and values. */
  long bytes() {
    return bytes;
  }

  /** Orders the writes by key (unsigned bytes), keeping the order of writes to the same key. */
  void sortByKey() {
    writes.sort((a, b) -> Arrays.compareUnsigned(a.key(), b.key()));
  }

  /** The writes as a RocksDB write batch, the caller's to close. */
  WriteBatch toWriteBatch() {
    return new WriteBatch(encode());
  }

  /** The writes in RocksDB's serialized write batch form. */
  byte[] encode() {
    int size = HEADER_BYTES;
    for (Write write : writes) {
      size += 1 + varintLength(write.key().length) + write.key().length;
      if (write.value() != null) {
        size += varintLength(write.value().length) + write.value().length;
      }
    }
    byte[] bytes = new byte[size];
    int count = writes.size();
    for (int i = 0; i < Integer.BYTES; i++) {
      bytes[COUNT_OFFSET + i] = (byte) (count >>> (8 * i));
    }
    int at = HEADER_BYTES;
    for (Write write : writes) {
      bytes[at++] = write.value() == null ? DELETE : PUT;
      at = putSlice(bytes, at, write.key());
      if (write.value() != null) {
        at = putSlice(bytes, at, write.value());
      }
    }
    return bytes;
  }

  private static int putSlice(byte[] bytes, int at, byte[] slice) {
    int length = slice.length;
    while ((length & ~0x7f) != 0) {
      bytes[at++] = (byte) ((length & 0x7f) | 0x80);
      length >>>= 7;
    }
    bytes[at++] = (byte) length;
    System.arraycopy(slice, 0, bytes, at, slice.length);
    return at + slice.length;
  }

  private static int varintLength(int value) {
    int length = 1;
    while ((value & ~0x7f) != 0) {
      value >>>= 7;
      length++;
    }
    return length;
  }
}

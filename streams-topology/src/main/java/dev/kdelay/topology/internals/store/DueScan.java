package dev.kdelay.topology.internals.store;

import dev.kdelay.topology.internals.store.ScheduleBytes.Due;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.utils.Bytes;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;

/**
 * One scan of the due index for entries due at or before a time, in due order, bounded in count and
 * bytes: the index keys of a step first, then their entries in one multi-get, since point lookups
 * in due order (which is not key order) would set the pace of a backlog. A step takes keys while
 * the sizes their index keys hold fit the byte budget left, so a scan reads at most the budget and
 * one entry, however sizes change along the index.
 *
 * <p>Entries due soon are usually in memory already ({@code nearDue}, kept by the store as it
 * writes them): only the others are read.
 *
 * <p>An index key whose entry now sits elsewhere (left by a write that did not know the entry it
 * replaced) is stale: the scan passes it over and reports it for deletion.
 *
 * <p>Used once, by the store, under its lock, with an iterator it closes.
 */
final class DueScan {

  /** Entries one multi-get reads at most. */
  static final int MAX_STEP = 512;

  private final RocksDB db;
  private final Map<Bytes, byte[]> nearDue;
  private final byte[] bound;
  private final int maxCount;
  private final long maxBytes;
  private final List<Due> batch = new ArrayList<>();
  private final List<byte[]> stale = new ArrayList<>();
  private final List<byte[]> taken = new ArrayList<>();
  private byte[] first;
  private boolean more;
  private long bytes;
  private long readBytes;
  private int readFromDb;

  /**
   * @param nowMs the scan takes entries due at or before this time
   * @param maxCount the most entries it returns
   * @param maxBytes the entries' bytes after which it takes no more (at least one is taken)
   * @param nearDue entries by id, each as stored: read from here rather than from RocksDB
   */
  DueScan(RocksDB db, Map<Bytes, byte[]> nearDue, long nowMs, int maxCount, long maxBytes) {
    this.db = db;
    this.nearDue = nearDue;
    this.bound = StoreKeys.indexPrefix(StoreKeys.DUE, nowMs + 1);
    this.maxCount = maxCount;
    this.maxBytes = maxBytes;
  }

  /** Scans from the index key {@code from} on (inclusive), leaving {@code scan} past the batch. */
  DueScan run(RocksIterator scan, byte[] from) throws RocksDBException {
    scan.seek(from);
    while (!more && due(scan)) {
      step(scan);
      if (full() && due(scan)) {
        more = true;
      }
    }
    return this;
  }

  private void step(RocksIterator scan) throws RocksDBException {
    List<byte[]> keys = stepKeys(scan);
    if (first == null && !keys.isEmpty()) {
      first = keys.get(0);
    }
    List<byte[]> entries = entries(keys);
    for (int i = 0; i < keys.size(); i++) {
      if (full()) {
        more = true; // past a bound: the rest of this step is read again by the next scan
        return;
      }
      take(keys.get(i), entries.get(i));
    }
  }

  /** The entries of a step's index keys: those in memory, and the rest in one multi-get. */
  private List<byte[]> entries(List<byte[]> keys) throws RocksDBException {
    List<byte[]> entries = new ArrayList<>(keys.size());
    List<byte[]> toRead = new ArrayList<>();
    for (byte[] key : keys) {
      byte[] id = StoreKeys.idOfIndex(key);
      byte[] entry = nearDue.isEmpty() ? null : nearDue.get(Bytes.wrap(id));
      entries.add(entry);
      if (entry == null) {
        toRead.add(StoreKeys.entry(id));
      }
    }
    if (!toRead.isEmpty()) {
      List<byte[]> read = db.multiGetAsList(toRead);
      readFromDb += toRead.size();
      for (int i = 0, r = 0; i < entries.size(); i++) {
        if (entries.get(i) == null) {
          entries.set(i, read.get(r++));
        }
      }
    }
    for (byte[] entry : entries) {
      readBytes += entry == null ? 0 : entry.length;
    }
    return entries;
  }

  /** The index keys of one step: as many as the count and the byte budget left allow. */
  private List<byte[]> stepKeys(RocksIterator scan) {
    int step = Math.min(MAX_STEP, maxCount - batch.size());
    List<byte[]> keys = new ArrayList<>();
    for (long planned = bytes; keys.size() < step && planned < maxBytes && due(scan); scan.next()) {
      keys.add(scan.key());
      planned += indexedSize(scan.value());
    }
    return keys;
  }

  private void take(byte[] key, byte[] entry) {
    byte[] id = StoreKeys.idOfIndex(key);
    if (!Arrays.equals(key, StoreKeys.indexOf(id, entry))) {
      stale.add(key);
      return;
    }
    batch.add(new Due(id, StoreKeys.timeOfIndex(key), entry));
    taken.add(key);
    bytes += entry.length;
  }

  private boolean due(RocksIterator scan) {
    return scan.isValid() && StoreKeys.before(scan.key(), bound);
  }

  private boolean full() {
    return batch.size() >= maxCount || bytes >= maxBytes;
  }

  /**
   * The size of the entry an index key points to, as written with it; 0 for an index key written
   * without one (by a development build before sizes were kept), which the budget then counts once
   * read.
   */
  private static long indexedSize(byte[] indexValue) {
    return indexValue.length == Integer.BYTES ? ByteBuffer.wrap(indexValue).getInt() : 0;
  }

  /** The entries found, in due order. */
  List<Due> batch() {
    return batch;
  }

  /** The index keys of the entries found, in key order. */
  List<byte[]> taken() {
    return taken;
  }

  /** Index keys found stale, to delete. */
  List<byte[]> stale() {
    return stale;
  }

  /** The first live index key found, or the scan's bound if none: nothing live lies below it. */
  byte[] firstOrBound() {
    return first != null ? first : bound;
  }

  /** Whether the scan stopped at its count or byte bound with more due. */
  boolean more() {
    return more;
  }

  /** The scan's bound: the first index key not due. */
  byte[] bound() {
    return bound;
  }

  /** Entries the scan read from RocksDB rather than from memory. */
  int readFromDb() {
    return readFromDb;
  }

  /** Bytes of entries the scan read, taken or not. */
  long readBytes() {
    return readBytes;
  }
}

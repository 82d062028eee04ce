package dev.kdelay.topology.internals.store;

import dev.kdelay.topology.internals.store.ScheduleBytes.Due;
import java.util.List;
import java.util.SortedMap;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;

/**
 * The due index as the fire path reads it: RocksDB's due keys, what the store remembers of them
 * ({@link IndexBounds}), and the due entries kept in memory ({@link NearDueEntries}, {@link
 * UnwrittenEntries}), merged into one batch in due order.
 *
 * <p>A due scan returns a batch bounded in count and bytes and closes its iterator before the
 * caller fires anything ({@link DueScan}); the caller writes the store afterwards. Nothing writes
 * into an open scan. Fired entries leave tombstones at the start of the due index; a scan starts
 * past the previous scan's batch once each entry of it was written, otherwise where that scan found
 * its first key (lower if something was written below since), so it steps over at most one batch of
 * them, and under a steady backlog none.
 *
 * <p>Not thread-safe: the store calls it holding its lock, with its collected writes made.
 */
final class DueIndex {

  private final RocksDbInstance rocks;
  private final IndexBounds bounds;
  private final NearDueEntries nearDue;
  private final UnwrittenEntries unwritten;
  private final String store;
  private long readBytes;
  private long readFromDb;

  DueIndex(
      RocksDbInstance rocks,
      IndexBounds bounds,
      NearDueEntries nearDue,
      UnwrittenEntries unwritten,
      String store) {
    this.rocks = rocks;
    this.bounds = bounds;
    this.nearDue = nearDue;
    this.unwritten = unwritten;
    this.store = store;
  }

  /** Whether anything may be due at {@code nowMs}; answered from memory. */
  boolean mayHaveDue(long nowMs) {
    return bounds.mayHaveDue(nowMs) || unwritten.nextDue() <= nowMs;
  }

  /** An entry of a batch was left due (see {@link ScheduleBytes#leftDue}). */
  void leftDue(byte[] dueKey) {
    if (!unwritten.hasDueKey(dueKey)) {
      bounds.added(dueKey); // an entry kept in memory only is found by the next scan as it is
    }
  }

  /** Whether the earliest due time remembered may have gone: then {@link #readNextDue} first. */
  boolean nextDueMayBeGone() {
    return bounds.nextDueMayBeGone();
  }

  /** Reads the earliest due time from RocksDB's due index again. */
  void readNextDue() {
    try (RocksIterator scan = rocks.db.newIterator()) {
      bounds.nextDueRead(StoreKeys.firstIndexed(scan, bounds.dueFrom(), StoreKeys.DUE));
    }
  }

  /** A lower bound of the earliest due time (see {@link ScheduleBytes#nextDue}). */
  long nextDue() {
    return Math.min(bounds.nextDue(), unwritten.nextDue());
  }

  /**
   * The entries due at or before {@code nowMs}, in due order, after the index key {@code after} (if
   * not null): at most {@code maxCount}, and no more once {@code maxBytes} of entries are read (at
   * least one, whatever its size). A scan after a key leaves the bounds as low as they were, since
   * the entries it passed over are still stored.
   */
  List<Due> scan(long nowMs, int maxCount, long maxBytes, byte[] after) {
    nearDue.scanned(nowMs);
    SortedMap<byte[], byte[]> held = unwritten.dueBetween(after, nowMs);
    if (!held.isEmpty() && !bounds.mayHaveDue(nowMs)) {
      // Only entries kept in memory are due: RocksDB's due index is not read, as when nothing is
      // due. (A seek steps over the tombstones of fired entries: in a run of the property tests,
      // due scans that found nothing took half of the time.)
      return unwritten.merged(List.of(), List.of(), held, maxCount, maxBytes, nowMs, bounds);
    }
    byte[] dueFrom = bounds.dueFrom();
    DueScan found = new DueScan(rocks.db, nearDue.byId(), nowMs, maxCount, maxBytes);
    try (RocksIterator scan = rocks.db.newIterator()) {
      found.run(
          scan,
          after == null || StoreKeys.before(after, dueFrom) ? dueFrom : StoreKeys.successor(after));
      long next = found.more() ? nowMs : StoreKeys.firstIndexed(scan, found.bound(), StoreKeys.DUE);
      if (after == null) {
        bounds.dueScanned(found.firstOrBound(), next, found.taken());
      } else {
        bounds.dueScannedAfterHeld(next, found.more());
      }
    } catch (RocksDBException e) {
      throw new ProcessorStateException("due scan failed in store " + store, e);
    }
    readBytes += found.readBytes();
    readFromDb += found.readFromDb();
    rocks.delete(found.stale());
    return held.isEmpty()
        ? found.batch()
        : unwritten.merged(found.batch(), found.taken(), held, maxCount, maxBytes, nowMs, bounds);
  }

  /** Bytes of entries the due scans have read; for tests. */
  long readBytes() {
    return readBytes;
  }

  /** Entries the due scans have read from RocksDB, not from memory; for tests. */
  long readFromDb() {
    return readFromDb;
  }
}

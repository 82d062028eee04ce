package dev.kdelay.topology.internals.store;

import dev.kdelay.topology.internals.store.ScheduleBytes.Due;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.kafka.common.utils.Bytes;

/**
 * Entries that are not in RocksDB at all, by id, with their due keys in key order: under
 * exactly-once, an entry due soon for an id RocksDB holds nothing for stays here until it is fired
 * or replaced (see {@link RocksDBScheduleStore}). Their due keys are not in RocksDB's due index,
 * nor in the store's {@link IndexBounds}, which describe RocksDB's indexes only; a due scan merges
 * them in ({@link #merged}).
 *
 * <p>Not thread-safe: the store calls it holding its lock.
 */
final class UnwrittenEntries {

  private final Map<Bytes, byte[]> entries = new HashMap<>();

  /** The due keys of the entries, in key order, each mapped to its id. */
  private final TreeMap<byte[], byte[]> due = new TreeMap<>(Arrays::compareUnsigned);

  void put(byte[] id, byte[] entry) {
    entries.put(Bytes.wrap(id), entry);
    due.put(StoreKeys.indexOf(id, entry), id);
  }

  /** The id's entry, or null if it is not kept here. */
  byte[] get(Bytes id) {
    return entries.isEmpty() ? null : entries.get(id);
  }

  boolean contains(Bytes id) {
    return entries.containsKey(id);
  }

  /** Takes the id's entry out, if kept here: it is written over. */
  byte[] remove(byte[] id) {
    byte[] entry = entries.isEmpty() ? null : entries.remove(Bytes.wrap(id));
    if (entry != null) {
      due.remove(StoreKeys.indexOf(id, entry));
    }
    return entry;
  }

  /** Whether a due key is one of the entries kept here. */
  boolean hasDueKey(byte[] dueKey) {
    return due.containsKey(dueKey);
  }

  /** The earliest due time of the entries kept here, or Long.MAX_VALUE. */
  long nextDue() {
    return due.isEmpty() ? Long.MAX_VALUE : StoreKeys.timeOfIndex(due.firstKey());
  }

  /** Stages every entry as an ordinary write and forgets them: RocksDB then holds them. */
  void drainTo(StagedWrites writes, IndexBounds bounds) {
    if (entries.isEmpty()) {
      return;
    }
    for (Map.Entry<Bytes, byte[]> entry : entries.entrySet()) {
      writes.entry(entry.getKey().get(), null, entry.getValue(), bounds);
    }
    clear();
  }

  void clear() {
    entries.clear();
    due.clear();
  }

  boolean isEmpty() {
    return entries.isEmpty();
  }

  int size() {
    return entries.size();
  }

  /** The due keys kept here after {@code after} (if not null) and due at {@code nowMs}. */
  SortedMap<byte[], byte[]> dueBetween(byte[] after, long nowMs) {
    if (due.isEmpty()) {
      return Collections.emptySortedMap();
    }
    byte[] bound = StoreKeys.indexPrefix(StoreKeys.DUE, nowMs + 1);
    if (after == null) {
      return due.headMap(bound);
    }
    byte[] from = StoreKeys.successor(after);
    // A clock that stepped back can put the last entry handled past the bound.
    return StoreKeys.before(from, bound) ? due.subMap(from, bound) : Collections.emptySortedMap();
  }

  /**
   * A scan's batch from RocksDB merged in key order with {@code held}, due keys kept here, within
   * the scan's count and bytes. Entries of the batch left out stay due: {@code bounds} say so.
   */
  List<Due> merged(
      List<Due> fromDb,
      List<byte[]> dbKeys,
      SortedMap<byte[], byte[]> held,
      int maxCount,
      long maxBytes,
      long nowMs,
      IndexBounds bounds) {
    Iterator<Map.Entry<byte[], byte[]>> inMemory = held.entrySet().iterator();
    Map.Entry<byte[], byte[]> nextInMemory = inMemory.hasNext() ? inMemory.next() : null;
    List<Due> batch = new ArrayList<>(Math.min(maxCount, fromDb.size() + held.size()));
    long bytes = 0;
    int db = 0;
    while (batch.size() < maxCount && (batch.isEmpty() || bytes < maxBytes)) {
      boolean dbLeft = db < fromDb.size();
      if (!dbLeft && nextInMemory == null) {
        break;
      }
      if (dbLeft && due.containsKey(dbKeys.get(db))) {
        db++; // the same due key in both (a write that did not know RocksDB's entry): taken once
      } else if (dbLeft
          && (nextInMemory == null || StoreKeys.before(dbKeys.get(db), nextInMemory.getKey()))) {
        Due taken = fromDb.get(db++);
        batch.add(taken);
        bytes += taken.entry().length;
      } else {
        byte[] id = nextInMemory.getValue();
        byte[] entry = entries.get(Bytes.wrap(id));
        batch.add(new Due(id, StoreKeys.timeOfIndex(nextInMemory.getKey()), entry));
        bytes += entry.length;
        nextInMemory = inMemory.hasNext() ? inMemory.next() : null;
      }
    }
    if (db < fromDb.size()) {
      bounds.dueScannedAfterHeld(nowMs, true); // entries of RocksDB left out: still due
    }
    return batch;
  }
}

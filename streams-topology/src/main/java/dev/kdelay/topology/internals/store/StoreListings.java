package dev.kdelay.topology.internals.store;

import dev.kdelay.topology.internals.store.ScheduleBytes.Due;
import dev.kdelay.topology.internals.store.ScheduleBytes.EntryVisitor;
import dev.kdelay.topology.internals.store.ScheduleBytes.Listing;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;

/**
 * Reads of the whole store for listings and interactive queries: pending entries in due order, and
 * every entry in id order. They run on any thread, holding the store's lock (which the stream
 * thread needs), with the store's writes made, so they read RocksDB alone.
 */
final class StoreListings {

  private final RocksDB db;
  private final IndexBounds bounds;
  private final String store;

  StoreListings(RocksDB db, IndexBounds bounds, String store) {
    this.db = db;
    this.bounds = bounds;
    this.store = store;
  }

  /**
   * Entries in due order: those due before {@code dueBeforeMs}, from the index key {@code from} on
   * (inclusive), at most {@code limit}, and no more once {@code maxBytes} of entries are read (at
   * least one). It starts no lower than where the due scan last started, since no live index key is
   * below that, so a listing from the start does not step over the tombstones fired entries left.
   */
  Listing due(byte[] from, long dueBeforeMs, int limit, long maxBytes) {
    List<Due> listed = new ArrayList<>();
    byte[] bound = StoreKeys.indexPrefix(StoreKeys.DUE, dueBeforeMs);
    byte[] start = StoreKeys.before(from, bounds.dueFrom()) ? bounds.dueFrom() : from;
    long bytes = 0;
    boolean complete = true;
    try (RocksIterator scan = db.newIterator()) {
      for (scan.seek(start); scan.isValid() && StoreKeys.before(scan.key(), bound); scan.next()) {
        if (listed.size() >= limit) {
          break;
        }
        if (bytes >= maxBytes) {
          complete = false;
          break;
        }
        byte[] id = StoreKeys.idOfIndex(scan.key());
        byte[] entry = db.get(StoreKeys.entry(id));
        if (Arrays.equals(scan.key(), StoreKeys.indexOf(id, entry))) {
          listed.add(new Due(id, StoreKeys.timeOfIndex(scan.key()), entry));
          bytes += entry.length;
        }
      }
    } catch (RocksDBException e) {
      throw new ProcessorStateException("listing failed in store " + store, e);
    }
    return new Listing(listed, complete);
  }

  /**
   * Visits at most {@code max} entries in id order, after {@code afterId} (or from the first).
   *
   * @return the last id visited, or null if none was
   */
  byte[] entries(byte[] afterId, int max, EntryVisitor visitor) {
    byte[] last = null;
    byte[] bound = {StoreKeys.DUE};
    try (RocksIterator scan = db.newIterator()) {
      scan.seek(
          afterId == null
              ? new byte[] {StoreKeys.ENTRY}
              : StoreKeys.successor(StoreKeys.entry(afterId)));
      for (int seen = 0;
          seen < max && scan.isValid() && StoreKeys.before(scan.key(), bound);
          seen++, scan.next()) {
        last = StoreKeys.idOfEntry(scan.key());
        visitor.visit(last, scan.value());
      }
    }
    return last;
  }
}

package dev.kdelay.topology.internals.store;

import java.util.List;
import org.apache.kafka.common.utils.Bytes;

/**
 * What the schedule store holds of its entries outside RocksDB, and the write path through it:
 * entries kept in memory only ({@link UnwrittenEntries}), writes collected and not made yet ({@link
 * CollectedWrites}), what a read-ahead learnt ({@link ReadAhead}), and copies of live entries due
 * soon for the due scans ({@link NearDueEntries}).
 *
 * <p>A lookup reads them first and RocksDB last; a write goes to memory or to the collected batch;
 * {@link #makeCollected} and {@link #makeAll} put them into RocksDB when a reader needs it there.
 *
 * <p>Not thread-safe: {@link RocksDBScheduleStore}'s lock guards it.
 */
final class EntriesInMemory {

  private final IndexBounds bounds;
  private final String store;
  private final CollectedWrites collected = new CollectedWrites();
  private final ReadAhead readAhead = new ReadAhead();
  private final NearDueEntries nearDue = new NearDueEntries();

  /**
   * Entries of {@link #nearDue} that are not in RocksDB at all: kept only under exactly-once (where
   * no commit persists the store), for ids RocksDB holds nothing for.
   */
  private final UnwrittenEntries unwritten = new UnwrittenEntries();

  private RocksDbInstance rocks;
  private boolean keepsUnwritten;
  private long writesMade;

  EntriesInMemory(IndexBounds bounds, String store) {
    this.bounds = bounds;
    this.store = store;
  }

  /**
   * @param keepsUnwritten whether entries due soon may be kept in memory only: under exactly-once
   */
  void open(RocksDbInstance rocks, boolean keepsUnwritten) {
    this.rocks = rocks;
    this.keepsUnwritten = keepsUnwritten;
  }

  /**
   * The entry stored for an id, or null: entries kept in memory only, collected writes, what a
   * read-ahead learnt, then RocksDB ({@link RocksDbInstance#entry}).
   */
  byte[] get(byte[] id) {
    Bytes wrapped = Bytes.wrap(id);
    byte[] held = unwritten.get(wrapped);
    if (held != null) {
      return held;
    }
    byte[] collectedEntry = collected.entryOf(wrapped);
    if (collectedEntry != null) {
      return collectedEntry == CollectedWrites.DELETED ? null : collectedEntry;
    }
    byte[] known = readAhead.take(wrapped);
    if (known != null) {
      return known == ReadAhead.ABSENT ? null : known;
    }
    return rocks.entry(id);
  }

  /**
   * Looks up ids in multi-gets, so that {@link #get} answers them from memory. Ids with collected
   * writes, or kept in memory only, are skipped: their answer is in memory already.
   */
  void readAhead(List<byte[]> ids) {
    readAhead.read(rocks.db, store, ids, id -> collected.contains(id) || unwritten.contains(id));
  }

  /**
   * Replaces an id's entry and its index keys: in memory only, or collected for the next write
   * batch, made at once when the batch is full.
   *
   * @param previous the entry the caller read for the id, or null if it had none
   * @param next the new entry, or null to delete the id's entry
   */
  void write(byte[] id, byte[] previous, byte[] next) {
    Bytes wrapped = Bytes.wrap(id);
    byte[] held = unwritten.remove(id);
    boolean kept = nearDue.keep(wrapped, next);
    if (kept && keepsUnwritten && (held != null || previous == null)) {
      // RocksDB holds nothing for the id: the entry stays in memory until fired or replaced.
      unwritten.put(id, next);
    } else {
      // An entry kept in memory only left no index key in RocksDB to delete; its entry key is
      // written over (or deleted) all the same, in case RocksDB held an older one.
      collected.entry(id, held != null ? null : StoreKeys.indexOf(id, previous), next, bounds);
    }
    readAhead.forget(wrapped);
    if (collected.full()) {
      makeCollected();
    }
  }

  /** Makes the writes collected so far, if any. */
  void makeCollected() {
    if (!collected.isEmpty()) {
      StagedWrites writes = collected.take();
      writesMade += writes.count();
      // In key order, each memtable insert searches from where the previous one landed (see
      // StagedWrites): a fire's three writes go to three distant key ranges, a request's two.
      rocks.write(writes, "write");
    }
  }

  /**
   * Stages the entries kept in memory only as ordinary writes, then makes every collected write:
   * RocksDB then holds the whole store.
   */
  void makeAll() {
    unwritten.drainTo(collected.staged(), bounds);
    makeCollected();
  }

  /**
   * Forgets the entries read ahead and those kept for the due scans: RocksDB may change under them.
   */
  void forgetKnown() {
    readAhead.clear();
    nearDue.forget();
  }

  /** A sweep forgot markers: one read ahead may be among them. */
  void forgetReadAhead() {
    readAhead.clear();
  }

  /** Drops everything held, made or not: the store closes. */
  void drop() {
    collected.take();
    unwritten.clear();
    forgetKnown();
  }

  NearDueEntries nearDue() {
    return nearDue;
  }

  UnwrittenEntries unwritten() {
    return unwritten;
  }

  /** How many ids a read-ahead answers for now; for tests. */
  int readAheadSize() {
    return readAhead.size();
  }

  /** How many entries are kept in memory for the due scans; for tests. */
  int nearDueSize() {
    return nearDue.size();
  }

  /** How many entries are kept in memory only. */
  int unwrittenSize() {
    return unwritten.size();
  }

  /** Puts and deletes of keys made in RocksDB by writes (not by restores or sweeps); for tests. */
  long writesMade() {
    return writesMade;
  }

  /** Whether writes are collected and not made yet; for tests. */
  boolean hasCollected() {
    return !collected.isEmpty();
  }
}

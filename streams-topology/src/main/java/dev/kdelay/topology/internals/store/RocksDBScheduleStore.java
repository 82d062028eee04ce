package dev.kdelay.topology.internals.store;

import java.io.File;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.internals.RecordBatchingStateRestoreCallback;
import org.apache.kafka.streams.query.Position;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;

/**
 * The bytes level of the schedule store: one RocksDB instance holding each id's {@link
 * ScheduleEntry} and two indexes derived from them, the due index and the expiry index (layout in
 * {@link StoreKeys}). Every write of an entry updates its index keys in the same write batch; a
 * restore does the same, so the indexes are rebuilt from the changelog, which holds entries only
 * (each record saying which index key the entry it replaced had, so a restore needs no reads).
 *
 * <p>The due scan returns a batch bounded in count and bytes and closes its iterator before the
 * caller fires anything; the caller writes the store afterwards ({@link DueIndex}).
 *
 * <p>Markers (cancelled and fired ids) expire by {@link #sweep}: a local delete, never changelogged
 * (see {@link ChangeLoggingScheduleStore} for how the changelog forgets them). This layer logs
 * nothing; it reads the changelog only when restoring.
 *
 * <p>Writes are collected and made in one write batch ({@link CollectedWrites}), in key order
 * ({@link StagedWrites#sortByKey}: a fire's writes took 11.4-11.8 µs against 14.2-15.4 µs in the
 * order made, {@code StoreFireBenchmark}). A lookup by id reads the collected writes first ({@link
 * #get}); every other read, a commit and a close first make them, so that no reader, interactive
 * queries included, sees the store without them. A sweep with nothing expired reads nothing and
 * makes nothing.
 *
 * <p>Under exactly-once, an entry due soon for an id RocksDB holds nothing for is kept in memory
 * only ({@link UnwrittenEntries}) until it is fired or replaced, so that a task scheduled seconds
 * ahead costs RocksDB the marker its fire leaves (an entry and an expiry key) and nothing else:
 * written at intake, it cost an entry and a due key, and at its fire the due key's delete besides.
 * Such entries are part of the store like those in the memtables: lookups and due scans read them
 * from memory, and anything else that reads RocksDB (listings, a restore, a close) writes them
 * first.
 *
 * <p>Durability comes from the changelog, as for Kafka Streams' own RocksDB stores: the write-ahead
 * log is off, and the memtables are persisted before Kafka Streams writes a checkpoint. Entries
 * kept in memory only are as durable as the memtables: written and persisted on close, and under
 * exactly-once a crash leaves no checkpoint, so the store is restored from the changelog.
 *
 * <p>Written by one thread at a time (the stream thread that owns the task, or the one restoring
 * it); interactive queries read from other threads. Every method holds the store's lock, so a
 * query's read and the owner's close never overlap; uncontended, it costs nanoseconds.
 *
 * <p>This class keeps the lock and the order of operations; the parts, none thread-safe on its own,
 * are {@link RocksDbInstance} (the instance and its options), {@link EntriesInMemory} (what the
 * store holds in memory, and the write path through it), {@link DueIndex} (the due index and its
 * scans), {@link ExpirySweep}, {@link ChangelogRestore} and {@link StoreListings}.
 */
public final class RocksDBScheduleStore implements ScheduleBytes {

  private final String name;
  private final Position position = Position.emptyPosition();
  private StateStoreContext context;
  private RocksDbInstance rocks;
  private RocksDB db;
  private volatile boolean open;
  private boolean flushOnCommit = true;
  private final IndexBounds bounds = new IndexBounds();

  /** What the store holds of its entries outside RocksDB, and the write path through it. */
  private final EntriesInMemory memory;

  /** Compactions held back while a restore brings a backlog in. */
  private BulkLoading bulkLoading;

  private ExpirySweep sweep;
  private ChangelogRestore restore;
  private StoreListings listings;
  private DueIndex dueIndex;

  public RocksDBScheduleStore(String name) {
    this.name = name;
    this.memory = new EntriesInMemory(bounds, name);
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public synchronized void init(StateStoreContext context, StateStore root) {
    this.context = context;
    File rocksdb = new File(context.stateDir(), "rocksdb");
    StoreFormat.warnOfFirstLayout(rocksdb, name);
    openDb(new File(rocksdb, name), context.appConfigs());
    // Kafka Streams' internal record-level callback, as its own header-aware stores use: the
    // public BatchingStateRestoreCallback gives keys and values only, and a marker travels in a
    // tombstone's header.
    context.register(root, (RecordBatchingStateRestoreCallback) this::restoreBatch);
  }

  public void openDb(File dir, Map<String, Object> configs) {
    flushOnCommit =
        !StreamsConfig.EXACTLY_ONCE_V2.equals(
            String.valueOf(configs.get(StreamsConfig.PROCESSING_GUARANTEE_CONFIG)));
    rocks = RocksDbInstance.open(dir, name, configs);
    // Under exactly-once no commit persists the store: entries due soon may stay in memory only.
    memory.open(rocks, !flushOnCommit);
    db = rocks.db;
    bulkLoading = new BulkLoading(db, rocks.options, name, System::currentTimeMillis);
    sweep = new ExpirySweep(db, rocks.writeOptions, bounds, name);
    restore = new ChangelogRestore(db, bounds);
    listings = new StoreListings(db, bounds, name);
    dueIndex = new DueIndex(rocks, bounds, memory.nearDue(), memory.unwritten(), name);
    open = true;
  }

  /**
   * The entry stored for an id, or null. What the store holds in memory answers first: entries kept
   * in memory only, collected writes, what a read-ahead learnt; then RocksDB ({@link
   * RocksDbInstance#entry}).
   */
  @Override
  public synchronized byte[] get(byte[] id) {
    inUse();
    return memory.get(id);
  }

  /**
   * Looks up ids in multi-gets, so that {@link #get} answers them from memory (see {@link
   * ReadAhead}). Ids with collected writes, or kept in memory only, are skipped: their answer is in
   * memory already.
   */
  @Override
  public synchronized void readAhead(List<byte[]> ids) {
    inUse();
    memory.readAhead(ids);
  }

  /** How many ids a read-ahead answers for now; for tests. */
  synchronized int readAheadSize() {
    return memory.readAheadSize();
  }

  /**
   * Replaces an id's entry and its index keys in one write batch.
   *
   * @param id the schedule id, UTF-8
   * @param previous the entry the caller read for the id, or null if it had none; its index key
   *     goes. (An index key the caller did not know of is dropped by the scan that meets it.)
   * @param next the new entry, or null to delete the id's entry
   */
  @Override
  public synchronized void write(byte[] id, byte[] previous, byte[] next) {
    inUse();
    memory.write(id, previous, next);
    notePosition();
  }

  /** Bytes the stores of this JVM may still keep for the due scans; for tests. */
  static long nearDueBudgetLeft() {
    return NearDueEntries.budgetLeft();
  }

  /** How many entries are kept in memory for the due scans; for tests. */
  synchronized int nearDueSize() {
    return memory.nearDueSize();
  }

  /** Puts and deletes of keys made in RocksDB by writes (not by restores or sweeps); for tests. */
  synchronized long writesMade() {
    return memory.writesMade();
  }

  /** How many entries are kept in memory only; for tests. */
  synchronized int unwrittenSize() {
    return memory.unwrittenSize();
  }

  /** Whether anything may be due at {@code nowMs}; answered from memory. */
  @Override
  public synchronized boolean mayHaveDue(long nowMs) {
    if (open) {
      bulkLoading.end(); // the fire path's first question once the task runs
    }
    return dueIndex.mayHaveDue(nowMs);
  }

  @Override
  public synchronized void leftDue(byte[] dueKey) {
    dueIndex.leftDue(dueKey);
  }

  /**
   * A lower bound of the earliest due time: {@code Long.MIN_VALUE} before the first scan, {@code
   * Long.MAX_VALUE} when nothing is scheduled. Read again from the index when the entry it came
   * from has gone, so that a cancelled or triggered schedule is not reported as next.
   */
  @Override
  public synchronized long nextDue() {
    if (dueIndex.nextDueMayBeGone()) {
      checkOpen();
      memory.makeCollected();
      dueIndex.readNextDue();
    }
    return dueIndex.nextDue();
  }

  /**
   * The entries due at or before {@code nowMs}, in due order: at most {@code maxCount}, and no more
   * once {@code maxBytes} of entries are read (at least one, whatever its size). The scan is closed
   * when this returns; the caller writes what it fired afterwards.
   */
  public synchronized List<Due> due(long nowMs, int maxCount, long maxBytes) {
    return due(nowMs, maxCount, maxBytes, null);
  }

  /**
   * As {@link #due(long, int, long)}, but only entries after the index key {@code after}: those up
   * to it were handled and their writes are still to come (at least once, they wait for a commit).
   * Such a scan leaves the bounds kept in memory as low as they were, since entries it passed over
   * are still stored.
   *
   * @param after the index key of the last entry handled, or null to scan from the start
   */
  @Override
  public synchronized List<Due> due(long nowMs, int maxCount, long maxBytes, byte[] after) {
    inUse();
    memory.makeCollected();
    return dueIndex.scan(nowMs, maxCount, maxBytes, after);
  }

  /** Bytes of entries the due scans have read since the store opened; for tests. */
  long dueBytesRead() {
    return dueIndex.readBytes();
  }

  /** Entries the due scans have read from RocksDB, not from memory, since it opened; for tests. */
  long dueEntriesReadFromDb() {
    return dueIndex.readFromDb();
  }

  @Override
  public boolean mayHaveExpired(long nowMs) {
    return bounds.mayHaveExpired(nowMs);
  }

  /**
   * Forgets markers whose expiry has passed, looking at most {@code max} expiry keys: a local
   * delete, not changelogged ({@link ExpirySweep}).
   *
   * @return how many markers were forgotten
   */
  @Override
  public synchronized int sweep(long nowMs, int max) {
    inUse();
    if (!bounds.mayHaveExpired(nowMs)) {
      return 0; // answered from memory: the collected writes wait for a read that needs them
    }
    memory.makeCollected();
    int swept = sweep.run(nowMs, max);
    if (swept > 0) {
      memory.forgetReadAhead(); // a marker read ahead may be one it forgot
    }
    return swept;
  }

  /** Entries in due order, for listings ({@link StoreListings#due}); runs on any thread. */
  @Override
  public synchronized Listing listDue(byte[] from, long dueBeforeMs, int limit, long maxBytes) {
    checkOpen();
    memory.makeAll();
    return listings.due(from, dueBeforeMs, limit, maxBytes);
  }

  @Override
  public synchronized byte[] scanEntries(byte[] afterId, int max, EntryVisitor visitor) {
    checkOpen();
    memory.makeAll();
    return listings.entries(afterId, max, visitor);
  }

  /**
   * Applies changelog records in one write batch, rebuilding the indexes as it goes ({@link
   * ChangelogRestore}). What the store kept in memory is made or forgotten first.
   */
  public void restoreBatch(Collection<ConsumerRecord<byte[], byte[]>> records) {
    ChangelogRestore.Batch batch = ChangelogRestore.Batch.of(records);
    synchronized (this) {
      memory.makeAll();
      memory.forgetKnown();
      if (!batch.changes().isEmpty()) {
        bulkLoading.restoring(batch.newestMs());
      }
      StagedWrites writes;
      try {
        writes = restore.writes(batch);
      } catch (RocksDBException e) {
        throw new ProcessorStateException("restore failed in store " + name, e);
      }
      rocks.write(writes, "restore");
    }
  }

  /** The input offsets whose writes this store holds, for interactive-query consistency. */
  synchronized Position position() {
    return position;
  }

  private void notePosition() {
    if (context != null) {
      // A punctuation has no input record: its metadata carries no topic.
      context
          .recordMetadata()
          .filter(m -> m.topic() != null)
          .ifPresent(m -> position.withComponent(m.topic(), m.partition(), m.offset()));
    }
  }

  /**
   * RocksDB's estimate of the keys held, entries and index keys, with the two each entry kept in
   * memory only will have.
   */
  public synchronized long approximateNumKeys() {
    checkOpen();
    memory.makeCollected();
    return rocks.approximateNumKeys() + 2L * memory.unwrittenSize();
  }

  /**
   * Persists the memtables when Kafka Streams may record changelog offsets right after: the
   * write-ahead log is off (the changelog is the log), so a checkpoint naming an offset must find
   * everything up to it on disk. Under exactly-once Kafka Streams checkpoints only on close, which
   * flushes itself, so a commit skips the flush (a flush per commit made one small SST file per
   * commit, and the stream thread waited for each).
   */
  @Override
  public synchronized void commit(Map<TopicPartition, Long> changelogOffsets) {
    if (open) {
      memory.makeCollected();
    }
    if (flushOnCommit && open) {
      rocks.flush();
    }
  }

  @Override
  public synchronized void close() {
    if (!open) {
      return;
    }
    open = false;
    try {
      memory.makeAll(); // the writes a caller made and the entries kept in memory only
      rocks.flush(); // before Kafka Streams writes the checkpoint naming the changelog offset
    } finally {
      memory.drop();
      rocks.close();
    }
  }

  private void checkOpen() {
    if (!open) {
      throw new InvalidStateStoreException("store " + name + " is closed (its partition moved?)");
    }
  }

  /** The store is open and used for more than a restore: compactions held back run again. */
  private void inUse() {
    checkOpen();
    bulkLoading.end();
  }

  @Override
  public boolean persistent() {
    return true;
  }

  @Override
  public boolean isOpen() {
    return open;
  }

  @Override
  public Position getPosition() {
    return position();
  }

  /**
   * The RocksDB instance with every write made, for tests that inspect it, or change it behind the
   * store's back: what the store keeps in memory of it is forgotten.
   */
  public synchronized RocksDB db() {
    memory.makeAll();
    memory.forgetKnown();
    return db;
  }

  /** Whether writes are collected and not made yet; for tests. */
  synchronized boolean hasCollectedWrites() {
    return memory.hasCollected();
  }
}

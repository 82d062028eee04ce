package dev.kdelay.topology.internals.store;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.internals.RecordBatchingStateRestoreCallback;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.state.RocksDBConfigSetter;
import org.rocksdb.BloomFilter;
import org.rocksdb.FlushOptions;
import org.rocksdb.Holder;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * The bytes level of the schedule store: one RocksDB instance holding each id's {@link
 * ScheduleEntry} and two indexes derived from them, the due index and the expiry index (layout in
 * {@link StoreKeys}). Every write of an entry updates its index keys in the same write batch; a
 * restore does the same, so the indexes are rebuilt from the changelog, which holds entries only
 * (each record saying which index key the entry it replaced had, so a restore needs no reads).
 *
 * <p>The due scan returns a batch bounded in count and bytes and closes its iterator before the
 * caller fires anything; the caller writes the store afterwards. Nothing writes into an open scan.
 * Fired entries leave tombstones at the start of the due index; a scan starts past the previous
 * scan's batch once each entry of it was written, otherwise where that scan found its first key
 * (lower if something was written below since), so it steps over at most one batch of them, and
 * under a steady backlog none ({@link IndexBounds}). What the store keeps in memory of its indexes
 * is an {@link IndexBounds}; one scan of the due index is a {@link DueScan}.
 *
 * <p>Markers (cancelled and fired ids) expire by {@link #sweep}: a local delete, never changelogged
 * (see {@link ChangeLoggingScheduleStore} for how the changelog forgets them). This layer logs
 * nothing; it reads the changelog only when restoring.
 *
 * <p>Writes are collected and made in one write batch ({@link StagedWrites}): one call into RocksDB
 * for up to {@link #MAX_COLLECTED_WRITES} writes or {@link #MAX_COLLECTED_BYTES} bytes instead of
 * one per request or fire (on the store alone, a new id's lookup and write took 4.9-5.5 µs against
 * 5.5-7.6 µs made one by one), in key order ({@link StagedWrites#sortByKey}: a fire's writes took
 * 11.4-11.8 µs against 14.2-15.4 µs in the order made, {@code StoreFireBenchmark}). A lookup by id
 * reads the collected writes first ({@link #get}); every other read, a commit and a close first
 * make them, so that no reader, interactive queries included, sees the store without them. A sweep
 * with nothing expired reads nothing and makes nothing.
 *
 * <p>Under exactly-once, an entry due soon for an id RocksDB holds nothing for is kept in memory
 * only ({@link #unwritten}) until it is fired or replaced, so that a task scheduled seconds ahead
 * costs RocksDB the marker its fire leaves (an entry and an expiry key) and nothing else: written
 * at intake, it cost an entry and a due key, and at its fire the due key's delete besides. Such
 * entries are part of the store like those in the memtables: lookups and due scans read them from
 * memory, and anything else that reads RocksDB (listings, a restore, a close) writes them first.
 *
 * <p>Durability comes from the changelog, as for Kafka Streams' own RocksDB stores: the write-ahead
 * log is off, and the memtables are persisted before Kafka Streams writes a checkpoint. Entries
 * kept in memory only are as durable as the memtables: written and persisted on close, and under
 * exactly-once a crash leaves no checkpoint, so the store is restored from the changelog.
 *
 * <p>Written by one thread at a time (the stream thread that owns the task, or the one restoring
 * it); interactive queries read from other threads. Every method holds the store's lock, so a
 * query's read and the owner's close never overlap; uncontended, it costs nanoseconds.
 */
public final class RocksDBScheduleStore implements ScheduleBytes {

  static {
    RocksDB.loadLibrary();
  }

  private final String name;
  private final Position position = Position.emptyPosition();
  private StateStoreContext context;
  private RocksDB db;
  private Options options;
  private BloomFilter filter;
  private WriteOptions writeOptions;
  private RocksDBConfigSetter configSetter;
  private volatile boolean open;
  private boolean flushOnCommit = true;
  private long readBytes;
  private long readFromDb;
  private long writesMade;
  private final IndexBounds bounds = new IndexBounds();

  /** Writes collected at most before they are made, whatever their size. */
  static final int MAX_COLLECTED_WRITES = 4_096;

  /** Bytes of keys and values collected at most before they are made. */
  static final long MAX_COLLECTED_BYTES = 4L * 1024 * 1024;

  /** Writes collected, not made yet. */
  private StagedWrites collected = new StagedWrites();

  /**
   * The entries the collected writes leave, by id: a value, or {@link #DELETED}. What a lookup by
   * id reads before RocksDB.
   */
  private final Map<Bytes, byte[]> collectedEntries = new HashMap<>();

  private static final byte[] DELETED = new byte[0];

  /**
   * What {@link #readAhead} learnt, by id: absent ({@link #DELETED}), or the entry. Each answers
   * one lookup; a write to the id forgets it, and so does anything that could change other ids'
   * entries behind the store's back (a sweep that forgot markers, a restore).
   */
  private final Map<Bytes, byte[]> readAhead = new HashMap<>();

  /** Bytes of entries {@link #readAhead} holds. */
  private long readAheadBytes;

  /**
   * Live entries due soon, by id, each exactly as stored: what a due scan reads instead of RocksDB.
   * Most tasks are scheduled a few seconds to minutes ahead and fire from here; a due scan's
   * multi-get, one memtable search per entry, took a fifth of its time (a CPU profile of the
   * throughput benchmark). Kept by {@link #write} (an entry due within {@link #NEAR_DUE_MS} of the
   * last scan's time, while {@link #MAX_NEAR_DUE_BYTES} allow), forgotten by a restore.
   */
  private final Map<Bytes, byte[]> nearDue = new HashMap<>();

  /** Bytes of entries {@link #nearDue} holds. */
  private long nearDueBytes;

  /** The time of the latest due scan; {@link #nearDue} keeps entries due up to a while after it. */
  private long lastScanMs = Long.MIN_VALUE;

  /**
   * Entries of {@link #nearDue} that are not in RocksDB at all, by id: kept only under exactly-once
   * (where no commit persists the store, see {@link #commit}), for ids RocksDB holds nothing for.
   * Their due keys are in {@link #unwrittenDue}, not in RocksDB's due index, and not in {@link
   * #bounds}, which describes RocksDB's indexes only.
   */
  private final Map<Bytes, byte[]> unwritten = new HashMap<>();

  /** The due keys of the {@link #unwritten} entries, in key order, each mapped to its id. */
  private final TreeMap<byte[], byte[]> unwrittenDue = new TreeMap<>(Arrays::compareUnsigned);

  /** Compactions held back while a restore brings a backlog in. */
  private BulkLoading bulkLoading;

  /** Whether entries due soon may be kept in memory only: under exactly-once. */
  private boolean keepsUnwritten;

  /** How far past the latest due scan an entry's due time may be for it to be kept in memory. */
  static final long NEAR_DUE_MS = 60_000;

  /**
   * Bytes of entries kept in memory for the due scans at most, by all the stores of this JVM
   * together: each takes its share from {@link #NEAR_DUE_BUDGET} as it keeps an entry.
   */
  static final long MAX_NEAR_DUE_BYTES = 32L * 1024 * 1024;

  private static final AtomicLong NEAR_DUE_BUDGET = new AtomicLong(MAX_NEAR_DUE_BYTES);

  /** Ids one multi-get of a read-ahead looks up at most: the entries it reads are transient. */
  static final int READ_AHEAD_STEP = 64;

  /** Ids a read-ahead remembers at most; past that, it starts afresh. */
  static final int MAX_READ_AHEAD = 4_096;

  /** Bytes of entries a read-ahead remembers at most; entries past that are not kept. */
  static final long MAX_READ_AHEAD_BYTES = 1024 * 1024;

  public RocksDBScheduleStore(String name) {
    this.name = name;
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
    try {
      Files.createDirectories(dir.toPath());
    } catch (IOException e) {
      throw new ProcessorStateException("cannot create state directory " + dir, e);
    }
    flushOnCommit =
        !StreamsConfig.EXACTLY_ONCE_V2.equals(
            String.valueOf(configs.get(StreamsConfig.PROCESSING_GUARANTEE_CONFIG)));
    keepsUnwritten = !flushOnCommit;
    filter = RocksDbOptions.filter();
    options = RocksDbOptions.defaults(filter);
    configSetter = RocksDbOptions.configSetter(configs);
    if (configSetter != null) {
      configSetter.setConfig(name, options, configs);
    }
    writeOptions = new WriteOptions().setDisableWAL(true);
    try {
      db = RocksDB.open(options, dir.getAbsolutePath());
      StoreFormat.check(db, writeOptions, name, dir);
      bulkLoading = new BulkLoading(db, options, name, System::currentTimeMillis);
    } catch (RocksDBException e) {
      throw new ProcessorStateException("cannot open RocksDB store " + name + " in " + dir, e);
    }
    open = true;
  }

  /**
   * The entry stored for an id, or null.
   *
   * <p>Most lookups are for ids not stored yet (every new schedule). RocksJava's {@code get}
   * reports a missing key by throwing and catching a C++ exception inside JNI, which cost more than
   * the lookup itself. {@code keyMayExist} answers from the memtables, the Bloom filters and the
   * block cache, never from disk and without that exception: "absent" is certain, so {@code get}
   * runs only when the key may exist and its value was not found in memory on the way.
   */
  @Override
  public synchronized byte[] get(byte[] id) {
    inUse();
    Bytes wrapped = Bytes.wrap(id);
    byte[] held = unwritten.isEmpty() ? null : unwritten.get(wrapped);
    if (held != null) {
      return held;
    }
    byte[] collectedEntry = collectedEntries.get(wrapped);
    if (collectedEntry != null) {
      return collectedEntry == DELETED ? null : collectedEntry;
    }
    if (!readAhead.isEmpty()) {
      byte[] known = readAhead.remove(wrapped);
      if (known != null) {
        readAheadBytes -= known.length;
        return known == DELETED ? null : known;
      }
    }
    byte[] key = StoreKeys.entry(id);
    try {
      Holder<byte[]> inMemory = new Holder<>();
      if (!db.keyMayExist(key, inMemory)) {
        return null;
      }
      byte[] found = inMemory.getValue();
      // RocksDB's KeyMayExist marks the value found before it looks, and a look that stops short
      // (an index block not in the cache) leaves that mark on an empty value
      // (facebook/rocksdb#12921). No entry is empty (its header is mandatory), so an empty one
      // means "not read": read it.
      return found != null && found.length > 0 ? found : db.get(key);
    } catch (RocksDBException e) {
      throw new ProcessorStateException("get failed in store " + name, e);
    }
  }

  /**
   * Looks up ids in multi-gets of {@link #READ_AHEAD_STEP}, so that {@link #get} answers them from
   * memory. A request for a new id is a lookup of an id not stored; one by one, each took 2.6-4 µs
   * (keyMayExist, through the memtables' and every file's filters), in multi-gets 1.5 µs, which
   * probe the filters for many keys at once. Ids with collected writes, or already read ahead, are
   * skipped: their answer is in memory.
   */
  @Override
  public synchronized void readAhead(List<byte[]> ids) {
    inUse();
    if (readAhead.size() + ids.size() > MAX_READ_AHEAD) {
      forgetReadAhead();
    }
    List<byte[]> keys = new ArrayList<>(ids.size());
    List<Bytes> wanted = new ArrayList<>(ids.size());
    for (byte[] bytes : ids) {
      Bytes id = Bytes.wrap(bytes);
      if (!collectedEntries.containsKey(id)
          && !readAhead.containsKey(id)
          && !unwritten.containsKey(id)) {
        keys.add(StoreKeys.entry(bytes));
        wanted.add(id);
      }
    }
    for (int from = 0; from < keys.size(); from += READ_AHEAD_STEP) {
      int to = Math.min(keys.size(), from + READ_AHEAD_STEP);
      lookUp(keys.subList(from, to), wanted.subList(from, to));
    }
  }

  private void lookUp(List<byte[]> keys, List<Bytes> ids) {
    List<byte[]> entries;
    try {
      entries = db.multiGetAsList(keys);
    } catch (RocksDBException e) {
      throw new ProcessorStateException("read-ahead failed in store " + name, e);
    }
    for (int i = 0; i < ids.size(); i++) {
      byte[] entry = entries.get(i);
      if (entry == null) {
        readAhead.put(ids.get(i), DELETED);
      } else if (readAheadBytes + entry.length <= MAX_READ_AHEAD_BYTES) {
        readAhead.put(ids.get(i), entry);
        readAheadBytes += entry.length;
      }
    }
  }

  private void forgetReadAhead() {
    readAhead.clear();
    readAheadBytes = 0;
  }

  /** How many ids a read-ahead answers for now; for tests. */
  synchronized int readAheadSize() {
    return readAhead.size();
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
    Bytes wrapped = Bytes.wrap(id);
    byte[] held = unwritten.isEmpty() ? null : unwritten.remove(wrapped);
    if (held != null) {
      unwrittenDue.remove(StoreKeys.indexOf(id, held));
    }
    boolean kept = keepIfNearDue(wrapped, next);
    if (kept && keepsUnwritten && (held != null || previous == null)) {
      // RocksDB holds nothing for the id: the entry stays in memory until fired or replaced.
      unwritten.put(wrapped, next);
      unwrittenDue.put(StoreKeys.indexOf(id, next), id);
    } else {
      // An entry kept in memory only left no index key in RocksDB to delete; its entry key is
      // written over (or deleted) all the same, in case RocksDB held an older one.
      stage(collected, id, held != null ? null : StoreKeys.indexOf(id, previous), next);
      collectedEntries.put(wrapped, next == null ? DELETED : next);
    }
    if (!readAhead.isEmpty()) {
      byte[] known = readAhead.remove(wrapped);
      readAheadBytes -= known == null ? 0 : known.length;
    }
    if (collected.count() >= MAX_COLLECTED_WRITES || collected.bytes() >= MAX_COLLECTED_BYTES) {
      makeCollected();
    }
    notePosition();
  }

  /**
   * Keeps an id's new entry in {@link #nearDue} if it is live and due soon; forgets the old one.
   */
  private boolean keepIfNearDue(Bytes id, byte[] next) {
    byte[] old = nearDue.isEmpty() ? null : nearDue.remove(id);
    if (old != null) {
      nearDueBytes -= old.length;
      NEAR_DUE_BUDGET.addAndGet(old.length);
    }
    if (next != null
        && lastScanMs != Long.MIN_VALUE
        && ScheduleEntry.damage(next) == null
        && ScheduleEntry.stateOf(next) == ScheduleEntry.State.SCHEDULED
        && ScheduleEntry.timeOf(next) <= lastScanMs + NEAR_DUE_MS
        && takeFromBudget(next.length)) {
      nearDue.put(id, next);
      nearDueBytes += next.length;
      return true;
    }
    return false;
  }

  private static boolean takeFromBudget(long bytes) {
    if (NEAR_DUE_BUDGET.addAndGet(-bytes) >= 0) {
      return true;
    }
    NEAR_DUE_BUDGET.addAndGet(bytes);
    return false;
  }

  /**
   * Forgets the entries read ahead and those kept for the due scans: RocksDB may change under them.
   */
  private void forgetKnownEntries() {
    forgetReadAhead();
    forgetNearDue();
  }

  private void forgetNearDue() {
    nearDue.clear();
    NEAR_DUE_BUDGET.addAndGet(nearDueBytes);
    nearDueBytes = 0;
  }

  /** Bytes the stores of this JVM may still keep for the due scans; for tests. */
  static long nearDueBudgetLeft() {
    return NEAR_DUE_BUDGET.get();
  }

  /** How many entries are kept in memory for the due scans; for tests. */
  synchronized int nearDueSize() {
    return nearDue.size();
  }

  /**
   * Stages the entries kept in memory only as ordinary writes, then makes every collected write:
   * RocksDB then holds the whole store.
   */
  private void makeAll() {
    if (!unwritten.isEmpty()) {
      for (Map.Entry<Bytes, byte[]> held : unwritten.entrySet()) {
        stage(collected, held.getKey().get(), null, held.getValue());
      }
      unwritten.clear();
      unwrittenDue.clear();
    }
    makeCollected();
  }

  /** Puts and deletes of keys made in RocksDB by writes (not by restores or sweeps); for tests. */
  synchronized long writesMade() {
    return writesMade;
  }

  /** How many entries are kept in memory only; for tests. */
  synchronized int unwrittenSize() {
    return unwritten.size();
  }

  /** Makes the writes collected so far, if any. */
  private void makeCollected() {
    if (!collected.isEmpty()) {
      StagedWrites writes = collected;
      collected = new StagedWrites();
      collectedEntries.clear();
      make(writes);
    }
  }

  private void make(StagedWrites writes) {
    writesMade += writes.count();
    // In key order, each memtable insert searches from where the previous one landed (see
    // StagedWrites): a fire's three writes go to three distant key ranges, a request's two.
    writes.sortByKey();
    try (WriteBatch batch = writes.toWriteBatch()) {
      db.write(writeOptions, batch);
    } catch (RocksDBException e) {
      throw new ProcessorStateException("write failed in store " + name, e);
    }
  }

  /** Stages an id's new entry: {@code oldIndex}, the replaced entry's index key, goes (if any). */
  private void stage(StagedWrites batch, byte[] id, byte[] oldIndex, byte[] next) {
    byte[] newIndex = StoreKeys.indexOf(id, next);
    if (oldIndex != null && (newIndex == null || !Arrays.equals(oldIndex, newIndex))) {
      batch.delete(oldIndex);
      bounds.removed(oldIndex);
    }
    if (next == null) {
      batch.delete(StoreKeys.entry(id));
      return;
    }
    batch.put(StoreKeys.entry(id), next);
    if (newIndex != null) {
      // The index key holds the entry's size, so that a scan can keep to its byte budget before it
      // reads a single entry.
      batch.put(newIndex, ByteBuffer.allocate(Integer.BYTES).putInt(next.length).array());
      bounds.added(newIndex);
    }
  }

  /** Whether anything may be due at {@code nowMs}; answered from memory. */
  @Override
  public synchronized boolean mayHaveDue(long nowMs) {
    if (open) {
      bulkLoading.end(); // the fire path's first question once the task runs
    }
    return bounds.mayHaveDue(nowMs) || unwrittenNextDue() <= nowMs;
  }

  @Override
  public synchronized void leftDue(byte[] dueKey) {
    if (!unwrittenDue.containsKey(dueKey)) {
      bounds.added(dueKey); // an entry kept in memory only is found by the next scan as it is
    }
  }

  private long unwrittenNextDue() {
    return unwrittenDue.isEmpty() ? Long.MAX_VALUE : StoreKeys.timeOfIndex(unwrittenDue.firstKey());
  }

  /**
   * A lower bound of the earliest due time: {@code Long.MIN_VALUE} before the first scan, {@code
   * Long.MAX_VALUE} when nothing is scheduled. Read again from the index when the entry it came
   * from has gone, so that a cancelled or triggered schedule is not reported as next.
   */
  @Override
  public synchronized long nextDue() {
    if (bounds.nextDueMayBeGone()) {
      refreshNextDue();
    }
    return Math.min(bounds.nextDue(), unwrittenNextDue());
  }

  private synchronized void refreshNextDue() {
    checkOpen();
    makeCollected();
    try (RocksIterator scan = db.newIterator()) {
      bounds.nextDueRead(firstIndexed(scan, bounds.dueFrom(), StoreKeys.DUE));
    }
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
    makeCollected();
    lastScanMs = Math.max(lastScanMs, nowMs);
    SortedMap<byte[], byte[]> held = unwrittenDueBetween(after, nowMs);
    if (!held.isEmpty() && !bounds.mayHaveDue(nowMs)) {
      // Only entries kept in memory are due: RocksDB's due index is not read, as when nothing is
      // due. (A seek steps over the tombstones of fired entries: in a run of the property tests,
      // due scans that found nothing took half of the time.)
      return merged(List.of(), List.of(), held, maxCount, maxBytes, nowMs);
    }
    byte[] dueFrom = bounds.dueFrom();
    DueScan found = new DueScan(db, nearDue, nowMs, maxCount, maxBytes);
    try (RocksIterator scan = db.newIterator()) {
      found.run(
          scan,
          after == null || StoreKeys.before(after, dueFrom) ? dueFrom : StoreKeys.successor(after));
      long next = found.more() ? nowMs : firstIndexed(scan, found.bound(), StoreKeys.DUE);
      if (after == null) {
        bounds.dueScanned(found.firstOrBound(), next, found.taken());
      } else {
        bounds.dueScannedAfterHeld(next, found.more());
      }
    } catch (RocksDBException e) {
      throw new ProcessorStateException("due scan failed in store " + name, e);
    }
    readBytes += found.readBytes();
    readFromDb += found.readFromDb();
    deleteKeys(found.stale());
    return held.isEmpty()
        ? found.batch()
        : merged(found.batch(), found.taken(), held, maxCount, maxBytes, nowMs);
  }

  /**
   * The due keys kept in memory only after {@code after} (if not null) and due at {@code nowMs}.
   */
  private SortedMap<byte[], byte[]> unwrittenDueBetween(byte[] after, long nowMs) {
    if (unwrittenDue.isEmpty()) {
      return Collections.emptySortedMap();
    }
    byte[] bound = StoreKeys.indexPrefix(StoreKeys.DUE, nowMs + 1);
    if (after == null) {
      return unwrittenDue.headMap(bound);
    }
    byte[] from = StoreKeys.successor(after);
    // A clock that stepped back can put the last entry handled past the bound.
    return StoreKeys.before(from, bound)
        ? unwrittenDue.subMap(from, bound)
        : Collections.emptySortedMap();
  }

  /**
   * A scan's batch from RocksDB merged in key order with the due entries kept in memory only,
   * within the scan's count and bytes. Entries of the batch left out stay due: the bounds say so.
   */
  private List<Due> merged(
      List<Due> fromDb,
      List<byte[]> dbKeys,
      SortedMap<byte[], byte[]> held,
      int maxCount,
      long maxBytes,
      long nowMs) {
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
      if (dbLeft && unwrittenDue.containsKey(dbKeys.get(db))) {
        db++; // the same due key in both (a write that did not know RocksDB's entry): taken once
      } else if (dbLeft
          && (nextInMemory == null || StoreKeys.before(dbKeys.get(db), nextInMemory.getKey()))) {
        Due due = fromDb.get(db++);
        batch.add(due);
        bytes += due.entry().length;
      } else {
        byte[] id = nextInMemory.getValue();
        byte[] entry = unwritten.get(Bytes.wrap(id));
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

  /** Bytes of entries the due scans have read since the store opened; for tests. */
  long dueBytesRead() {
    return readBytes;
  }

  /** Entries the due scans have read from RocksDB, not from memory, since it opened; for tests. */
  long dueEntriesReadFromDb() {
    return readFromDb;
  }

  /** The time of the first index key of a kind at or after {@code from}, or Long.MAX_VALUE. */
  private static long firstIndexed(RocksIterator scan, byte[] from, byte kind) {
    scan.seek(from);
    return scan.isValid() && scan.key()[0] == kind
        ? StoreKeys.timeOfIndex(scan.key())
        : Long.MAX_VALUE;
  }

  @Override
  public boolean mayHaveExpired(long nowMs) {
    return bounds.mayHaveExpired(nowMs);
  }

  /**
   * Forgets markers whose expiry has passed, looking at most {@code max} expiry keys: a local
   * delete, not changelogged. Like the due scan, it reads first and closes its iterator, then
   * writes.
   *
   * @return how many markers were forgotten
   */
  @Override
  public synchronized int sweep(long nowMs, int max) {
    inUse();
    if (!bounds.mayHaveExpired(nowMs)) {
      return 0; // answered from memory: the collected writes wait for a read that needs them
    }
    makeCollected();
    byte[] bound = StoreKeys.indexPrefix(StoreKeys.EXPIRY, nowMs + 1);
    List<byte[]> expired = new ArrayList<>();
    try (RocksIterator scan = db.newIterator()) {
      for (scan.seek(bounds.expiryFrom());
          expired.size() < max && scan.isValid() && StoreKeys.before(scan.key(), bound);
          scan.next()) {
        expired.add(scan.key());
      }
      boolean more = scan.isValid() && StoreKeys.before(scan.key(), bound);
      bounds.expirySwept(
          expired.isEmpty() ? bound : expired.get(0),
          more ? nowMs : firstIndexed(scan, bound, StoreKeys.EXPIRY));
    }
    if (expired.isEmpty()) {
      return 0;
    }
    int swept = 0;
    List<byte[]> entryKeys = new ArrayList<>(expired.size());
    for (byte[] key : expired) {
      entryKeys.add(StoreKeys.entry(StoreKeys.idOfIndex(key)));
    }
    try (WriteBatch batch = new WriteBatch()) {
      List<byte[]> entries = db.multiGetAsList(entryKeys);
      for (int i = 0; i < expired.size(); i++) {
        byte[] key = expired.get(i);
        batch.delete(key);
        // The id may have been scheduled again since: then its entry owns another index key.
        if (Arrays.equals(key, StoreKeys.indexOf(StoreKeys.idOfIndex(key), entries.get(i)))) {
          batch.delete(entryKeys.get(i));
          swept++;
        }
      }
      db.write(writeOptions, batch);
    } catch (RocksDBException e) {
      throw new ProcessorStateException("sweep failed in store " + name, e);
    }
    if (swept > 0) {
      forgetReadAhead(); // a marker read ahead may be one it forgot
    }
    return swept;
  }

  /**
   * Entries in due order, for listings: those due before {@code dueBeforeMs}, from the index key
   * {@code from} on (inclusive), at most {@code limit}, and no more once {@code maxBytes} of
   * entries are read (at least one). Runs on any thread, holding the lock the stream thread needs:
   * it starts no lower than where the due scan last started, since no live index key is below that,
   * so a listing from the start does not step over the tombstones fired entries left.
   */
  @Override
  public synchronized Listing listDue(byte[] from, long dueBeforeMs, int limit, long maxBytes) {
    checkOpen();
    makeAll();
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
      throw new ProcessorStateException("listing failed in store " + name, e);
    }
    return new Listing(listed, complete);
  }

  @Override
  public synchronized byte[] scanEntries(byte[] afterId, int max, EntryVisitor visitor) {
    checkOpen();
    makeAll();
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

  /**
   * Applies changelog records in one write batch, rebuilding the indexes as it goes. Each record
   * says in its {@link ScheduleChangelog#REPLACES_HEADER} where the entry it replaced sat in the
   * indexes, so the index key to delete is known without reading the store: a restore only writes.
   * For records that do not say (written before that header, or with a header this version cannot
   * read), the ids' stored entries are read with one multi-get for the batch.
   */
  public void restoreBatch(Collection<ConsumerRecord<byte[], byte[]>> records) {
    List<ConsumerRecord<byte[], byte[]>> changes = List.copyOf(records);
    List<byte[]> positions = new ArrayList<>(changes.size());
    long newestMs = Long.MIN_VALUE;
    for (ConsumerRecord<byte[], byte[]> record : changes) {
      positions.add(ScheduleChangelog.replaced(record));
      newestMs = Math.max(newestMs, record.timestamp());
    }
    synchronized (this) {
      makeAll();
      forgetKnownEntries();
      if (!changes.isEmpty()) {
        bulkLoading.restoring(newestMs);
      }
      try {
        // Only when some records do not say what they replaced: each id's latest entry, read from
        // the store for the first of them, then as restored by this batch.
        Map<Bytes, byte[]> current = readUnsaid(changes, positions);
        StagedWrites writes = new StagedWrites();
        for (int i = 0; i < changes.size(); i++) {
          ConsumerRecord<byte[], byte[]> record = changes.get(i);
          byte[] id = record.key();
          byte[] oldIndex =
              positions.get(i) != null
                  ? StoreKeys.indexAt(positions.get(i), id)
                  : StoreKeys.indexOf(id, current.get(Bytes.wrap(id)));
          byte[] next = ScheduleChangelog.entry(record);
          stage(writes, id, oldIndex, next);
          if (current != null) {
            current.put(Bytes.wrap(id), next);
          }
        }
        // Index keys arrive scattered over the time range: in key order, RocksDB's memtable
        // inserts are short searches (see StagedWrites).
        writes.sortByKey();
        try (WriteBatch batch = writes.toWriteBatch()) {
          db.write(writeOptions, batch);
        }
      } catch (RocksDBException e) {
        throw new ProcessorStateException("restore failed in store " + name, e);
      }
    }
  }

  /**
   * Null when every record says what it replaced. Otherwise the stored entries of the ids whose
   * first record in the batch does not say, read with one multi-get (absent ones map to null).
   */
  private Map<Bytes, byte[]> readUnsaid(
      List<ConsumerRecord<byte[], byte[]>> changes, List<byte[]> positions)
      throws RocksDBException {
    if (!positions.contains(null)) {
      return null;
    }
    Set<Bytes> seen = new HashSet<>();
    List<byte[]> keys = new ArrayList<>();
    for (int i = 0; i < changes.size(); i++) {
      byte[] id = changes.get(i).key();
      if (seen.add(Bytes.wrap(id)) && positions.get(i) == null) {
        keys.add(StoreKeys.entry(id));
      }
    }
    Map<Bytes, byte[]> entries = new HashMap<>();
    List<byte[]> values = keys.isEmpty() ? List.of() : db.multiGetAsList(keys);
    for (int i = 0; i < keys.size(); i++) {
      entries.put(Bytes.wrap(StoreKeys.idOfEntry(keys.get(i))), values.get(i));
    }
    return entries;
  }

  private void deleteKeys(List<byte[]> keys) {
    if (keys.isEmpty()) {
      return;
    }
    try (WriteBatch batch = new WriteBatch()) {
      for (byte[] key : keys) {
        batch.delete(key);
      }
      db.write(writeOptions, batch);
    } catch (RocksDBException e) {
      throw new ProcessorStateException("delete failed in store " + name, e);
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
    makeCollected();
    try {
      return db.getLongProperty("rocksdb.estimate-num-keys") + 2L * unwritten.size();
    } catch (RocksDBException e) {
      throw new ProcessorStateException("cannot read key count of store " + name, e);
    }
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
      makeCollected();
    }
    if (flushOnCommit && open) {
      persistMemtables();
    }
  }

  private void persistMemtables() {
    try (FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
      db.flush(flush);
    } catch (RocksDBException e) {
      throw new ProcessorStateException("flush failed in store " + name, e);
    }
  }

  @Override
  public synchronized void close() {
    if (!open) {
      return;
    }
    open = false;
    try {
      makeAll(); // the writes a caller made and the entries kept in memory only
      persistMemtables(); // before Kafka Streams writes the checkpoint naming the changelog offset
    } finally {
      collected = new StagedWrites();
      collectedEntries.clear();
      unwritten.clear();
      unwrittenDue.clear();
      forgetKnownEntries();
      db.close();
      if (configSetter != null) {
        configSetter.close(name, options);
      }
      writeOptions.close();
      options.close();
      filter.close();
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
    makeAll();
    forgetKnownEntries();
    return db;
  }

  /** Whether writes are collected and not made yet; for tests. */
  synchronized boolean hasCollectedWrites() {
    return !collected.isEmpty();
  }
}

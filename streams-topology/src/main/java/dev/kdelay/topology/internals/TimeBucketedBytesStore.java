package dev.kdelay.topology.internals;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.apache.kafka.streams.processor.BatchingStateRestoreCallback;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.RocksDBConfigSetter;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.CompressionType;
import org.rocksdb.FlushOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * The bytes-level task store: one RocksDB instance whose keys ({@link TaskKey}) sort by due time
 * and fall into fixed-width {@link TimeBuckets}. Kafka Streams' change logging and metering wrap it
 * (see {@link TimeBucketedStoreSupplier}); {@link TaskStore} types it at the outside.
 *
 * <p>A delay store is a queue: entries are written once and deleted when they fire, in key order.
 * In RocksDB every delete leaves a tombstone that an iterator must step over until compaction
 * removes it, so a naive "scan from the start" costs more the more has fired. This store keeps a
 * <b>low-water mark</b>: a key below which every entry is known to be deleted. Scans start there,
 * so fired entries are never scanned again. The mark rises as a scan yields keys and the caller
 * deletes them, and falls when an entry is written below it (a past-due task). When the mark passes
 * a bucket boundary, the drained buckets below it are removed as a whole with one range deletion,
 * so compaction reclaims them without reading their tombstones.
 *
 * <p>Durability comes from the changelog, as for Kafka Streams' own RocksDB stores: the write-ahead
 * log is off, and the memtables are persisted before Kafka Streams writes a checkpoint (see {@link
 * #commit(Map)}).
 *
 * <p>Written by one thread at a time (the stream thread that owns the task, or the thread restoring
 * it). Interactive queries may read from other threads: RocksDB reads are thread-safe, and only a
 * scan on the writing thread moves the low-water mark, so a query's scan never does.
 */
public final class TimeBucketedBytesStore implements KeyValueStore<Bytes, byte[]> {

  private static final byte[] BELOW_EVERYTHING = new byte[0];

  /**
   * The lowest key there can be: every key starts with its 8-byte due time. The mark starts here,
   * not at the empty array, so that a scan from {@code TaskKey.prefix(Long.MIN_VALUE)} (the task
   * store's due scan) counts as starting at the mark.
   */
  private static final byte[] LOWEST_KEY = TaskKey.prefix(Long.MIN_VALUE).get();

  static {
    RocksDB.loadLibrary();
  }

  private final String name;
  private final TimeBuckets buckets;
  private final Set<BucketedIterator> openIterators =
      Collections.newSetFromMap(new ConcurrentHashMap<>());

  private final Position position = Position.emptyPosition();
  private StateStoreContext context;
  private RocksDB db;
  private Options options;
  private WriteOptions writeOptions;
  private RocksDBConfigSetter configSetter;
  private volatile boolean open;

  /** Whether {@link #commit} persists the memtables: at least once only (see there). */
  private boolean flushOnCommit = true;

  /** Every key strictly below this one is deleted. Volatile: queries on other threads read it. */
  private volatile byte[] lowWater = LOWEST_KEY;

  /** The thread that last wrote; only its scans may move the low-water mark. */
  private volatile Thread writer;

  /** Buckets below this key have been removed with a range deletion. */
  private byte[] removedBelow = BELOW_EVERYTHING;

  /**
   * The writer's open scan that started at the low-water mark, or null: the one scan whose keys may
   * move the mark, told of every write while it is open.
   */
  private BucketedIterator markScan;

  private long removedBuckets;

  /** The entry the writer's scan yielded last, until a write to that key. */
  private byte[] lastScanned;

  private byte[] lastScannedValue;

  TimeBucketedBytesStore(String name, long bucketWidthMs) {
    this.name = name;
    this.buckets = new TimeBuckets(bucketWidthMs);
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public void init(StateStoreContext context, StateStore root) {
    this.context = context;
    File dir = new File(new File(context.stateDir(), "rocksdb"), name);
    openDb(dir, context.appConfigs());
    context.register(root, (BatchingStateRestoreCallback) this::restoreAll);
  }

  void openDb(File dir, Map<String, Object> configs) {
    try {
      Files.createDirectories(dir.toPath());
    } catch (IOException e) {
      throw new ProcessorStateException("cannot create state directory " + dir, e);
    }
    flushOnCommit =
        !StreamsConfig.EXACTLY_ONCE_V2.equals(
            String.valueOf(configs.get(StreamsConfig.PROCESSING_GUARANTEE_CONFIG)));
    options = defaultOptions();
    configSetter = configSetter(configs);
    if (configSetter != null) {
      configSetter.setConfig(name, options, configs);
    }
    writeOptions = new WriteOptions().setDisableWAL(true);
    try {
      db = RocksDB.open(options, dir.getAbsolutePath());
    } catch (RocksDBException e) {
      throw new ProcessorStateException("cannot open RocksDB store " + name + " in " + dir, e);
    }
    open = true;
  }

  private static Options defaultOptions() {
    BlockBasedTableConfig table = new BlockBasedTableConfig();
    table.setBlockSize(16 * 1024);
    // Point lookups (the old value on delete) go to one key; a bloom filter skips most files.
    table.setFilterPolicy(new BloomFilter(10, false));
    return new Options()
        .setCreateIfMissing(true)
        .setErrorIfExists(false)
        .setTableFormatConfig(table)
        .setCompressionType(CompressionType.LZ4_COMPRESSION)
        .setWriteBufferSize(16L * 1024 * 1024)
        .setMaxWriteBufferNumber(3)
        .setMaxBackgroundJobs(2);
  }

  private static RocksDBConfigSetter configSetter(Map<String, Object> configs) {
    Object setter = configs.get(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG);
    if (setter == null) {
      return null;
    }
    if (setter instanceof Class<?> type) {
      return (RocksDBConfigSetter) Utils.newInstance(type);
    }
    try {
      return Utils.newInstance(setter.toString(), RocksDBConfigSetter.class);
    } catch (ClassNotFoundException e) {
      throw new ProcessorStateException("cannot load RocksDB config setter " + setter, e);
    }
  }

  @Override
  public void put(Bytes key, byte[] value) {
    if (value == null) {
      deleteKey(key.get());
      return;
    }
    try {
      db.put(writeOptions, key.get(), value);
    } catch (RocksDBException e) {
      throw new ProcessorStateException("put failed in store " + name, e);
    }
    noteWritten(key.get());
  }

  @Override
  public byte[] putIfAbsent(Bytes key, byte[] value) {
    byte[] old = get(key);
    if (old == null) {
      put(key, value);
    }
    return old;
  }

  @Override
  public void putAll(List<KeyValue<Bytes, byte[]>> entries) {
    for (KeyValue<Bytes, byte[]> entry : entries) {
      put(entry.key, entry.value);
    }
  }

  @Override
  public byte[] delete(Bytes key) {
    // Firing deletes the entry its scan just read: its value is known, no point lookup needed.
    byte[] old = Arrays.equals(key.get(), lastScanned) ? lastScannedValue : get(key);
    deleteKey(key.get());
    return old;
  }

  private void deleteKey(byte[] key) {
    try {
      db.delete(writeOptions, key);
    } catch (RocksDBException e) {
      throw new ProcessorStateException("delete failed in store " + name, e);
    }
    notePosition();
    writer = Thread.currentThread();
    forgetScanned(key);
    if (Arrays.equals(key, lowWater)) {
      // The lowest possibly-live key is gone: everything up to and including it is deleted.
      advanceLowWater(successor(key));
    }
  }

  @Override
  public byte[] get(Bytes key) {
    try {
      return db.get(key.get());
    } catch (RocksDBException e) {
      throw new ProcessorStateException("get failed in store " + name, e);
    }
  }

  /**
   * Entries with keys in {@code [from, to]}, in key order. The scan starts at the low-water mark
   * when that is higher than {@code from}: nothing below it is live.
   */
  @Override
  public KeyValueIterator<Bytes, byte[]> range(Bytes from, Bytes to) {
    byte[] start = from == null ? BELOW_EVERYTHING : from.get();
    if (TaskKey.before(start, lowWater)) {
      start = lowWater;
    }
    byte[] end = to == null ? null : successor(to.get());
    boolean fromLowWater = Thread.currentThread() == writer && !TaskKey.before(lowWater, start);
    BucketedIterator iterator =
        new BucketedIterator(this, db, start, end, fromLowWater, this::closed);
    openIterators.add(iterator);
    if (fromLowWater) {
      markScan = iterator;
    }
    return iterator;
  }

  @Override
  public KeyValueIterator<Bytes, byte[]> all() {
    return range(null, null);
  }

  /** The input offsets whose writes this store holds, for interactive-query consistency. */
  @Override
  public Position getPosition() {
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

  @Override
  public long approximateNumEntries() {
    try {
      return db.getLongProperty("rocksdb.estimate-num-keys");
    } catch (RocksDBException e) {
      throw new ProcessorStateException("cannot read entry count of store " + name, e);
    }
  }

  /**
   * Persists the memtables when Kafka Streams may record changelog offsets right after: the
   * write-ahead log is off (the changelog is the log), so a checkpoint naming an offset must find
   * everything up to it on disk.
   *
   * <p>Under exactly-once Kafka Streams writes a checkpoint only when it closes the store (after an
   * unclean stop it finds none, wipes the store and restores it from the changelog), and {@link
   * #close} persists the memtables itself. So an exactly-once commit skips the flush: flushing at
   * every commit wrote one small SST file per task per commit, and the stream thread waited for
   * each, which at a commit every few milliseconds made the flushes the bottleneck of firing. At
   * least once, Kafka Streams may checkpoint at any commit, so every commit flushes.
   */
  @Override
  public void commit(Map<TopicPartition, Long> changelogOffsets) {
    if (!flushOnCommit) {
      return;
    }
    persistMemtables();
  }

  private void persistMemtables() {
    try (FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
      db.flush(flush);
    } catch (RocksDBException e) {
      throw new ProcessorStateException("flush failed in store " + name, e);
    }
  }

  @Override
  public void close() {
    if (!open) {
      return;
    }
    open = false;
    for (BucketedIterator iterator : List.copyOf(openIterators)) {
      iterator.close();
    }
    try {
      persistMemtables(); // before Kafka Streams writes the checkpoint that names the changelog
      // offset
    } finally {
      db.close();
      if (configSetter != null) {
        configSetter.close(name, options);
      }
      writeOptions.close();
      options.close();
    }
  }

  @Override
  public boolean persistent() {
    return true;
  }

  @Override
  public boolean isOpen() {
    return open;
  }

  /** Applies changelog records in one write batch; a null value is a delete. */
  void restoreAll(Collection<KeyValue<byte[], byte[]>> records) {
    // Restored deletes are not noted one by one: no cached value survives a restore.
    lastScanned = null;
    lastScannedValue = null;
    try (WriteBatch batch = new WriteBatch()) {
      for (KeyValue<byte[], byte[]> record : records) {
        if (record.value == null) {
          batch.delete(record.key);
        } else {
          batch.put(record.key, record.value);
          noteWritten(record.key);
        }
      }
      db.write(writeOptions, batch);
    } catch (RocksDBException e) {
      throw new ProcessorStateException("restore failed in store " + name, e);
    }
  }

  private void closed(BucketedIterator iterator) {
    openIterators.remove(iterator);
    if (markScan == iterator) {
      markScan = null;
    }
  }

  /**
   * A write below the mark lowers it. The scan that may move the mark learns of it: its snapshot no
   * longer shows every live key below the written one.
   */
  private void noteWritten(byte[] key) {
    writer = Thread.currentThread();
    forgetScanned(key);
    if (markScan != null) {
      markScan.written(key);
    }
    notePosition();
    if (TaskKey.before(key, lowWater)) {
      lowWater = key;
    }
    if (TaskKey.before(key, removedBelow)) {
      removedBelow = TaskKey.prefix(bucketStartOf(key)).get();
    }
  }

  /** The cached value of the last scanned entry no longer holds once that key is written. */
  private void forgetScanned(byte[] key) {
    if (lastScanned != null && Arrays.equals(key, lastScanned)) {
      lastScanned = null;
      lastScannedValue = null;
    }
  }

  /**
   * Called by the scan that started at the mark, for each key it yields: every key below that one
   * is deleted, unless a write since the scan began put a key below it that its snapshot cannot
   * show. Writes at or above the key (a fired task's expiry, the next occurrence of a schedule) do
   * not stop the mark: a scan that fires tasks writes those as it goes, and a mark that stopped at
   * them would fall behind by every task fired after the first in each punctuation, leaving a
   * growing run of tombstones for every later scan to step over.
   */
  void scanReached(BucketedIterator scan, byte[] key, byte[] value) {
    if (scan != markScan) {
      return;
    }
    lastScanned = key;
    lastScannedValue = value;
    if (!scan.wroteBelow(key) && TaskKey.before(lowWater, key)) {
      advanceLowWater(key);
    }
  }

  private void advanceLowWater(byte[] key) {
    lowWater = key;
    if (key.length < TaskKey.DUE_BYTES) {
      return;
    }
    byte[] bucketStart = TaskKey.prefix(bucketStartOf(key)).get();
    if (removedBelow == BELOW_EVERYTHING) {
      // The first bucket seen since opening: nothing below it is known to need removing.
      removedBelow = bucketStart;
    } else if (TaskKey.before(removedBelow, bucketStart)) {
      removeBuckets(removedBelow, bucketStart);
    }
  }

  /** Removes the drained buckets in {@code [from, to)} as a whole: one range tombstone. */
  private void removeBuckets(byte[] from, byte[] to) {
    try {
      db.deleteRange(writeOptions, from, to);
    } catch (RocksDBException e) {
      throw new ProcessorStateException("removing drained buckets failed in store " + name, e);
    }
    removedBelow = to;
    removedBuckets++;
  }

  private long bucketStartOf(byte[] key) {
    return buckets.bucketStart(buckets.bucketId(TaskKey.dueOf(key)));
  }

  /** The smallest key greater than {@code key}. */
  private static byte[] successor(byte[] key) {
    return Arrays.copyOf(key, key.length + 1);
  }

  /** The current low-water mark, for tests. */
  byte[] lowWater() {
    return lowWater;
  }

  /** How many times drained buckets were removed, for tests. */
  long removedBuckets() {
    return removedBuckets;
  }

  /** The RocksDB instance, for tests that inspect it. */
  RocksDB db() {
    return db;
  }
}

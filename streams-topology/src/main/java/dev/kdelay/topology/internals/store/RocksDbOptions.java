package dev.kdelay.topology.internals.store;

import java.util.Map;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.apache.kafka.streams.state.RocksDBConfigSetter;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.CompactionStyle;
import org.rocksdb.CompressionType;
import org.rocksdb.IndexType;
import org.rocksdb.Options;

/**
 * The RocksDB options of the schedule store: kdelay's defaults, then the application's {@code
 * rocksdb.config.setter} (the bounded block cache and memtables), as Kafka Streams applies it to
 * its own stores.
 */
public final class RocksDbOptions {

  private RocksDbOptions() {}

  /**
   * kdelay's options. The filter is the caller's to close after the options and the database
   * (RocksDB holds its own reference while open; the Java object owns native memory of its own).
   */
  public static Options defaults(BloomFilter filter) {
    BlockBasedTableConfig table = new BlockBasedTableConfig();
    // Firing reads entries by point lookups in due order, which is not key order: a small block
    // is less to decompress per lookup.
    table.setBlockSize(4 * 1024);
    // Every request looks up its id, most often one not stored yet: a bloom filter answers that
    // without reading data blocks. Partitioned, so a lookup loads one small filter partition
    // instead of a whole file's filter: in a bounded block cache shared by every partition's
    // store, whole filters of files holding millions of keys (entries, index keys, markers) were
    // evicted and re-read on every lookup, and intake slowed as markers accumulated (JFR: the
    // stream thread in RocksDB.get most of the time). The top level stays pinned.
    table.setFilterPolicy(filter);
    table.setPartitionFilters(true);
    table.setIndexType(IndexType.kTwoLevelIndexSearch);
    table.setMetadataBlockSize(4 * 1024);
    return new Options()
        .setCreateIfMissing(true)
        .setErrorIfExists(false)
        .setTableFormatConfig(table)
        .setCompressionType(CompressionType.LZ4_COMPRESSION)
        // Universal compaction, as Kafka Streams' own stores use. Entries are keyed by schedule
        // id, and ids arrive in no key order, so every flushed file spans the whole key range.
        // Leveled compaction then rewrote the entire base level for each batch of level-0 files,
        // a cost that grows with the store: a restore of 16 M records fell from 440,000 to
        // 150,000 records/s as the store filled, writes stalled on level-0 file counts. Universal
        // merges sorted runs of similar size instead (write amplification about 2.5 against 6.7
        // in that restore), and opens state written under leveled compaction as it is, and the
        // other way round (RocksDBScheduleStoreTest).
        .setCompactionStyle(CompactionStyle.UNIVERSAL)
        // A restore holds compactions back (BulkLoading) and lets files pile up on level 0 to
        // eight under the slowdown trigger. At the defaults (20, 36) that was 12, and a 10 M-task
        // restore compacted twice on the way; compactions keep level 0 at a few files otherwise.
        .setLevel0SlowdownWritesTrigger(40)
        .setLevel0StopWritesTrigger(56)
        .setWriteBufferSize(16L * 1024 * 1024)
        .setMaxWriteBufferNumber(3)
        .setMaxBackgroundJobs(2)
        // Intake looks up ids that are mostly not stored yet: a filter over the memtable's keys
        // answers without searching its skip list. It is allocated whole with each memtable and
        // counted against the shared write buffer budget, so it is kept small: at 0.1 of 16 MiB,
        // six partitions' filters took a third of a 32 MiB budget, memtables were flushed
        // at about 1.5 MiB, and a restore spent its time merging the many small files that made.
        // 0.02 is 2.6 M bits, still tens of bits per key at the memtable sizes the budget allows.
        .setMemtablePrefixBloomSizeRatio(0.02)
        .setMemtableWholeKeyFiltering(true);
  }

  /** The filter {@link #defaults} expects: ten bits per key. */
  public static BloomFilter filter() {
    return new BloomFilter(10, false);
  }

  static RocksDBConfigSetter configSetter(Map<String, Object> configs) {
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
}

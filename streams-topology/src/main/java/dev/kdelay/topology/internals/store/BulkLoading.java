package dev.kdelay.topology.internals.store;

import java.util.function.LongSupplier;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.rocksdb.MutableColumnFamilyOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Holds RocksDB's compactions back while a restore brings a backlog into a store, and lets them run
 * again once the store is used for anything else, the restore reaches records written recently, or
 * the files not compacted reach a bound.
 *
 * <p>A restore of 10 M tasks flushes a memtable of each partition some 25 times. Compacted as they
 * came, the files were merged again and again on the cores the restore shares with the broker and
 * RocksDB's flushes: compactions took 21 s of CPU in a restore of 39 s. Held back, the restore
 * thread has that CPU, and the files are merged once, after the store is back. Until then a lookup
 * consults more files (each answers "absent" from its Bloom filter).
 *
 * <p>A backlog is told by the age of the records restored, not by the size of a batch: the restore
 * consumer hands a partition's records over in pieces of any size, and a standby that keeps up
 * restores records written a moment ago. The write stalls RocksDB applies to many files on level 0
 * do not apply while compactions are off, so the bound ({@link #maxLevel0Files}) stays below the
 * level at which writes slow down: compactions turned back on at the bound never throttle the
 * writes that follow.
 */
final class BulkLoading {

  private static final Logger log = LoggerFactory.getLogger(BulkLoading.class);

  /** Records restored at least this long after they were written are a backlog. */
  static final long BACKLOG_AGE_MS = 30_000;

  /** Level-0 files under the slowdown trigger at which compactions run again. */
  private static final int STALL_MARGIN = 8;

  private final RocksDB db;
  private final String store;
  private final LongSupplier clock;
  private final boolean enabled;
  private final int maxLevel0Files;
  private boolean on;

  /**
   * @param options the options the store was opened with: an application that turned compactions
   *     off itself keeps them off, and the bound is taken from its slowdown trigger
   * @param clock wall-clock time in ms, against which the records' timestamps are read
   */
  BulkLoading(RocksDB db, Options options, String store, LongSupplier clock) {
    this.db = db;
    this.store = store;
    this.clock = clock;
    this.enabled = !options.disableAutoCompactions();
    this.maxLevel0Files = Math.max(4, options.level0SlowdownWritesTrigger() - STALL_MARGIN);
  }

  /**
   * A restore batch is about to be written.
   *
   * @param newestMs the latest timestamp of its records
   */
  void restoring(long newestMs) {
    if (!enabled) {
      return;
    }
    if (clock.getAsLong() - newestMs < BACKLOG_AGE_MS) {
      end();
      return;
    }
    long level0 = level0Files();
    if (on && level0 >= maxLevel0Files) {
      end();
    } else if (!on && level0 < maxLevel0Files / 2) {
      start(level0);
    }
  }

  /** The store is used for more than a restore: compactions run again. */
  void end() {
    if (!on) {
      return;
    }
    on = false;
    try {
      db.setOptions(MutableColumnFamilyOptions.builder().setDisableAutoCompactions(false).build());
    } catch (RocksDBException e) {
      throw new ProcessorStateException("cannot turn compactions back on in store " + store, e);
    }
    log.debug("event=bulk-loading-ended store={} level0_files={}", store, level0Files());
  }

  int maxLevel0Files() {
    return maxLevel0Files;
  }

  private void start(long level0) {
    try {
      db.setOptions(MutableColumnFamilyOptions.builder().setDisableAutoCompactions(true).build());
      on = true;
      log.debug("event=bulk-loading-started store={} level0_files={}", store, level0);
    } catch (RocksDBException e) {
      // Only the restore's pace is at stake: it goes on with compactions as they are.
      log.warn("event=bulk-loading-refused store={} reason={}", store, e.getMessage());
    }
  }

  private long level0Files() {
    try {
      // A string property: RocksDB's integer properties do not include it.
      return Long.parseLong(db.getProperty("rocksdb.num-files-at-level0").trim());
    } catch (RocksDBException | NumberFormatException e) {
      throw new ProcessorStateException("cannot read level-0 file count of store " + store, e);
    }
  }
}

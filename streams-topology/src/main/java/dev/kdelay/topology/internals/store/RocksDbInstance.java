package dev.kdelay.topology.internals.store;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.apache.kafka.streams.state.RocksDBConfigSetter;
import org.rocksdb.BloomFilter;
import org.rocksdb.FlushOptions;
import org.rocksdb.Holder;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * The schedule store's RocksDB instance with the native objects it was opened with, which are
 * closed with it: options ({@link RocksDbOptions}, then the application's config setter), a Bloom
 * filter, and write options with the write-ahead log off (the changelog is the log).
 */
final class RocksDbInstance {

  static {
    RocksDB.loadLibrary();
  }

  final RocksDB db;
  final Options options;
  final WriteOptions writeOptions;
  private final BloomFilter filter;
  private final RocksDBConfigSetter configSetter;
  private final String name;

  private RocksDbInstance(
      RocksDB db,
      Options options,
      WriteOptions writeOptions,
      BloomFilter filter,
      RocksDBConfigSetter configSetter,
      String name) {
    this.db = db;
    this.options = options;
    this.writeOptions = writeOptions;
    this.filter = filter;
    this.configSetter = configSetter;
    this.name = name;
  }

  /** Opens (or creates) the store {@code name} in {@code dir} and checks its format. */
  static RocksDbInstance open(File dir, String name, Map<String, Object> configs) {
    try {
      Files.createDirectories(dir.toPath());
    } catch (IOException e) {
      throw new ProcessorStateException("cannot create state directory " + dir, e);
    }
    BloomFilter filter = RocksDbOptions.filter();
    Options options = RocksDbOptions.defaults(filter);
    RocksDBConfigSetter configSetter = RocksDbOptions.configSetter(configs);
    if (configSetter != null) {
      configSetter.setConfig(name, options, configs);
    }
    WriteOptions writeOptions = new WriteOptions().setDisableWAL(true);
    try {
      RocksDB db = RocksDB.open(options, dir.getAbsolutePath());
      StoreFormat.check(db, writeOptions, name, dir);
      return new RocksDbInstance(db, options, writeOptions, filter, configSetter, name);
    } catch (RocksDBException e) {
      throw new ProcessorStateException("cannot open RocksDB store " + name + " in " + dir, e);
    }
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
  byte[] entry(byte[] id) {
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

  /** Makes staged writes in one write batch, in key order (see {@link StagedWrites}). */
  void write(StagedWrites writes, String what) {
    writes.sortByKey();
    try (WriteBatch batch = writes.toWriteBatch()) {
      db.write(writeOptions, batch);
    } catch (RocksDBException e) {
      throw new ProcessorStateException(what + " failed in store " + name, e);
    }
  }

  /** Deletes keys in one write batch. */
  void delete(List<byte[]> keys) {
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

  /** Writes the memtables to disk and waits for it. */
  void flush() {
    try (FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
      db.flush(flush);
    } catch (RocksDBException e) {
      throw new ProcessorStateException("flush failed in store " + name, e);
    }
  }

  /** RocksDB's estimate of the keys it holds. */
  long approximateNumKeys() {
    try {
      return db.getLongProperty("rocksdb.estimate-num-keys");
    } catch (RocksDBException e) {
      throw new ProcessorStateException("cannot read key count of store " + name, e);
    }
  }

  /** Closes the instance and everything it was opened with. */
  void close() {
    db.close();
    if (configSetter != null) {
      configSetter.close(name, options);
    }
    writeOptions.close();
    options.close();
    filter.close();
  }
}

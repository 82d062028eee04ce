package dev.kdelay.topology.internals.store;

import dev.kdelay.topology.DelayConfig;
import java.util.Map;
import org.apache.kafka.streams.state.RocksDBConfigSetter;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.Cache;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.WriteBufferManager;

/**
 * Bounds the off-heap memory of every RocksDB store of the process: one block cache shared by all
 * stores, with memtables counted against it, index and filter blocks cached in it. Memory then
 * stays flat however many tasks are pending or partitions an instance owns; pending tasks live on
 * disk, never on the JVM heap.
 *
 * <p>Set as {@code rocksdb.config.setter}; sizes come from {@value #BLOCK_CACHE_BYTES_CONFIG} and
 * {@value #WRITE_BUFFER_BYTES_CONFIG}, read once per process.
 */
public final class BoundedMemoryRocksDbConfig implements RocksDBConfigSetter {

  /** Total off-heap bytes of the shared cache. */
  public static final String BLOCK_CACHE_BYTES_CONFIG =
      DelayConfig.ROCKSDB_BLOCK_CACHE_BYTES_CONFIG;

  /** Bytes of the cache that memtables may use. */
  public static final String WRITE_BUFFER_BYTES_CONFIG =
      DelayConfig.ROCKSDB_WRITE_BUFFER_BYTES_CONFIG;

  private static final long DEFAULT_CACHE_BYTES = DelayConfig.ROCKSDB_BLOCK_CACHE_BYTES_DEFAULT;
  private static final long DEFAULT_WRITE_BUFFER_BYTES =
      DelayConfig.ROCKSDB_WRITE_BUFFER_BYTES_DEFAULT;
  private static final double INDEX_FILTER_RATIO = 0.1;

  private static Cache cache;
  private static WriteBufferManager writeBufferManager;

  @Override
  public void setConfig(String storeName, Options options, Map<String, Object> configs) {
    BlockBasedTableConfig table = (BlockBasedTableConfig) options.tableFormatConfig();
    table.setBlockCache(sharedCache(configs));
    table.setCacheIndexAndFilterBlocks(true);
    table.setCacheIndexAndFilterBlocksWithHighPriority(true);
    table.setPinTopLevelIndexAndFilter(true);
    options.setWriteBufferManager(writeBufferManager);
    options.setTableFormatConfig(table);
  }

  private static synchronized Cache sharedCache(Map<String, Object> configs) {
    if (cache == null) {
      long cacheBytes = bytes(configs, BLOCK_CACHE_BYTES_CONFIG, DEFAULT_CACHE_BYTES);
      long bufferBytes = bytes(configs, WRITE_BUFFER_BYTES_CONFIG, DEFAULT_WRITE_BUFFER_BYTES);
      cache = new LRUCache(cacheBytes, -1, false, INDEX_FILTER_RATIO);
      writeBufferManager = new WriteBufferManager(bufferBytes, cache);
    }
    return cache;
  }

  private static long bytes(Map<String, Object> configs, String key, long fallback) {
    Object value = configs.get(key);
    return value == null ? fallback : Long.parseLong(value.toString());
  }

  @Override
  public void close(String storeName, Options options) {
    // The cache and write buffer manager are shared by every store of the process: never closed.
  }
}

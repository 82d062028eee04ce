package dev.kdelay.benchmarks;

import dev.kdelay.topology.DelayConfig;
import dev.kdelay.topology.internals.store.BoundedMemoryRocksDbConfig;
import dev.kdelay.topology.internals.store.RocksDBScheduleStore;
import dev.kdelay.topology.internals.store.ScheduleChangelog;
import dev.kdelay.topology.internals.store.ScheduleEntry;
import dev.kdelay.topology.internals.store.StoreKeys;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.StreamsConfig;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * The schedule store's restore path alone, without Kafka: several partitions' stores, opened as the
 * service opens them (the bounded memory config, exactly-once), restored from a synthetic changelog
 * shaped like the benchmark's capacity fill, so that the store's share of a restore can be measured
 * at a size the end-to-end benchmark takes half an hour to reach.
 *
 * <p>The changelog: {@code tasks} entries with ids {@code r-0, r-1, ...} (in no key order), due one
 * day ahead and spread over a week in the order sent, then a fired marker for the first {@code
 * fired} percent of them, each record saying what it replaced, as the store logs them. Records go
 * to partitions by a hash of the id and to the stores in batches of 1,000, the restore consumer's
 * batch.
 *
 * <p>The baseline, in the same run: the same records written as Kafka Streams' own key-value store
 * restores them, one put per record in arrival order, into stores opened with the same options. The
 * ratio is what the schedule store's index and its markers cost on top.
 *
 * <p>Run from the built benchmark jar: {@code java -Xmx2g -cp benchmarks/target/kdelay-bench.jar
 * dev.kdelay.topology.internals.StoreRestoreBenchmark [tasks [fired-percent [partitions
 * [write-buffer-MiB]]]]}; the write buffers default to the service's, shared by every store, with a
 * block cache twice their size.
 */
public final class StoreRestoreBenchmark {

  private static final int BATCH = 1_000;
  private static final int TASK_BYTES = 200;
  private static final Pattern STALLS =
      Pattern.compile("total-delays: (\\d+), total-stops: (\\d+)");

  private final int tasks;
  private final int firedPercent;
  private final int partitions;
  private final long writeBufferBytes;
  private final byte[] task = new byte[TASK_BYTES];
  private final long now = System.currentTimeMillis();

  private StoreRestoreBenchmark(
      int tasks, int firedPercent, int partitions, long writeBufferBytes) {
    this.tasks = tasks;
    this.firedPercent = firedPercent;
    this.partitions = partitions;
    this.writeBufferBytes = writeBufferBytes;
    new Random(42).nextBytes(task);
  }

  public static void main(String[] args) throws Exception {
    RocksDB.loadLibrary();
    int tasks = args.length > 0 ? Integer.parseInt(args[0]) : 10_000_000;
    int fired = args.length > 1 ? Integer.parseInt(args[1]) : 60;
    int partitions = args.length > 2 ? Integer.parseInt(args[2]) : 6;
    long writeBufferMiB =
        args.length > 3
            ? Long.parseLong(args[3])
            : DelayConfig.ROCKSDB_WRITE_BUFFER_BYTES_DEFAULT / (1024 * 1024);
    StoreRestoreBenchmark bench =
        new StoreRestoreBenchmark(tasks, fired, partitions, writeBufferMiB * 1024 * 1024);
    System.out.printf(
        "store restore: %,d tasks, %d %% of them fired, %d partitions, batches of %,d,"
            + " %d MiB of write buffers%n",
        tasks, fired, partitions, BATCH, writeBufferMiB);
    Run plain = bench.run(true);
    Run store = bench.run(false);
    System.out.printf("  %-34s %s%n", "baseline (one put per record)", plain);
    System.out.printf("  %-34s %s%n", "schedule store (entries and index)", store);
    System.out.printf(
        "  schedule store / baseline: %.2f (records/s)%n", store.perSecond() / plain.perSecond());
  }

  /** What one restore of every partition measured. */
  private record Run(
      long records, long nanos, long stallDelays, long stallStops, long compactionNanos) {
    double perSecond() {
      return records * 1e9 / nanos;
    }

    @Override
    public String toString() {
      return String.format(
          "%,d records in %,.1f s = %,.0f records/s; write stalls: %,d delays, %,d stops;"
              + " compactions after: %,.1f s",
          records, nanos / 1e9, perSecond(), stallDelays, stallStops, compactionNanos / 1e9);
    }
  }

  private Run run(boolean plain) throws IOException, RocksDBException {
    Path root = Files.createTempDirectory("kdelay-store-restore");
    Map<String, Object> configs = new HashMap<>();
    configs.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    configs.put(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG, BoundedMemoryRocksDbConfig.class);
    // Read by the config's first store only: the cache and write buffer budget are per process.
    configs.put(BoundedMemoryRocksDbConfig.WRITE_BUFFER_BYTES_CONFIG, writeBufferBytes);
    configs.put(BoundedMemoryRocksDbConfig.BLOCK_CACHE_BYTES_CONFIG, 2 * writeBufferBytes);
    List<RocksDBScheduleStore> stores = new ArrayList<>();
    try (WriteOptions noWal = new WriteOptions().setDisableWAL(true)) {
      for (int p = 0; p < partitions; p++) {
        RocksDBScheduleStore store = new RocksDBScheduleStore("restore-" + p);
        store.openDb(new File(root.toFile(), "p" + p), configs);
        stores.add(store);
      }
      List<List<ConsumerRecord<byte[], byte[]>>> pending = new ArrayList<>();
      for (int p = 0; p < partitions; p++) {
        pending.add(new ArrayList<>(BATCH));
      }
      long records = 0;
      long started = System.nanoTime();
      int markers = (int) ((long) tasks * firedPercent / 100);
      for (int i = 0; i < tasks + markers; i++) {
        ConsumerRecord<byte[], byte[]> record = i < tasks ? entry(i) : marker(i - tasks);
        List<ConsumerRecord<byte[], byte[]>> batch = pending.get(record.partition());
        batch.add(record);
        if (batch.size() == BATCH) {
          restore(stores.get(record.partition()), batch, plain, noWal);
          records += batch.size();
          batch.clear();
        }
      }
      for (int p = 0; p < partitions; p++) {
        restore(stores.get(p), pending.get(p), plain, noWal);
        records += pending.get(p).size();
      }
      long nanos = System.nanoTime() - started;
      // The restore is over: the task runs (its first due check), and the compactions a restore
      // holds back run. How long they take is the rest of the restore's cost.
      long restored = System.nanoTime();
      if (!plain) {
        stores.forEach(store -> store.mayHaveDue(now));
      }
      awaitCompactions(stores);
      long compactionNanos = System.nanoTime() - restored;
      long delays = 0;
      long stops = 0;
      for (RocksDBScheduleStore store : stores) {
        Matcher stalls = STALLS.matcher(store.db().getProperty("rocksdb.stats"));
        if (stalls.find()) {
          delays += Long.parseLong(stalls.group(1));
          stops += Long.parseLong(stalls.group(2));
        }
      }
      return new Run(records, nanos, delays, stops, compactionNanos);
    } finally {
      stores.forEach(RocksDBScheduleStore::close);
      Utils.delete(root.toFile());
    }
  }

  private static void awaitCompactions(List<RocksDBScheduleStore> stores) throws RocksDBException {
    for (RocksDBScheduleStore store : stores) {
      while (store.db().getLongProperty("rocksdb.compaction-pending") > 0
          || store.db().getLongProperty("rocksdb.num-running-compactions") > 0) {
        try {
          Thread.sleep(50);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  private static void restore(
      RocksDBScheduleStore store,
      List<ConsumerRecord<byte[], byte[]>> batch,
      boolean plain,
      WriteOptions noWal)
      throws RocksDBException {
    if (batch.isEmpty()) {
      return;
    }
    if (!plain) {
      store.restoreBatch(batch);
      return;
    }
    try (WriteBatch writes = new WriteBatch()) {
      for (ConsumerRecord<byte[], byte[]> record : batch) {
        byte[] value = ScheduleChangelog.entry(record);
        writes.put(StoreKeys.entry(record.key()), value);
      }
      store.db().write(noWal, writes);
    }
  }

  private byte[] id(int index) {
    return ("r-" + index).getBytes(StandardCharsets.UTF_8);
  }

  private int partition(byte[] id) {
    return Math.floorMod(Arrays.hashCode(id), partitions);
  }

  private long dueMs(int index) {
    return now + 86_400_000L + (long) (index * (7 * 86_400_000.0 / tasks));
  }

  private ScheduleEntry scheduled(int index) {
    return new ScheduleEntry(ScheduleEntry.State.SCHEDULED, dueMs(index), now, task);
  }

  private ConsumerRecord<byte[], byte[]> entry(int index) {
    byte[] id = id(index);
    RecordHeaders headers = new RecordHeaders();
    headers.add(new RecordHeader(ScheduleChangelog.REPLACES_HEADER, StoreKeys.positionOf(null)));
    return record(id, scheduled(index).toBytes(), headers);
  }

  private ConsumerRecord<byte[], byte[]> marker(int index) {
    byte[] marker =
        new ScheduleEntry(ScheduleEntry.State.FIRED, now + 86_400_000L, now, new byte[0]).toBytes();
    RecordHeaders headers = new RecordHeaders();
    headers.add(new RecordHeader(ScheduleChangelog.MARKER_HEADER, marker));
    headers.add(
        new RecordHeader(
            ScheduleChangelog.REPLACES_HEADER, StoreKeys.positionOf(scheduled(index).toBytes())));
    return record(id(index), null, headers);
  }

  private ConsumerRecord<byte[], byte[]> record(byte[] id, byte[] value, RecordHeaders headers) {
    return new ConsumerRecord<>(
        "restore-changelog",
        partition(id),
        0,
        0L,
        TimestampType.CREATE_TIME,
        0,
        0,
        id,
        value,
        headers,
        Optional.empty());
  }
}

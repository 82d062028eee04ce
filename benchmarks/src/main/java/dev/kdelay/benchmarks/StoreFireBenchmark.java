package dev.kdelay.benchmarks;

import dev.kdelay.topology.DelayConfig;
import dev.kdelay.topology.internals.IntakeReadAhead;
import dev.kdelay.topology.internals.store.BoundedMemoryRocksDbConfig;
import dev.kdelay.topology.internals.store.RocksDBScheduleStore;
import dev.kdelay.topology.internals.store.RocksDbOptions;
import dev.kdelay.topology.internals.store.ScheduleBytes;
import dev.kdelay.topology.internals.store.ScheduleEntry;
import dev.kdelay.topology.internals.store.StoreKeys;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.StreamsConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteOptions;

/**
 * The schedule store's intake and fire paths alone, without Kafka, against the store work of the
 * benchmark's textbook application in the same run, so that the store's share of the end-to-end
 * throughput ratio can be measured and changed without the noise of brokers and producers.
 *
 * <p>The schedule store, as the stream thread drives it: the ids of {@link
 * IntakeReadAhead#READ_AHEAD} requests read ahead together (as of a poll; {@code
 * -Dkdelay.bench.noReadAhead=true} leaves that out), then per request a lookup of its id and the
 * write of its entry (with its due index key); then, until nothing is due, a due scan of at most
 * {@code fires-per-commit} entries, each rewritten as its fired marker (with its expiry index key),
 * and a commit. The textbook store: per request, one put of the payload under its due time and id,
 * as Kafka Streams' {@code RocksDBStore} puts (one call each, no write-ahead log); then scans from
 * the first unfired key, each found key deleted by one call. Both stores are opened with the
 * schedule store's options and the service's bounded memory config; ids arrive in no key order and
 * due times in the order sent, as in the end-to-end throughput section.
 *
 * <p>Run from the built benchmark jar: {@code java -Xmx1g -cp benchmarks/target/kdelay-bench.jar
 * dev.kdelay.topology.internals.StoreFireBenchmark [tasks [rounds [fires-per-commit]]]}. Each round
 * measures both stores, alternating which goes first; the figures are medians over rounds.
 */
public final class StoreFireBenchmark {

  private static final int TASK_BYTES = 200;

  private final int tasks;
  private final int firesPerCommit;
  private final byte[] task = new byte[TASK_BYTES];
  private final long now = System.currentTimeMillis();
  private final boolean readAhead = !Boolean.getBoolean("kdelay.bench.noReadAhead");

  private StoreFireBenchmark(int tasks, int firesPerCommit) {
    this.tasks = tasks;
    this.firesPerCommit = firesPerCommit;
    new Random(42).nextBytes(task);
  }

  public static void main(String[] args) throws Exception {
    RocksDB.loadLibrary();
    int tasks = args.length > 0 ? Integer.parseInt(args[0]) : 500_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    int perCommit = args.length > 2 ? Integer.parseInt(args[2]) : 4_000;
    StoreFireBenchmark bench = new StoreFireBenchmark(tasks, perCommit);
    System.out.printf(
        "store fire: %,d tasks of %d bytes, %,d fires per commit, %d rounds (a first one to warm"
            + " up is not counted)%n",
        tasks, TASK_BYTES, perCommit, rounds);
    bench.run(true);
    bench.run(false);
    List<Run> textbook = new ArrayList<>();
    List<Run> store = new ArrayList<>();
    for (int round = 0; round < rounds; round++) {
      boolean textbookFirst = round % 2 == 0;
      Run first = bench.run(textbookFirst);
      Run second = bench.run(!textbookFirst);
      textbook.add(textbookFirst ? first : second);
      store.add(textbookFirst ? second : first);
    }
    Run t = Run.median(textbook);
    Run s = Run.median(store);
    System.out.printf("  %-16s %s%n", "textbook store", t);
    System.out.printf("  %-16s %s%n", "schedule store", s);
    System.out.printf(
        "  schedule store / textbook (per second, medians): intake %.2f, fire %.2f, both %.2f%n",
        t.intakeNanos / (double) s.intakeNanos,
        t.fireNanos / (double) s.fireNanos,
        (t.intakeNanos + t.fireNanos) / (double) (s.intakeNanos + s.fireNanos));
  }

  /** What one pass of a store measured. */
  private record Run(int tasks, long intakeNanos, long fireNanos) {
    static Run median(List<Run> runs) {
      long[] intake = runs.stream().mapToLong(Run::intakeNanos).sorted().toArray();
      long[] fire = runs.stream().mapToLong(Run::fireNanos).sorted().toArray();
      return new Run(runs.get(0).tasks, intake[intake.length / 2], fire[fire.length / 2]);
    }

    @Override
    public String toString() {
      return String.format(
          "intake %.2f µs/request, fire %.2f µs/task",
          intakeNanos / 1e3 / tasks, fireNanos / 1e3 / tasks);
    }
  }

  private Run run(boolean textbook) throws IOException, RocksDBException {
    Path root = Files.createTempDirectory("kdelay-store-fire");
    Map<String, Object> configs = new HashMap<>();
    configs.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    configs.put(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG, BoundedMemoryRocksDbConfig.class);
    configs.put(
        BoundedMemoryRocksDbConfig.WRITE_BUFFER_BYTES_CONFIG,
        DelayConfig.ROCKSDB_WRITE_BUFFER_BYTES_DEFAULT);
    try {
      return textbook ? runTextbook(root.toFile(), configs) : runStore(root.toFile(), configs);
    } finally {
      Utils.delete(root.toFile());
    }
  }

  private Run runStore(File dir, Map<String, Object> configs) {
    RocksDBScheduleStore store = new RocksDBScheduleStore("fire");
    store.openDb(dir, configs);
    try {
      // The punctuator scans every few milliseconds, also before the first request: from then on
      // the store keeps entries due soon in memory (up to its budget).
      store.due(now, firesPerCommit, 8L << 20);
      long started = System.nanoTime();
      for (int i = 0; i < tasks; i++) {
        if (readAhead && i % IntakeReadAhead.READ_AHEAD == 0) {
          List<byte[]> ahead = new ArrayList<>(IntakeReadAhead.READ_AHEAD);
          for (int j = i; j < Math.min(tasks, i + IntakeReadAhead.READ_AHEAD); j++) {
            ahead.add(id(j));
          }
          store.readAhead(ahead);
        }
        byte[] id = id(i);
        byte[] previous = store.get(id);
        store.write(id, previous, scheduled(i));
      }
      store.commit(Map.of());
      long intake = System.nanoTime() - started;
      started = System.nanoTime();
      byte[] marker =
          new ScheduleEntry(ScheduleEntry.State.FIRED, now + 86_400_000L, now, new byte[0])
              .toBytes();
      int fired = 0;
      while (true) {
        List<ScheduleBytes.Due> batch = store.due(Long.MAX_VALUE - 1, firesPerCommit, 8L << 20);
        if (batch.isEmpty()) {
          break;
        }
        for (ScheduleBytes.Due due : batch) {
          store.write(due.id(), due.entry(), marker);
        }
        fired += batch.size();
        store.commit(Map.of());
      }
      check(fired);
      return new Run(tasks, intake, System.nanoTime() - started);
    } finally {
      store.close();
    }
  }

  private Run runTextbook(File dir, Map<String, Object> configs) throws RocksDBException {
    BloomFilter filter = RocksDbOptions.filter();
    Options options = RocksDbOptions.defaults(filter);
    BoundedMemoryRocksDbConfig memory = new BoundedMemoryRocksDbConfig();
    memory.setConfig("textbook", options, configs);
    try (WriteOptions noWal = new WriteOptions().setDisableWAL(true);
        RocksDB db = RocksDB.open(options, dir.getAbsolutePath())) {
      long started = System.nanoTime();
      for (int i = 0; i < tasks; i++) {
        db.put(noWal, dueKey(i), task);
      }
      long intake = System.nanoTime() - started;
      started = System.nanoTime();
      byte[] from = new byte[0];
      int fired = 0;
      while (true) {
        List<byte[]> batch = new ArrayList<>(firesPerCommit);
        try (RocksIterator scan = db.newIterator()) {
          for (scan.seek(from); scan.isValid() && batch.size() < firesPerCommit; scan.next()) {
            batch.add(scan.key());
            scan.value();
          }
        }
        if (batch.isEmpty()) {
          break;
        }
        for (byte[] key : batch) {
          db.delete(noWal, key);
        }
        from = StoreKeys.successor(batch.get(batch.size() - 1));
        fired += batch.size();
      }
      check(fired);
      return new Run(tasks, intake, System.nanoTime() - started);
    } finally {
      memory.close("textbook", options);
      options.close();
      filter.close();
    }
  }

  private void check(int fired) {
    if (fired != tasks) {
      throw new IllegalStateException("fired " + fired + " of " + tasks);
    }
  }

  /** Ids in no key order, as the end-to-end benchmark's are. */
  private static byte[] id(int index) {
    return ("t-" + Integer.toHexString(Integer.reverse(index))).getBytes(StandardCharsets.UTF_8);
  }

  private long dueMs(int index) {
    return now + 2_000 + index / 100;
  }

  private byte[] scheduled(int index) {
    return new ScheduleEntry(ScheduleEntry.State.SCHEDULED, dueMs(index), now, task).toBytes();
  }

  private byte[] dueKey(int index) {
    byte[] id = id(index);
    return ByteBuffer.allocate(Long.BYTES + id.length)
        .putLong(dueMs(index) ^ Long.MIN_VALUE)
        .put(id)
        .array();
  }
}

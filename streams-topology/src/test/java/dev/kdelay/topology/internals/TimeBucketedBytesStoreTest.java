package dev.kdelay.topology.internals;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.PerfContext;
import org.rocksdb.PerfLevel;
import org.rocksdb.RocksIterator;

/** The bytes-level task store against real RocksDB. */
class TimeBucketedBytesStoreTest {

  private static final long MINUTE = 60_000;

  @TempDir Path dir;
  private TimeBucketedBytesStore store;

  @BeforeEach
  void open() {
    store = new TimeBucketedBytesStore("tasks", MINUTE);
    store.openDb(dir.toFile(), Map.of());
  }

  @AfterEach
  void close() {
    store.close();
  }

  @Test
  void shouldIterateInDueOrderAcrossBuckets() {
    long[] dues = {5 * MINUTE + 1, 3, MINUTE, MINUTE - 1, 90 * MINUTE, 2 * MINUTE + 7};
    for (long due : dues) {
      store.put(TaskKey.fire(due, "id-" + due).toBytes(), value("v"));
    }

    List<Long> order = new ArrayList<>();
    try (KeyValueIterator<Bytes, byte[]> all = store.all()) {
      all.forEachRemaining(entry -> order.add(TaskKey.fromBytes(entry.key).dueMs()));
    }

    assertThat(order)
        .containsExactly(3L, MINUTE - 1, MINUTE, 2 * MINUTE + 7, 5 * MINUTE + 1, 90 * MINUTE);
  }

  @Test
  void shouldOrderEntriesWithTheSameDueTimeByKindThenId() {
    store.put(new TaskKey(10, TaskKey.KIND_EXPIRE, "a").toBytes(), value(""));
    store.put(TaskKey.fire(10, "b").toBytes(), value("v"));
    store.put(TaskKey.fire(10, "a").toBytes(), value("v"));

    List<TaskKey> keys = new ArrayList<>();
    try (KeyValueIterator<Bytes, byte[]> all = store.all()) {
      all.forEachRemaining(entry -> keys.add(TaskKey.fromBytes(entry.key)));
    }

    assertThat(keys)
        .containsExactly(
            TaskKey.fire(10, "a"),
            TaskKey.fire(10, "b"),
            new TaskKey(10, TaskKey.KIND_EXPIRE, "a"));
  }

  @Test
  void shouldRangeOverDueTimesWithPrefixBounds() {
    for (long due = 0; due < 100; due++) {
      store.put(TaskKey.fire(due, "x").toBytes(), value("v"));
    }
    List<Long> dues = new ArrayList<>();
    try (KeyValueIterator<Bytes, byte[]> range =
        store.range(TaskKey.prefix(10), TaskKey.prefix(20))) {
      range.forEachRemaining(entry -> dues.add(TaskKey.fromBytes(entry.key).dueMs()));
    }
    assertThat(dues).containsExactly(10L, 11L, 12L, 13L, 14L, 15L, 16L, 17L, 18L, 19L);
  }

  @Test
  void shouldNeverScanFiredEntriesAgain() {
    // given: 10,000 entries fired in due order (each deleted after being read), leaving tombstones
    for (int i = 0; i < 10_000; i++) {
      store.put(TaskKey.fire(i, "task").toBytes(), value("payload"));
    }
    store.put(TaskKey.fire(1_000_000, "pending").toBytes(), value("payload"));
    drain(TaskKey.prefix(10_000));

    // when: the next scan runs
    store.db().setPerfLevel(PerfLevel.ENABLE_COUNT);
    PerfContext perf = store.db().getPerfContext();
    perf.reset();
    List<KeyValue<Bytes, byte[]>> next = new ArrayList<>();
    try (KeyValueIterator<Bytes, byte[]> scan = store.range(null, TaskKey.prefix(2_000_000))) {
      scan.forEachRemaining(next::add);
    }
    long tombstonesStepped = perf.getInternalDeleteSkippedCount();
    store.db().setPerfLevel(PerfLevel.DISABLE);

    // then: it starts past the fired entries and steps over none of their tombstones
    assertThat(next).extracting(e -> TaskKey.fromBytes(e.key).id()).containsExactly("pending");
    assertThat(tombstonesStepped).isZero();
  }

  @Test
  void shouldLeaveMemtablesInMemoryOnAnExactlyOnceCommitAndPersistThemOnClose() throws Exception {
    // given: a store of an exactly-once application
    store.close();
    Map<String, Object> eos =
        Map.of(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    store = new TimeBucketedBytesStore("tasks", MINUTE);
    store.openDb(dir.toFile(), eos);
    store.put(TaskKey.fire(1, "a").toBytes(), value("v"));

    // when
    store.commit(Map.of());

    // then: no flush, so no SST file per commit; closing persists what the memtables held
    assertThat(store.db().getProperty("rocksdb.num-files-at-level0")).isEqualTo("0");
    store.close();
    store = new TimeBucketedBytesStore("tasks", MINUTE);
    store.openDb(dir.toFile(), eos);
    assertThat(store.get(TaskKey.fire(1, "a").toBytes())).isEqualTo(value("v"));
  }

  @Test
  void shouldPersistMemtablesOnAnAtLeastOnceCommit() throws Exception {
    // given: at least once, where Kafka Streams may checkpoint after any commit
    store.put(TaskKey.fire(1, "a").toBytes(), value("v"));

    // when
    store.commit(Map.of());

    // then
    assertThat(store.db().getProperty("rocksdb.num-files-at-level0")).isEqualTo("1");
  }

  @Test
  void shouldFollowAScanThatWritesAboveTheKeysItYields() {
    // given: 1,000 tasks fired the way the punctuator fires them: each one read, its expiry
    // written an hour later, then the task deleted, all within one scan
    for (int i = 0; i < 1_000; i++) {
      store.put(TaskKey.fire(i, "task").toBytes(), value("payload"));
    }
    store.db().setPerfLevel(PerfLevel.ENABLE_COUNT);
    PerfContext perf = store.db().getPerfContext();
    perf.reset();
    try (KeyValueIterator<Bytes, byte[]> due = store.range(null, TaskKey.prefix(1_000))) {
      while (due.hasNext()) {
        Bytes key = due.next().key;
        long expiry = TaskKey.fromBytes(key).dueMs() + 60 * MINUTE;
        store.put(new TaskKey(expiry, TaskKey.KIND_EXPIRE, "task").toBytes(), value(""));
        store.delete(key);
      }
    }
    long lookupsWhileFiring = perf.getFromMemtableCount();

    // when: the next punctuation scans for due tasks
    perf.reset();
    try (KeyValueIterator<Bytes, byte[]> next = store.range(null, TaskKey.prefix(1_000))) {
      assertThat(next.hasNext()).isFalse();
    }
    long tombstonesStepped = perf.getInternalDeleteSkippedCount();
    store.db().setPerfLevel(PerfLevel.DISABLE);

    // then: the mark followed the whole scan, and deleting what the scan read needed no lookup
    assertThat(tombstonesStepped).isZero();
    assertThat(lookupsWhileFiring).isZero();
  }

  @Test
  void shouldReturnTheNewValueWhenAScannedEntryIsRewrittenBeforeItsDelete() {
    Bytes key = TaskKey.fire(1, "a").toBytes();
    store.put(key, value("old"));
    try (KeyValueIterator<Bytes, byte[]> scan = store.all()) {
      scan.next();
      store.put(key, value("new"));
      assertThat(store.delete(key)).isEqualTo(value("new"));
    }
  }

  @Test
  void shouldStepOverTombstonesWithoutTheLowWaterMark() {
    // The control for the test above: a fresh store instance knows no low-water mark yet, and
    // RocksDB really does step over every tombstone of a naive scan.
    for (int i = 0; i < 1_000; i++) {
      store.put(TaskKey.fire(i, "task").toBytes(), value("payload"));
    }
    for (int i = 0; i < 1_000; i++) {
      store.delete(TaskKey.fire(i, "task").toBytes());
    }
    store.commit(Map.of());
    store.close();
    store = new TimeBucketedBytesStore("tasks", MINUTE * 1000);
    store.openDb(dir.toFile(), Map.of());

    store.db().setPerfLevel(PerfLevel.ENABLE_COUNT);
    PerfContext perf = store.db().getPerfContext();
    perf.reset();
    try (KeyValueIterator<Bytes, byte[]> scan = store.all()) {
      assertThat(scan.hasNext()).isFalse();
    }
    long tombstonesStepped = perf.getInternalDeleteSkippedCount();
    store.db().setPerfLevel(PerfLevel.DISABLE);

    assertThat(tombstonesStepped).isEqualTo(1_000);
  }

  @Test
  void shouldRemoveDrainedBucketsAsAWhole() {
    // given: three buckets of entries
    for (int bucket = 0; bucket < 3; bucket++) {
      for (int i = 0; i < 100; i++) {
        store.put(TaskKey.fire(bucket * MINUTE + i, "t").toBytes(), value("payload"));
      }
    }

    // when: the first two buckets fire
    drain(TaskKey.prefix(2 * MINUTE));
    // and the scan reaches into the third
    try (KeyValueIterator<Bytes, byte[]> scan = store.range(null, TaskKey.prefix(2 * MINUTE + 1))) {
      scan.next();
    }

    // then: one range deletion per drained bucket removed them, and a raw RocksDB scan of the
    // drained buckets, which
    // knows nothing of the low-water mark, is sent past them by it rather than stepping over 200
    // tombstones
    assertThat(store.removedBuckets()).isEqualTo(2);
    store.db().setPerfLevel(PerfLevel.ENABLE_COUNT);
    PerfContext perf = store.db().getPerfContext();
    perf.reset();
    int live = 0;
    try (RocksIterator raw = store.db().newIterator()) {
      for (raw.seekToFirst(); raw.isValid(); raw.next()) {
        live++;
      }
    }
    long tombstonesStepped = perf.getInternalDeleteSkippedCount();
    store.db().setPerfLevel(PerfLevel.DISABLE);
    assertThat(live).isEqualTo(100);
    assertThat(tombstonesStepped).isLessThan(200);
  }

  @Test
  void shouldKeepAnEntryWrittenBelowTheLowWaterMark() {
    store.put(TaskKey.fire(5 * MINUTE, "later").toBytes(), value("v"));
    store.put(TaskKey.fire(10, "first").toBytes(), value("v"));
    drain(TaskKey.prefix(11));
    try (KeyValueIterator<Bytes, byte[]> scan = store.all()) {
      scan.next(); // the mark follows the scan up to "later"
    }

    // when: a past-due entry lands in an already drained bucket
    store.put(TaskKey.fire(20, "past-due").toBytes(), value("v"));

    // then: the next scan still sees it, before "later"
    List<String> ids = new ArrayList<>();
    try (KeyValueIterator<Bytes, byte[]> scan = store.all()) {
      scan.forEachRemaining(e -> ids.add(TaskKey.fromBytes(e.key).id()));
    }
    assertThat(ids).containsExactly("past-due", "later");
  }

  @Test
  void shouldNotRaiseTheMarkPastAnEntryWrittenDuringAScan() {
    store.put(TaskKey.fire(10, "a").toBytes(), value("v"));
    store.put(TaskKey.fire(30, "c").toBytes(), value("v"));
    try (KeyValueIterator<Bytes, byte[]> scan = store.all()) {
      KeyValue<Bytes, byte[]> first = scan.next();
      store.delete(first.key);
      store.put(TaskKey.fire(20, "b").toBytes(), value("v")); // unseen by the scan's snapshot
      scan.next(); // "c"
    }
    List<String> ids = new ArrayList<>();
    try (KeyValueIterator<Bytes, byte[]> scan = store.all()) {
      scan.forEachRemaining(e -> ids.add(TaskKey.fromBytes(e.key).id()));
    }
    assertThat(ids).containsExactly("b", "c");
  }

  @Test
  void shouldNotMoveTheMarkWhenAnInteractiveQueryScansFromAnotherThread() throws Exception {
    store.put(TaskKey.fire(10, "a").toBytes(), value("v"));
    store.put(TaskKey.fire(20, "b").toBytes(), value("v"));
    byte[] before = store.lowWater();

    Thread query =
        new Thread(
            () -> {
              try (KeyValueIterator<Bytes, byte[]> scan = store.all()) {
                scan.forEachRemaining(entry -> {});
              }
            });
    query.start();
    query.join();

    // A query on another thread races with the writer; only the writer's scans may move the mark.
    assertThat(store.lowWater()).isEqualTo(before);
    try (KeyValueIterator<Bytes, byte[]> scan = store.all()) {
      scan.next();
    }
    assertThat(store.lowWater()).isEqualTo(TaskKey.fire(10, "a").toBytes().get());
  }

  @Test
  void shouldRestoreFromChangelogRecords() {
    // given: a changelog with puts and deletes, as Kafka Streams hands it over in batches
    List<KeyValue<byte[], byte[]>> changelog = new ArrayList<>();
    changelog.add(KeyValue.pair(TaskKey.fire(100, "a").toBytes().get(), value("a1")));
    changelog.add(KeyValue.pair(TaskKey.fire(50, "b").toBytes().get(), value("b1")));
    changelog.add(KeyValue.pair(TaskKey.fire(100, "a").toBytes().get(), null));
    changelog.add(KeyValue.pair(TaskKey.fire(200, "a").toBytes().get(), value("a2")));

    // when
    store.restoreAll(changelog.subList(0, 2));
    store.restoreAll(changelog.subList(2, 4));

    // then
    List<String> entries = new ArrayList<>();
    try (KeyValueIterator<Bytes, byte[]> all = store.all()) {
      all.forEachRemaining(
          e ->
              entries.add(
                  TaskKey.fromBytes(e.key).id()
                      + "="
                      + new String(e.value, StandardCharsets.UTF_8)));
    }
    assertThat(entries).containsExactly("b=b1", "a=a2");
  }

  @Test
  void shouldNotAnswerADeleteFromAScanMadeBeforeARestoreDeletedTheEntry() {
    Bytes key = TaskKey.fire(1, "a").toBytes();
    store.put(key, value("old"));
    try (KeyValueIterator<Bytes, byte[]> scan = store.all()) {
      scan.next();
    }

    List<KeyValue<byte[], byte[]>> changelog = new ArrayList<>();
    changelog.add(KeyValue.pair(key.get(), null));
    store.restoreAll(changelog);

    assertThat(store.delete(key)).isNull();
  }

  @Test
  void shouldReturnTheOldValueOnDelete() {
    Bytes key = TaskKey.fire(1, "x").toBytes();
    store.put(key, value("old"));
    assertThat(store.delete(key)).isEqualTo(value("old"));
    assertThat(store.delete(key)).isNull();
    assertThat(store.get(key)).isNull();
  }

  @Test
  void shouldDeleteAScannedEntryWithoutLookingItUpAgain() {
    store.put(TaskKey.fire(1, "a").toBytes(), value("a-value"));
    store.put(TaskKey.fire(2, "b").toBytes(), value("b-value"));
    store.db().setPerfLevel(PerfLevel.ENABLE_COUNT);
    PerfContext perf = store.db().getPerfContext();

    List<String> returned = new ArrayList<>();
    try (KeyValueIterator<Bytes, byte[]> due = store.all()) {
      perf.reset();
      while (due.hasNext()) {
        returned.add(new String(store.delete(due.next().key), StandardCharsets.UTF_8));
      }
    }
    long lookups = perf.getFromMemtableCount();
    // A delete of something the scan did not just read still looks it up.
    store.put(TaskKey.fire(3, "c").toBytes(), value("c-value"));
    perf.reset();
    assertThat(store.delete(TaskKey.fire(3, "c").toBytes())).isEqualTo(value("c-value"));
    long controlLookups = perf.getFromMemtableCount();
    store.db().setPerfLevel(PerfLevel.DISABLE);

    assertThat(returned).containsExactly("a-value", "b-value");
    assertThat(lookups).isZero();
    assertThat(controlLookups).isEqualTo(1);
  }

  /** Reads and deletes every entry below {@code to}, as the fire punctuator does. */
  private void drain(Bytes to) {
    try (KeyValueIterator<Bytes, byte[]> due = store.range(null, to)) {
      while (due.hasNext()) {
        store.delete(due.next().key);
      }
    }
  }

  private static byte[] value(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}

package dev.kdelay.topology.internals.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.topology.internals.store.ScheduleEntry.State;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.apache.kafka.streams.state.RocksDBConfigSetter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.Cache;
import org.rocksdb.CompactionStyle;
import org.rocksdb.FlushOptions;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.PerfLevel;
import org.rocksdb.RocksIterator;

/** The bytes level of the schedule store: due order, batches, the sweep, restore. */
class RocksDBScheduleStoreTest {

  private static final byte[] TASK = {1, 2, 3};

  @TempDir Path stateDir;
  private RocksDBScheduleStore store;

  @BeforeEach
  void open() {
    store = open(stateDir.toFile());
  }

  @AfterEach
  void close() {
    store.close();
  }

  @Test
  void shouldReturnDueEntriesInDueOrderThenIdOrderAcrossLongSpans() {
    // given: due times far apart and two in the same millisecond, written out of order
    schedule("c", 5_000_000_000L);
    schedule("b", 10);
    schedule("a", 10);
    schedule("z", -5);
    schedule("later", 6_000_000_000L);

    // when
    List<ScheduleBytes.Due> due = store.due(5_000_000_000L, 100, Long.MAX_VALUE);

    // then
    assertThat(due).extracting(d -> text(d.id())).containsExactly("z", "a", "b", "c");
    assertThat(store.nextDue()).isEqualTo(6_000_000_000L);
  }

  @Test
  void shouldBoundABatchInCountAndInBytesAndSayMoreIsDue() {
    // given: ten entries of about 1 KB each, all due
    for (int i = 0; i < 10; i++) {
      write("id-" + i, null, new ScheduleEntry(State.SCHEDULED, 100 + i, 0, new byte[1000]));
    }

    // when / then: five by count
    assertThat(store.due(1_000, 5, Long.MAX_VALUE)).hasSize(5);
    assertThat(store.mayHaveDue(1_000)).isTrue();

    // and: three by bytes (the third crosses 2,500 bytes), at least one whatever its size
    assertThat(store.due(1_000, 100, 2_500)).hasSize(3);
    assertThat(store.due(1_000, 100, 1)).hasSize(1);
  }

  @Test
  void shouldReadNoMoreThanTheByteBudgetAndOneEntryWhenLargeEntriesFollowSmallOnes() {
    // given: small entries due first, then large ones, all due
    for (int i = 0; i < 32; i++) {
      write("small-" + i, null, new ScheduleEntry(State.SCHEDULED, 100 + i, 0, new byte[200]));
    }
    int large = 64 * 1024;
    for (int i = 0; i < 200; i++) {
      write("large-" + i, null, new ScheduleEntry(State.SCHEDULED, 200 + i, 0, new byte[large]));
    }
    long budget = 512 * 1024;

    // when
    List<ScheduleBytes.Due> batch = store.due(1_000, 2_000, budget);

    // then: the scan read the budget and at most one entry more, not a whole step of large ones
    long returned = batch.stream().mapToLong(d -> d.entry().length).sum();
    assertThat(store.dueBytesRead()).isLessThan(budget + 2L * large).isEqualTo(returned);
    assertThat(batch).hasSizeBetween(32 + 7, 32 + 9);
    assertThat(store.mayHaveDue(1_000)).isTrue();
  }

  @Test
  void shouldReadEveryEntryWhetherInTheMemtableOrOnDiskAndNothingForAbsentOrDeletedIds() {
    // given: entries flushed to a file, one of them replaced and one deleted since, one in the
    // memtable only
    for (int i = 0; i < 100; i++) {
      write("flushed-" + i, null, scheduled(1_000 + i));
    }
    write("gone", null, scheduled(7));
    store.commit(Map.of()); // persists the memtables (at least once, as opened here)
    byte[] replaced = new ScheduleEntry(State.SCHEDULED, 9_000, 1, new byte[] {9}).toBytes();
    store.write(bytes("flushed-3"), entry("flushed-3"), replaced);
    store.write(bytes("gone"), entry("gone"), null);
    write("fresh", null, scheduled(2_000));

    // when / then
    assertThat(entry("flushed-42")).isEqualTo(scheduled(1_042).toBytes());
    assertThat(entry("flushed-3")).isEqualTo(replaced);
    assertThat(entry("fresh")).isEqualTo(scheduled(2_000).toBytes());
    assertThat(entry("gone")).isNull();
    assertThat(entry("never-stored")).isNull();
  }

  /**
   * With index and filter blocks kept in the block cache (as kdelay's bounded-memory options keep
   * them), RocksDB's {@code KeyMayExist} answers "found" with an empty value when a file's index
   * block is not in the cache (facebook/rocksdb#12921). A long property run found it: an entry read
   * as empty. A cache too small to keep any block brings that state about on every read.
   */
  @Test
  void shouldReadAnEntryOnDiskWhoseIndexBlockIsNotCached() throws Exception {
    // given: entries flushed to a file, under a block cache that keeps nothing
    RocksDBScheduleStore cold = new RocksDBScheduleStore("test");
    cold.openDb(
        stateDir.resolve("cold").toFile(),
        Map.of(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG, NoBlockKept.class));
    try {
      for (int i = 0; i < 100; i++) {
        cold.write(bytes("on-disk-" + i), null, scheduled(1_000 + i).toBytes());
      }
      try (FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
        cold.db().flush(flush);
      }

      // when / then
      assertThat(cold.get(bytes("on-disk-42"))).isEqualTo(scheduled(1_042).toBytes());
      assertThat(cold.get(bytes("on-disk-7"))).isEqualTo(scheduled(1_007).toBytes());
      assertThat(cold.get(bytes("never-stored"))).isNull();
    } finally {
      cold.close();
    }
  }

  /** Index and filter blocks in a block cache of one byte, which keeps none of them. */
  public static final class NoBlockKept implements RocksDBConfigSetter {
    private Cache cache;

    @Override
    public void setConfig(String storeName, Options options, Map<String, Object> configs) {
      BlockBasedTableConfig table = (BlockBasedTableConfig) options.tableFormatConfig();
      cache = new LRUCache(1);
      table.setBlockCache(cache);
      table.setCacheIndexAndFilterBlocks(true);
      options.setTableFormatConfig(table);
    }

    @Override
    public void close(String storeName, Options options) {
      cache.close();
    }
  }

  @Test
  void shouldNotReportACancelledEntryAsNextDue() {
    // given: two entries, the earlier one known as next due after a scan
    schedule("a", 1_000);
    schedule("b", 5_000);
    assertThat(store.due(0, 100, Long.MAX_VALUE)).isEmpty();
    assertThat(store.nextDue()).isEqualTo(1_000);

    // when / then: the earlier goes (a cancel), then the later
    store.write(bytes("a"), entry("a"), null);
    assertThat(store.nextDue()).isEqualTo(5_000);
    store.write(bytes("b"), entry("b"), null);
    assertThat(store.nextDue()).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void shouldNotReturnAnEntryAgainOnceItIsRewrittenAndKeepIdlePunctuationsOffTheDisk() {
    // given
    schedule("a", 10);
    schedule("b", 20);
    List<ScheduleBytes.Due> first = store.due(15, 100, Long.MAX_VALUE);
    assertThat(first).extracting(d -> text(d.id())).containsExactly("a");

    // when: the caller fires "a" and leaves its marker, after the scan closed
    byte[] marker =
        ScheduleEntry.marker(State.FIRED, 1_000, 0, ScheduleEntry.Origin.UNKNOWN).toBytes();
    store.write(first.get(0).id(), first.get(0).entry(), marker);

    // then
    assertThat(store.due(15, 100, Long.MAX_VALUE)).isEmpty();
    assertThat(store.mayHaveDue(19)).isFalse();
    assertThat(store.nextDue()).isEqualTo(20);
    assertThat(store.due(20, 100, Long.MAX_VALUE))
        .extracting(d -> text(d.id()))
        .containsExactly("b");
  }

  @Test
  void shouldFindAnEntryWrittenBelowWhereTheLastScanStarted() {
    // given: a scan that started at 100
    schedule("a", 100);
    store.write(bytes("a"), entry("a"), null);
    assertThat(store.due(200, 10, Long.MAX_VALUE)).isEmpty();

    // when: a past-due entry is written below it
    schedule("past", 5);

    // then
    assertThat(store.mayHaveDue(200)).isTrue();
    assertThat(store.due(200, 10, Long.MAX_VALUE))
        .extracting(d -> text(d.id()))
        .containsExactly("past");
  }

  @Test
  void shouldMoveAReplacedEntryInTheDueOrderAndDropAStaleIndexKeyItMeets() {
    // given: "a" due at 10, replaced to 50; "b" due at 30, replaced without the old entry known
    schedule("a", 10);
    write("a", entry("a"), new ScheduleEntry(State.SCHEDULED, 50, 0, TASK));
    schedule("b", 30);
    store.write(bytes("b"), null, new ScheduleEntry(State.SCHEDULED, 40, 0, TASK).toBytes());

    // when
    List<ScheduleBytes.Due> due = store.due(100, 100, Long.MAX_VALUE);

    // then: each once, at its new time
    assertThat(due).extracting(d -> text(d.id())).containsExactly("b", "a");
    assertThat(due).extracting(ScheduleBytes.Due::dueMs).containsExactly(40L, 50L);
  }

  @Test
  void shouldListFromTheStartWithoutSteppingOverTheTombstonesOfFiredEntries() {
    // given: 2,000 entries fired (their due keys deleted), and two still pending
    for (int i = 0; i < 2_000; i++) {
      schedule(String.format("fired-%04d", i), 100 + i);
    }
    for (ScheduleBytes.Due due : store.due(10_000, 5_000, Long.MAX_VALUE)) {
      write(
          text(due.id()),
          due.entry(),
          ScheduleEntry.marker(State.FIRED, 50_000, 0, ScheduleEntry.Origin.UNKNOWN));
    }
    assertThat(store.due(10_000, 5_000, Long.MAX_VALUE)).isEmpty();
    schedule("pending-a", 20_000);
    schedule("pending-b", 30_000);

    // when: a listing from the start of the due order
    store.db().setPerfLevel(PerfLevel.ENABLE_COUNT);
    store.db().getPerfContext().reset();
    ScheduleBytes.Listing listing =
        store.listDue(
            StoreKeys.indexPrefix(StoreKeys.DUE, Long.MIN_VALUE), Long.MAX_VALUE, 10, 1 << 20);
    long tombstonesStepped = store.db().getPerfContext().getInternalDeleteSkippedCount();
    store.db().setPerfLevel(PerfLevel.DISABLE);

    // then: both pending entries, and not the fired entries' tombstones on the way
    assertThat(listing.entries())
        .extracting(d -> text(d.id()))
        .containsExactly("pending-a", "pending-b");
    assertThat(tombstonesStepped).isLessThan(100);
  }

  @Test
  void shouldSweepExpiredMarkersWithoutTouchingLiveEntriesOrRenewedIds() {
    // given: two markers expiring at 100 and 200, one id re-scheduled after its marker
    write("gone", null, ScheduleEntry.marker(State.FIRED, 100, 0, ScheduleEntry.Origin.UNKNOWN));
    write(
        "kept", null, ScheduleEntry.marker(State.CANCELLED, 200, 0, ScheduleEntry.Origin.UNKNOWN));
    write(
        "renewed",
        null,
        ScheduleEntry.marker(State.CANCELLED, 100, 0, ScheduleEntry.Origin.UNKNOWN));
    write("renewed", entry("renewed"), new ScheduleEntry(State.SCHEDULED, 500, 1, TASK));

    // when
    int swept = store.sweep(150, 100);

    // then
    assertThat(swept).isEqualTo(1);
    assertThat(store.get(bytes("gone"))).isNull();
    assertThat(store.get(bytes("kept"))).isNotNull();
    assertThat(ScheduleEntry.decode(store.get(bytes("renewed"))).value().state())
        .isEqualTo(State.SCHEDULED);
    assertThat(store.sweep(150, 100)).isZero();
    assertThat(store.sweep(250, 100)).isEqualTo(1);
  }

  @Test
  void shouldSweepAtMostItsBoundAndDropAStaleExpiryKeyWithoutTheEntry() {
    // given: five markers expiring at 100..104, and an expiry key left stale by a write that did
    // not know the marker it replaced
    for (int i = 0; i < 5; i++) {
      write(
          "m" + i,
          null,
          ScheduleEntry.marker(State.FIRED, 100 + i, 0, ScheduleEntry.Origin.UNKNOWN));
    }
    write("stale", null, ScheduleEntry.marker(State.FIRED, 99, 0, ScheduleEntry.Origin.UNKNOWN));
    write("stale", null, new ScheduleEntry(State.SCHEDULED, 500, 1, TASK));

    // when / then: at most two expiry keys a sweep, the stale one first and counting
    assertThat(store.sweep(1_000, 2)).isEqualTo(1);
    assertThat(store.sweep(1_000, 2)).isEqualTo(2);
    assertThat(store.sweep(1_000, 2)).isEqualTo(2);
    assertThat(store.sweep(1_000, 2)).isZero();

    // and: the stale key's id keeps its entry, and only its due key is left in the indexes
    assertThat(ScheduleEntry.decode(store.get(bytes("stale"))).value().state())
        .isEqualTo(State.SCHEDULED);
    assertThat(indexKeys()).containsExactly(StoreKeys.index(StoreKeys.DUE, 500, bytes("stale")));
  }

  @Test
  void shouldRebuildTheIndexesFromTheChangelogOnRestore() {
    // given: a changelog with a schedule, a replacement, a fired marker in a tombstone's header,
    // a plain tombstone, and an id scheduled then paused
    byte[] paused = new ScheduleEntry(State.PAUSED, Long.MAX_VALUE, 0, TASK).toBytes();
    store.restoreBatch(
        List.of(
            record("a", new ScheduleEntry(State.SCHEDULED, 30, 0, TASK).toBytes()),
            record("b", new ScheduleEntry(State.SCHEDULED, 10, 0, TASK).toBytes()),
            record("a", new ScheduleEntry(State.SCHEDULED, 20, 0, TASK).toBytes()),
            record("p", new ScheduleEntry(State.SCHEDULED, 5, 0, TASK).toBytes())));
    store.restoreBatch(
        List.of(
            marker(
                "b",
                ScheduleEntry.marker(State.FIRED, 1_000, 0, ScheduleEntry.Origin.UNKNOWN)
                    .toBytes()),
            record("gone", new ScheduleEntry(State.SCHEDULED, 15, 0, TASK).toBytes()),
            record("gone", null),
            record("p", paused)));

    // when
    List<ScheduleBytes.Due> due = store.due(100, 100, Long.MAX_VALUE);

    // then: only "a", once, at its last due time; "b" is a marker that the sweep forgets
    assertThat(due).extracting(d -> text(d.id())).containsExactly("a");
    assertThat(due.get(0).dueMs()).isEqualTo(20);
    assertThat(ScheduleEntry.decode(store.get(bytes("b"))).value().state()).isEqualTo(State.FIRED);
    assertThat(store.get(bytes("p"))).isEqualTo(paused);
    assertThat(store.get(bytes("gone"))).isNull();
    assertThat(store.sweep(1_000, 100)).isEqualTo(1);
    assertThat(store.get(bytes("b"))).isNull();
  }

  @Test
  void shouldRebuildTheIndexesFromRecordsThatSayWhatTheyReplaced() {
    // given: the changelog of a schedule, its replacement and its fire, each record saying where
    // the entry it replaced sat, and of a schedule that was paused
    byte[] first = new ScheduleEntry(State.SCHEDULED, 30, 0, TASK).toBytes();
    byte[] second = new ScheduleEntry(State.SCHEDULED, 20, 0, TASK).toBytes();
    byte[] fired =
        ScheduleEntry.marker(State.FIRED, 1_000, 0, ScheduleEntry.Origin.UNKNOWN).toBytes();
    byte[] waiting = new ScheduleEntry(State.SCHEDULED, 5, 0, TASK).toBytes();
    byte[] paused = new ScheduleEntry(State.PAUSED, Long.MAX_VALUE, 0, TASK).toBytes();
    store.restoreBatch(
        List.of(
            said(record("a", first), null),
            said(record("a", second), first),
            said(record("p", waiting), null)));
    store.restoreBatch(
        List.of(said(marker("a", fired), second), said(record("p", paused), waiting)));

    // when / then: nothing is due, and only the marker's expiry key is left in the indexes
    assertThat(store.due(100, 100, Long.MAX_VALUE)).isEmpty();
    assertThat(indexKeys()).containsExactly(StoreKeys.index(StoreKeys.EXPIRY, 1_000, bytes("a")));
    assertThat(store.get(bytes("p"))).isEqualTo(paused);
    assertThat(store.sweep(1_000, 100)).isEqualTo(1);
    assertThat(store.get(bytes("a"))).isNull();
  }

  @Test
  void shouldDeleteTheIndexKeyARestoredRecordSaysItReplacedWithoutReadingTheEntry()
      throws Exception {
    // given: an index key whose entry the store does not hold, so a read could not find it
    byte[] was = new ScheduleEntry(State.SCHEDULED, 10, 0, TASK).toBytes();
    store.restoreBatch(List.of(said(record("a", was), null)));
    store.db().delete(StoreKeys.entry(bytes("a")));

    // when: a record says it replaced that entry
    byte[] now = new ScheduleEntry(State.SCHEDULED, 20, 0, TASK).toBytes();
    store.restoreBatch(List.of(said(record("a", now), was)));

    // then: the old index key went with it
    assertThat(indexKeys()).containsExactly(StoreKeys.index(StoreKeys.DUE, 20, bytes("a")));
  }

  @Test
  void shouldReadTheStoreForARestoredRecordWhosePositionItCannotRead() {
    // given: an entry due at 10
    byte[] was = new ScheduleEntry(State.SCHEDULED, 10, 0, TASK).toBytes();
    store.restoreBatch(List.of(said(record("a", was), null)));

    // when: its replacement says where the entry it replaced sat in a form that is no position
    ConsumerRecord<byte[], byte[]> record =
        record("a", new ScheduleEntry(State.SCHEDULED, 20, 0, TASK).toBytes());
    record.headers().add(ScheduleChangelog.REPLACES_HEADER, new byte[] {StoreKeys.ENTRY, 1});
    store.restoreBatch(List.of(record));

    // then: the stored entry told which index key to delete
    assertThat(indexKeys()).containsExactly(StoreKeys.index(StoreKeys.DUE, 20, bytes("a")));
  }

  @Test
  void shouldRefuseToOpenAStoreOfAnotherFormatWithAMessageThatSaysWhatToDo() throws Exception {
    // given: a store stamped with another format
    File dir = stateDir.resolve("other").toFile();
    RocksDBScheduleStore other = open(dir);
    other.db().put(StoreKeys.FORMAT_KEY, new byte[] {9});
    other.close();

    // when / then
    assertThatThrownBy(() -> open(dir))
        .isInstanceOf(ProcessorStateException.class)
        .hasMessageContaining("has format 9")
        .hasMessageContaining("Delete " + dir);
  }

  @Test
  void shouldOpenAndCompactStateWrittenUnderLeveledCompaction() throws Exception {
    // given: a store written with leveled compaction, as kdelay's options were before universal,
    // with files on the last level and on level 0
    File dir = stateDir.resolve("leveled").toFile();
    RocksDBScheduleStore leveled = new RocksDBScheduleStore("test");
    leveled.openDb(dir, Map.of(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG, Leveled.class));
    for (int i = 0; i < 100; i++) {
      leveled.write(bytes("old-" + i), null, scheduled(1_000 + i).toBytes());
    }
    leveled.db().compactRange();
    leveled.write(bytes("new"), null, scheduled(500).toBytes());
    try (FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
      leveled.db().flush(flush);
    }
    leveled.close();

    // when: opened with today's options, written and compacted
    RocksDBScheduleStore reopened = open(dir);
    try {
      reopened.write(bytes("newer"), null, scheduled(400).toBytes());
      reopened.db().compactRange();

      // then: every entry is there, in due order
      List<ScheduleBytes.Due> due = reopened.due(10_000, 1_000, Long.MAX_VALUE);
      assertThat(due).hasSize(102);
      assertThat(due).extracting(d -> text(d.id())).startsWith("newer", "new", "old-0", "old-1");
    } finally {
      reopened.close();
    }
  }

  @Test
  void shouldHoldCompactionsBackWhileARestoreBringsABacklogInAndRunThemOnceTheStoreIsUsed()
      throws Exception {
    // given: six restore batches of a backlog, each flushed to a file of its own: more files than
    // universal compaction lets stand (four)
    for (int batch = 0; batch < 6; batch++) {
      store.restoreBatch(backlog(batch));
      flush();
    }

    // then: none was compacted, and every restored entry is there
    assertThat(level0Files()).isEqualTo(6);
    assertThat(store.db().getOptions().disableAutoCompactions()).isTrue();
    assertThat(store.db().get(StoreKeys.entry(bytes("r-5-999"))))
        .isEqualTo(scheduled(5_999).toBytes());

    // when: the task runs (its first due check), compactions run again and merge the files
    store.mayHaveDue(0);
    assertThat(store.db().getOptions().disableAutoCompactions()).isFalse();
    awaitLevel0FilesBelow(4);
    assertThat(store.due(10_000, 10_000, Long.MAX_VALUE)).hasSize(6 * 1_000);
  }

  @Test
  void shouldLetCompactionsRunWhenTheRestoreReachesRecordsWrittenRecently() throws Exception {
    // given: a backlog restored in batches, its records written long ago
    for (int batch = 0; batch < 5; batch++) {
      store.restoreBatch(backlog(batch));
      flush();
    }
    assertThat(level0Files()).isEqualTo(5);

    // when: the restore reaches records written a moment ago, as a standby that keeps up does
    store.restoreBatch(written(System.currentTimeMillis(), backlog(5)));

    // then
    assertThat(store.db().getOptions().disableAutoCompactions()).isFalse();
    awaitLevel0FilesBelow(4);
  }

  @Test
  void shouldLetCompactionsRunWhenTheFilesOfARestoreReachTheBoundAndHoldThemAgainAfter()
      throws Exception {
    // given: a long restore that flushed as many files as the bound allows
    int max;
    try (BloomFilter filter = RocksDbOptions.filter();
        Options options = RocksDbOptions.defaults(filter)) {
      max =
          new BulkLoading(store.db(), options, "test", System::currentTimeMillis).maxLevel0Files();
    }
    assertThat(max).isEqualTo(32);
    for (int batch = 0; batch < max; batch++) {
      store.restoreBatch(backlog(batch));
      flush();
    }
    assertThat(level0Files()).isEqualTo(max);

    // when: the restore goes on
    store.restoreBatch(backlog(max));

    // then: compactions run, and once they have merged the files the next batch holds them again
    assertThat(store.db().getOptions().disableAutoCompactions()).isFalse();
    awaitLevel0FilesBelow(max / 2);
    store.restoreBatch(backlog(max + 1));
    assertThat(store.db().getOptions().disableAutoCompactions()).isTrue();
  }

  /** The options kdelay's store had before it moved to universal compaction. */
  public static final class Leveled implements RocksDBConfigSetter {
    @Override
    public void setConfig(String storeName, Options options, Map<String, Object> configs) {
      options.setCompactionStyle(CompactionStyle.LEVEL);
    }

    @Override
    public void close(String storeName, Options options) {}
  }

  @Test
  void shouldWalkEntriesInIdOrderAChunkAtATime() {
    for (String id : List.of("c", "a", "b")) {
      schedule(id, 10);
    }
    List<String> seen = new ArrayList<>();
    byte[] last = store.scanEntries(null, 2, (id, entry) -> seen.add(text(id)));
    store.scanEntries(last, 2, (id, entry) -> seen.add(text(id)));

    assertThat(seen).containsExactly("a", "b", "c");
  }

  @Test
  void shouldStartTheNextScanPastABatchOnceEachOfItsEntriesIsWritten() {
    // given: 2,000 due entries in one batch, all fired, and one more due
    for (int i = 0; i < 2_000; i++) {
      schedule(String.format("fired-%04d", i), 100 + i);
    }
    schedule("next", 5_000);
    fireAll(store.due(4_000, 5_000, Long.MAX_VALUE));

    // when: the next scan
    store.db().setPerfLevel(PerfLevel.ENABLE_COUNT);
    store.db().getPerfContext().reset();
    List<ScheduleBytes.Due> due = store.due(10_000, 5_000, Long.MAX_VALUE);
    long tombstonesStepped = store.db().getPerfContext().getInternalDeleteSkippedCount();
    store.db().setPerfLevel(PerfLevel.DISABLE);

    // then: it finds the entry without stepping over the fired batch's tombstones
    assertThat(due).extracting(d -> text(d.id())).containsExactly("next");
    assertThat(tombstonesStepped).isLessThan(100);
  }

  @Test
  void shouldStartTheNextScanAtTheBatchWhileAnEntryOfItIsNotWritten() {
    // given: a batch of three, of which "b" is not written (its fire failed the thread)
    schedule("a", 10);
    schedule("b", 20);
    schedule("c", 30);
    List<ScheduleBytes.Due> batch = store.due(100, 100, Long.MAX_VALUE);
    fireAll(List.of(batch.get(0), batch.get(2)));

    // then: the next scan finds it again
    assertThat(store.due(100, 100, Long.MAX_VALUE))
        .extracting(d -> text(d.id()))
        .containsExactly("b");
  }

  @Test
  void shouldFindAnEntryWrittenInsideTheLastBatchAfterTheBatchIsWritten() {
    // given: a batch from 10 to 30, and while it is fired an entry due at 20 is written
    schedule("a", 10);
    schedule("c", 30);
    List<ScheduleBytes.Due> batch = store.due(100, 100, Long.MAX_VALUE);
    fireAll(batch.subList(0, 1));
    schedule("b", 20);
    schedule("a", 15); // a fired id scheduled again, also inside the batch
    fireAll(batch.subList(1, 2));

    // then
    assertThat(store.due(100, 100, Long.MAX_VALUE))
        .extracting(d -> text(d.id()))
        .containsExactly("a", "b");
  }

  private void fireAll(List<ScheduleBytes.Due> batch) {
    for (ScheduleBytes.Due due : batch) {
      write(
          text(due.id()),
          due.entry(),
          ScheduleEntry.marker(State.FIRED, 50_000, 0, ScheduleEntry.Origin.UNKNOWN));
    }
  }

  @Test
  void shouldCollectWritesWhichALookupSeesAndMakeThemBeforeAnyOtherRead() throws Exception {
    // given: two due entries, written and made
    schedule("a", 10);
    schedule("b", 20);
    store.commit(Map.of());
    assertThat(store.hasCollectedWrites()).isFalse();

    // when: one fires and the other is cancelled
    byte[] marker =
        ScheduleEntry.marker(State.FIRED, 5_000, 0, ScheduleEntry.Origin.UNKNOWN).toBytes();
    store.write(bytes("a"), entry("a"), marker);
    store.write(bytes("b"), entry("b"), null);

    // then: collected, not made; a lookup by id reads them nonetheless
    assertThat(store.hasCollectedWrites()).isTrue();
    assertThat(entry("a")).isEqualTo(marker);
    assertThat(entry("b")).isNull();
    assertThat(store.hasCollectedWrites()).as("a lookup makes nothing").isTrue();

    // when: any other read, here the due scan
    assertThat(store.due(1_000, 100, Long.MAX_VALUE)).isEmpty();

    // then: made first, with their index keys
    assertThat(store.hasCollectedWrites()).isFalse();
    assertThat(indexKeys()).extracting(key -> key[0]).containsExactly(StoreKeys.EXPIRY);
    assertThat(entry("a")).isEqualTo(marker);
    assertThat(entry("b")).isNull();
  }

  @Test
  void shouldMakeCollectedWritesInKeyOrderKeepingTheOrderOfEachIdsChanges() throws Exception {
    // given: in one collection, ids written out of key order, and one id changed four times:
    // scheduled, fired, scheduled again earlier, rescheduled later (its index keys come and go)
    schedule("z", 30);
    schedule("m", 20);
    schedule("b", 50);
    write(
        "b", entry("b"), ScheduleEntry.marker(State.FIRED, 9_000, 0, ScheduleEntry.Origin.UNKNOWN));
    schedule("b", 5);
    schedule("b", 40);
    schedule("a", 10);
    assertThat(store.hasCollectedWrites()).isTrue();

    // when: made (sorted by key, so the entry keys first, then the due keys by time)
    store.commit(Map.of());

    // then: each id's last change, and exactly the index keys those entries own
    assertThat(store.hasCollectedWrites()).isFalse();
    assertThat(entry("b")).isEqualTo(new ScheduleEntry(State.SCHEDULED, 40, 0, TASK).toBytes());
    assertThat(indexKeys())
        .extracting(
            key -> key[0] + ":" + StoreKeys.timeOfIndex(key) + ":" + text(StoreKeys.idOfIndex(key)))
        .containsExactly("1:10:a", "1:20:m", "1:30:z", "1:40:b");
    assertThat(store.due(100, 100, Long.MAX_VALUE))
        .extracting(d -> text(d.id()))
        .containsExactly("a", "m", "z", "b");
  }

  @Test
  void shouldAnswerLookupsReadAheadFromMemoryAndForgetEachOnceAWriteCouldChangeIt()
      throws Exception {
    // given: a stored entry and a marker, made
    schedule("stored", 10);
    write("fired", null, ScheduleEntry.marker(State.FIRED, 100, 0, ScheduleEntry.Origin.UNKNOWN));
    store.commit(Map.of());

    // when: three ids are read ahead, one of them not stored
    store.readAhead(List.of(bytes("stored"), bytes("fired"), bytes("new")));

    // then: each lookup is answered, once, from what was read
    assertThat(store.readAheadSize()).isEqualTo(3);
    assertThat(entry("new")).isNull();
    assertThat(entry("stored")).isEqualTo(scheduled(10).toBytes());
    assertThat(store.readAheadSize()).as("a lookup takes its answer").isEqualTo(1);

    // when: read ahead again, then written (and made) before any lookup
    store.readAhead(List.of(bytes("new"), bytes("stored")));
    assertThat(store.readAheadSize()).as("with the marker still unread").isEqualTo(3);
    write("new", null, scheduled(20));
    write("stored", scheduled(10).toBytes(), scheduled(30));
    store.commit(Map.of());

    // then: the lookups see the writes, not what was read ahead
    assertThat(entry("new")).isEqualTo(scheduled(20).toBytes());
    assertThat(entry("stored")).isEqualTo(scheduled(30).toBytes());

    // when: the marker read ahead, then forgotten by the sweep
    store.readAhead(List.of(bytes("fired")));
    assertThat(store.sweep(1_000, 100)).isEqualTo(1);

    // then: the lookup finds nothing
    assertThat(entry("fired")).isNull();
  }

  @Test
  void shouldScanEntriesDueSoonFromMemoryAlwaysAsLastWritten() throws Exception {
    // given: a first scan at 1,000, then entries due soon, one far ahead, and changes to some
    assertThat(store.due(1_000, 10, Long.MAX_VALUE)).isEmpty();
    schedule("soon", 2_000);
    schedule("replaced", 3_000);
    schedule("cancelled", 3_000);
    schedule("far", 1_000 + NearDueEntries.NEAR_DUE_MS + 1);
    store.commit(Map.of());
    write("replaced", entry("replaced"), new ScheduleEntry(State.SCHEDULED, 2_500, 7, TASK));
    store.write(bytes("cancelled"), entry("cancelled"), null);
    store.commit(Map.of());
    assertThat(store.nearDueSize()).isEqualTo(2);

    // when: scanned when all are due
    List<ScheduleBytes.Due> due = store.due(Long.MAX_VALUE - 1, 10, Long.MAX_VALUE);

    // then: each as last written, and only the far one read from RocksDB
    assertThat(due).extracting(d -> text(d.id())).containsExactly("soon", "replaced", "far");
    assertThat(due.get(1).entry())
        .isEqualTo(new ScheduleEntry(State.SCHEDULED, 2_500, 7, TASK).toBytes());
    assertThat(store.dueEntriesReadFromDb()).isEqualTo(1);

    // when: the fired ones become markers, which are not kept
    fireAll(due);
    store.commit(Map.of());

    // then
    assertThat(store.nearDueSize()).isZero();
  }

  @Test
  void shouldKeepNoMoreEntriesDueSoonThanTheBudgetAllowsAndForgetThemOnRestore() throws Exception {
    // given: a first scan, then more bytes of entries due soon than all stores may keep
    long budget = RocksDBScheduleStore.nearDueBudgetLeft();
    store.due(0, 10, Long.MAX_VALUE);
    byte[] task = new byte[64 * 1024];
    int count = (int) (NearDueEntries.MAX_NEAR_DUE_BYTES / task.length) + 8;
    for (int i = 0; i < count; i++) {
      write("big-" + i, null, new ScheduleEntry(State.SCHEDULED, 100 + i, 0, task));
    }

    // then: kept up to the budget, the rest read when due, all due
    assertThat(store.nearDueSize()).isLessThan(count);
    assertThat(RocksDBScheduleStore.nearDueBudgetLeft()).isNotNegative().isLessThan(budget);
    assertThat(store.due(Long.MAX_VALUE - 1, 1_000, Long.MAX_VALUE)).hasSize(count);

    // when: a restore applies records (which may change any entry)
    store.restoreBatch(List.of(said(record("r", scheduled(50).toBytes()), null)));

    // then: nothing is kept from before, and the budget is whole again
    assertThat(store.nearDueSize()).isZero();
    assertThat(RocksDBScheduleStore.nearDueBudgetLeft()).isEqualTo(budget);
  }

  @Test
  void shouldReadAheadInStepsKeepingWhatItRemembersBounded() {
    // given: more new ids than a read-ahead remembers, and one with collected writes
    schedule("collected", 10);
    List<byte[]> ids = new ArrayList<>();
    for (int i = 0; i < ReadAhead.MAX_IDS + 10; i++) {
      ids.add(bytes("id-" + i));
    }
    ids.add(bytes("collected"));

    // when
    store.readAhead(ids.subList(0, 100));
    store.readAhead(ids);

    // then: started afresh rather than grown past the bound; the collected id was not read
    assertThat(store.readAheadSize()).isEqualTo(ReadAhead.MAX_IDS + 10);
    assertThat(entry("collected")).isEqualTo(scheduled(10).toBytes());
    assertThat(entry("id-7")).isNull();
  }

  @Test
  void shouldMakeCollectedWritesOnceABatchsWorthIsCollected() {
    // when: as many writes as a batch holds
    for (int i = 0; i < CollectedWrites.MAX_WRITES / 2; i++) {
      schedule("id-" + i, 1_000 + i); // two writes each: the entry and its due key
    }

    // then: made, and none left collected
    assertThat(store.hasCollectedWrites()).isFalse();

    // when: one more, then a commit
    schedule("last", 10);
    assertThat(store.hasCollectedWrites()).isTrue();
    store.commit(Map.of());

    // then: made too
    assertThat(store.hasCollectedWrites()).isFalse();
    assertThat(store.due(5_000, 10_000, Long.MAX_VALUE))
        .hasSize(CollectedWrites.MAX_WRITES / 2 + 1);
  }

  @Test
  void shouldMakeCollectedWritesWhenClosedSoThatAReopenedStoreHasThem(@TempDir File other) {
    // given: writes collected, not made
    RocksDBScheduleStore first = open(other);
    first.write(bytes("a"), null, scheduled(10).toBytes());
    assertThat(first.hasCollectedWrites()).isTrue();

    // when: closed and reopened
    first.close();
    RocksDBScheduleStore reopened = open(other);
    try {
      // then: the write is there
      assertThat(reopened.get(bytes("a"))).isEqualTo(scheduled(10).toBytes());
      assertThat(reopened.due(100, 10, Long.MAX_VALUE)).hasSize(1);
    } finally {
      reopened.close();
    }
  }

  @Test
  void shouldWriteOnlyTheMarkerOfATaskScheduledAndFiredSoonUnderExactlyOnce(
      @TempDir File atLeastOnceDir, @TempDir File exactlyOnceDir) {
    // given: a store of each guarantee, each after a first scan
    RocksDBScheduleStore atLeastOnce = open(atLeastOnceDir, StreamsConfig.AT_LEAST_ONCE);
    RocksDBScheduleStore exactlyOnce = open(exactlyOnceDir, StreamsConfig.EXACTLY_ONCE_V2);
    try {
      for (RocksDBScheduleStore each : List.of(atLeastOnce, exactlyOnce)) {
        each.due(1_000, 10, Long.MAX_VALUE);

        // when: two tasks due soon are scheduled, then fired
        each.write(bytes("a"), null, scheduled(2_000).toBytes());
        each.write(bytes("b"), null, scheduled(3_000).toBytes());
        List<ScheduleBytes.Due> due = each.due(3_000, 10, Long.MAX_VALUE);
        assertThat(due).extracting(d -> text(d.id())).containsExactly("a", "b");
        for (ScheduleBytes.Due fired : due) {
          each.write(
              fired.id(),
              fired.entry(),
              ScheduleEntry.marker(State.FIRED, 50_000, 0, ScheduleEntry.Origin.UNKNOWN).toBytes());
        }
        each.due(3_000, 10, Long.MAX_VALUE); // makes the collected writes
      }

      // then: at least once, each wrote its entry and due key, then deleted the due key and wrote
      // the marker and its expiry key; exactly once, the marker and its expiry key only
      assertThat(atLeastOnce.writesMade()).isEqualTo(2 * 5);
      assertThat(exactlyOnce.writesMade()).isEqualTo(2 * 2);
      assertThat(exactlyOnce.get(bytes("a"))).isEqualTo(atLeastOnce.get(bytes("a")));
      assertThat(exactlyOnce.due(Long.MAX_VALUE - 1, 10, Long.MAX_VALUE)).isEmpty();
    } finally {
      atLeastOnce.close();
      exactlyOnce.close();
    }
  }

  @Test
  void shouldScanEntriesKeptInMemoryOnlyInDueOrderWithThoseInRocksDbWithinTheBounds(
      @TempDir File dir) {
    // given: under exactly once, entries written before the first scan (in RocksDB) and after it
    // (kept in memory only), interleaved in due order, one of them replaced and one cancelled
    RocksDBScheduleStore eos = open(dir, StreamsConfig.EXACTLY_ONCE_V2);
    try {
      eos.write(bytes("db-1"), null, scheduled(1_100).toBytes());
      eos.write(bytes("db-3"), null, scheduled(1_300).toBytes());
      eos.write(bytes("db-5"), null, scheduled(1_500).toBytes());
      eos.due(1_000, 10, Long.MAX_VALUE);
      eos.write(bytes("mem-2"), null, scheduled(1_200).toBytes());
      eos.write(bytes("mem-4"), null, scheduled(9_000).toBytes());
      eos.write(bytes("mem-4"), scheduled(9_000).toBytes(), scheduled(1_400).toBytes());
      eos.write(bytes("mem-6"), null, scheduled(1_600).toBytes());
      eos.write(bytes("gone"), null, scheduled(1_250).toBytes());
      eos.write(bytes("gone"), scheduled(1_250).toBytes(), null);
      assertThat(eos.unwrittenSize()).isEqualTo(3);
      assertThat(eos.get(bytes("mem-4"))).isEqualTo(scheduled(1_400).toBytes());
      assertThat(eos.get(bytes("gone"))).isNull();
      assertThat(eos.nextDue()).isEqualTo(1_100);

      // when / then: scanned two at a time, in due order across both, each batch fired
      List<ScheduleBytes.Due> first = eos.due(1_450, 2, Long.MAX_VALUE);
      assertThat(first).extracting(d -> text(d.id())).containsExactly("db-1", "mem-2");
      assertThat(eos.mayHaveDue(1_450)).isTrue();
      fire(eos, first);
      List<ScheduleBytes.Due> second = eos.due(1_450, 10, Long.MAX_VALUE);
      assertThat(second).extracting(d -> text(d.id())).containsExactly("db-3", "mem-4");
      fire(eos, second);
      assertThat(eos.mayHaveDue(1_450)).isFalse();
      assertThat(eos.nextDue()).isEqualTo(1_500);

      // and: a listing sees the rest, and afterwards (RocksDB holding all) the scan is the same
      assertThat(eos.listDue(new byte[] {StoreKeys.DUE}, 2_000, 10, Long.MAX_VALUE).entries())
          .extracting(d -> text(d.id()))
          .containsExactly("db-5", "mem-6");
      assertThat(eos.unwrittenSize()).isZero();
      assertThat(eos.due(2_000, 10, Long.MAX_VALUE))
          .extracting(d -> text(d.id()))
          .containsExactly("db-5", "mem-6");
    } finally {
      eos.close();
    }
  }

  @Test
  void shouldReturnOnceAnEntryKeptInMemoryOverOneInRocksDbWithTheSameDueKey(@TempDir File dir) {
    // given: under exactly once, an entry in RocksDB, then one for the same id and due time by a
    // write that did not know of it (kept in memory only)
    RocksDBScheduleStore eos = open(dir, StreamsConfig.EXACTLY_ONCE_V2);
    try {
      eos.write(bytes("x"), null, scheduled(1_500).toBytes());
      eos.due(1_000, 10, Long.MAX_VALUE);
      byte[] rewritten = new ScheduleEntry(State.SCHEDULED, 1_500, 9, TASK).toBytes();
      eos.write(bytes("x"), null, rewritten);
      assertThat(eos.unwrittenSize()).isEqualTo(1);

      // when
      List<ScheduleBytes.Due> due = eos.due(2_000, 10, Long.MAX_VALUE);

      // then: once, as last written
      assertThat(due).hasSize(1);
      assertThat(due.get(0).entry()).isEqualTo(rewritten);
    } finally {
      eos.close();
    }
  }

  @Test
  void shouldScanPastTheLastEntryHandledEvenWhenItLiesPastTheScansTime(@TempDir File dir) {
    // given: under exactly once, an entry kept in memory only, due at 1,200
    RocksDBScheduleStore eos = open(dir, StreamsConfig.EXACTLY_ONCE_V2);
    try {
      eos.due(1_000, 10, Long.MAX_VALUE);
      eos.write(bytes("kept"), null, scheduled(1_200).toBytes());

      // when / then: a scan after an entry handled at 5,000 (the clock stepped back since) finds
      // nothing after it, and does not fail; one after an entry at 1,100 finds it
      assertThat(
              eos.due(1_500, 10, Long.MAX_VALUE, StoreKeys.index(StoreKeys.DUE, 5_000, bytes("z"))))
          .isEmpty();
      assertThat(
              eos.due(1_500, 10, Long.MAX_VALUE, StoreKeys.index(StoreKeys.DUE, 1_100, bytes("z"))))
          .extracting(d -> text(d.id()))
          .containsExactly("kept");
    } finally {
      eos.close();
    }
  }

  @Test
  void shouldWriteEntriesKeptInMemoryOnlyWhenClosedAndForgetCancelledOnes(@TempDir File dir) {
    // given: under exactly once, entries kept in memory only; one cancelled, one replaced by an
    // entry too far ahead to be kept (so written), one fired
    RocksDBScheduleStore eos = open(dir, StreamsConfig.EXACTLY_ONCE_V2);
    eos.due(1_000, 10, Long.MAX_VALUE);
    eos.write(bytes("kept"), null, scheduled(2_000).toBytes());
    eos.write(bytes("cancelled"), null, scheduled(2_000).toBytes());
    eos.write(bytes("cancelled"), scheduled(2_000).toBytes(), null);
    eos.write(bytes("far"), null, scheduled(2_000).toBytes());
    long farAhead = 1_000 + NearDueEntries.NEAR_DUE_MS + 1;
    eos.write(bytes("far"), scheduled(2_000).toBytes(), scheduled(farAhead).toBytes());
    assertThat(eos.unwrittenSize()).isEqualTo(1);

    // when: closed and reopened
    eos.close();
    RocksDBScheduleStore reopened = open(dir, StreamsConfig.EXACTLY_ONCE_V2);
    try {
      // then: what the store held, and nothing else
      assertThat(reopened.get(bytes("kept"))).isEqualTo(scheduled(2_000).toBytes());
      assertThat(reopened.get(bytes("cancelled"))).isNull();
      assertThat(reopened.get(bytes("far"))).isEqualTo(scheduled(farAhead).toBytes());
      assertThat(reopened.due(Long.MAX_VALUE - 1, 10, Long.MAX_VALUE))
          .extracting(d -> text(d.id()))
          .containsExactly("kept", "far");
    } finally {
      reopened.close();
    }
  }

  @Test
  void shouldWriteEntriesKeptInMemoryOnlyBeforeARestoreAppliesRecords(@TempDir File dir) {
    // given: under exactly once, an entry kept in memory only
    RocksDBScheduleStore eos = open(dir, StreamsConfig.EXACTLY_ONCE_V2);
    try {
      eos.due(1_000, 10, Long.MAX_VALUE);
      eos.write(bytes("kept"), null, scheduled(2_000).toBytes());

      // when: a restore applies a record for another id
      eos.restoreBatch(List.of(said(record("restored", scheduled(1_500).toBytes()), null)));

      // then: both are in the store, in due order
      assertThat(eos.unwrittenSize()).isZero();
      assertThat(eos.due(Long.MAX_VALUE - 1, 10, Long.MAX_VALUE))
          .extracting(d -> text(d.id()))
          .containsExactly("restored", "kept");
    } finally {
      eos.close();
    }
  }

  private static void fire(RocksDBScheduleStore store, List<ScheduleBytes.Due> batch) {
    for (ScheduleBytes.Due due : batch) {
      store.write(
          due.id(),
          due.entry(),
          ScheduleEntry.marker(State.FIRED, 50_000, 0, ScheduleEntry.Origin.UNKNOWN).toBytes());
    }
  }

  private void schedule(String id, long dueMs) {
    write(id, entry(id), new ScheduleEntry(State.SCHEDULED, dueMs, 0, TASK));
  }

  private static ScheduleEntry scheduled(long dueMs) {
    return new ScheduleEntry(State.SCHEDULED, dueMs, 0, TASK);
  }

  private void write(String id, byte[] previous, ScheduleEntry next) {
    store.write(bytes(id), previous, next.toBytes());
  }

  private byte[] entry(String id) {
    return Optional.ofNullable(store.get(bytes(id))).orElse(null);
  }

  /**
   * A thousand records of ids {@code r-<batch>-<i>}, each due at {@code batch * 1,000 + i}, with no
   * timestamp: written long ago.
   */
  private static List<ConsumerRecord<byte[], byte[]>> backlog(int batch) {
    List<ConsumerRecord<byte[], byte[]>> changes = new ArrayList<>();
    for (int i = 0; i < 1_000; i++) {
      byte[] entry = scheduled(batch * 1_000L + i).toBytes();
      changes.add(said(record("r-" + batch + "-" + i, entry), null));
    }
    return changes;
  }

  /** The same records, written at {@code timestampMs}. */
  private static List<ConsumerRecord<byte[], byte[]>> written(
      long timestampMs, List<ConsumerRecord<byte[], byte[]>> records) {
    List<ConsumerRecord<byte[], byte[]>> stamped = new ArrayList<>();
    for (ConsumerRecord<byte[], byte[]> record : records) {
      stamped.add(
          new ConsumerRecord<>(
              record.topic(),
              record.partition(),
              record.offset(),
              timestampMs,
              TimestampType.CREATE_TIME,
              0,
              0,
              record.key(),
              record.value(),
              record.headers(),
              Optional.empty()));
    }
    return stamped;
  }

  private void flush() throws Exception {
    try (FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
      store.db().flush(flush);
    }
  }

  private long level0Files() throws Exception {
    return Long.parseLong(store.db().getProperty("rocksdb.num-files-at-level0").trim());
  }

  /** RocksDB compacts on threads of its own: waits for it, for 30 s at most. */
  private void awaitLevel0FilesBelow(int files) throws Exception {
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (level0Files() >= files) {
      assertThat(System.nanoTime())
          .as("level-0 files still %d", level0Files())
          .isLessThan(deadline);
      Thread.sleep(10);
    }
  }

  private static RocksDBScheduleStore open(File dir) {
    RocksDBScheduleStore store = new RocksDBScheduleStore("test");
    store.openDb(dir, Map.of());
    return store;
  }

  private static RocksDBScheduleStore open(File dir, String guarantee) {
    RocksDBScheduleStore store = new RocksDBScheduleStore("test");
    store.openDb(dir, Map.of(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, guarantee));
    return store;
  }

  private static ConsumerRecord<byte[], byte[]> record(String id, byte[] value) {
    return new ConsumerRecord<>("changelog", 0, 0, bytes(id), value);
  }

  private static ConsumerRecord<byte[], byte[]> marker(String id, byte[] marker) {
    return new ConsumerRecord<>(
        "changelog",
        0,
        0,
        0L,
        TimestampType.CREATE_TIME,
        0,
        0,
        bytes(id),
        null,
        new RecordHeaders().add(new RecordHeader(ScheduleChangelog.MARKER_HEADER, marker)),
        Optional.empty());
  }

  /** A record that says it replaced {@code previous} (null: nothing), as the store logs it. */
  private static ConsumerRecord<byte[], byte[]> said(
      ConsumerRecord<byte[], byte[]> record, byte[] previous) {
    record.headers().add(ScheduleChangelog.REPLACES_HEADER, StoreKeys.positionOf(previous));
    return record;
  }

  /** Every index key the store holds, in key order. */
  private List<byte[]> indexKeys() {
    List<byte[]> keys = new ArrayList<>();
    try (RocksIterator scan = store.db().newIterator()) {
      for (scan.seek(new byte[] {StoreKeys.DUE});
          scan.isValid() && scan.key()[0] <= StoreKeys.EXPIRY;
          scan.next()) {
        keys.add(scan.key());
      }
    }
    return keys;
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static String text(byte[] bytes) {
    return new String(bytes, StandardCharsets.UTF_8);
  }
}

package dev.kdelay.topology.internals;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.PerfContext;
import org.rocksdb.PerfLevel;

class TaskStoreTest {

  @TempDir Path dir;
  private TimeBucketedBytesStore rocks;
  private CountingStore counting;
  private TaskStore tasks;

  @BeforeEach
  void open() {
    rocks = new TimeBucketedBytesStore("tasks", 60_000);
    rocks.openDb(dir.toFile(), Map.of());
    counting = new CountingStore(rocks);
    tasks = new TaskStore(counting);
  }

  @AfterEach
  void close() {
    rocks.close();
  }

  @Test
  void shouldNotStepOverTheTombstonesOfFiredTasksAgain() {
    // given: 1,000 tasks fired by drainDue, the way the punctuator fires them (each visit writes
    // the task's expiry an hour later), with one more task pending
    for (int i = 0; i < 1_000; i++) {
      tasks.put(TaskKey.fire(i, "task-" + i), new byte[] {1});
    }
    tasks.put(TaskKey.fire(5_000, "pending"), new byte[] {1});
    for (long now = 0; now < 1_000; now++) {
      tasks.drainDue(
          now,
          100,
          (key, value) ->
              tasks.put(
                  new TaskKey(key.dueMs() + 3_600_000, TaskKey.KIND_EXPIRE, key.id()), value));
    }

    // when: the next punctuations with something due scan the store
    rocks.db().setPerfLevel(PerfLevel.ENABLE_COUNT);
    PerfContext perf = rocks.db().getPerfContext();
    perf.reset();
    List<String> fired = new ArrayList<>();
    tasks.drainDue(1_000, 100, (key, value) -> fired.add(key.id()));
    tasks.drainDue(5_000, 100, (key, value) -> fired.add(key.id()));
    long tombstonesStepped = perf.getInternalDeleteSkippedCount();
    rocks.db().setPerfLevel(PerfLevel.DISABLE);

    // then: they start past every fired task
    assertThat(fired).containsExactly("pending");
    assertThat(tombstonesStepped).isZero();
  }

  @Test
  void shouldNotTouchTheStoreWhenNothingIsDue() {
    // given: one task far ahead, and a first look after start-up
    tasks.put(TaskKey.fire(1_000_000, "later"), new byte[] {1});
    tasks.drainDue(0, 100, (key, value) -> {});
    counting.reads.set(0);

    // when: a thousand punctuations find nothing due
    for (long now = 1; now <= 1_000; now++) {
      if (tasks.mayHaveDue(now)) {
        tasks.drainDue(now, 100, (key, value) -> {});
      }
    }

    // then
    assertThat(counting.reads.get()).isZero();
    assertThat(tasks.nextDue()).isEqualTo(1_000_000);
  }

  @Test
  void shouldLookOnceAfterStartUpWhenTheNextDueTimeIsUnknown() {
    assertThat(tasks.mayHaveDue(0)).isTrue();
    tasks.drainDue(0, 100, (key, value) -> {});
    assertThat(tasks.mayHaveDue(1)).isFalse();
  }

  @Test
  void shouldStopAtTheLimitAndContinueNextTime() {
    for (int i = 0; i < 25; i++) {
      tasks.put(TaskKey.fire(i, "t" + i), new byte[] {1});
    }
    List<Long> visited = new ArrayList<>();

    assertThat(tasks.drainDue(100, 10, (key, value) -> visited.add(key.dueMs()))).isEqualTo(10);
    assertThat(tasks.mayHaveDue(100)).isTrue();
    assertThat(tasks.drainDue(100, 10, (key, value) -> visited.add(key.dueMs()))).isEqualTo(10);
    assertThat(tasks.drainDue(100, 10, (key, value) -> visited.add(key.dueMs()))).isEqualTo(5);

    assertThat(visited).hasSize(25).isSorted();
    assertThat(tasks.mayHaveDue(100)).isFalse();
  }

  @Test
  void shouldSeeAnEntryAddedDuringTheDrainAtTheNextLook() {
    tasks.put(TaskKey.fire(10, "cron"), new byte[] {1});
    List<String> visited = new ArrayList<>();

    tasks.drainDue(
        50,
        100,
        (key, value) -> {
          visited.add(key.id() + "@" + key.dueMs());
          if (key.dueMs() == 10) {
            tasks.put(TaskKey.fire(20, "cron"), new byte[] {1}); // a missed occurrence, due already
          }
        });
    assertThat(tasks.mayHaveDue(50)).isTrue();
    tasks.drainDue(50, 100, (key, value) -> visited.add(key.id() + "@" + key.dueMs()));

    assertThat(visited).containsExactly("cron@10", "cron@20");
  }

  /** Counts the reads that reach the underlying store. */
  private static final class CountingStore implements KeyValueStore<Bytes, byte[]> {
    final AtomicInteger reads = new AtomicInteger();
    private final KeyValueStore<Bytes, byte[]> inner;

    CountingStore(KeyValueStore<Bytes, byte[]> inner) {
      this.inner = inner;
    }

    @Override
    public void put(Bytes key, byte[] value) {
      inner.put(key, value);
    }

    @Override
    public byte[] putIfAbsent(Bytes key, byte[] value) {
      return inner.putIfAbsent(key, value);
    }

    @Override
    public void putAll(List<KeyValue<Bytes, byte[]>> entries) {
      inner.putAll(entries);
    }

    @Override
    public byte[] delete(Bytes key) {
      return inner.delete(key);
    }

    @Override
    public byte[] get(Bytes key) {
      reads.incrementAndGet();
      return inner.get(key);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> range(Bytes from, Bytes to) {
      reads.incrementAndGet();
      return inner.range(from, to);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> all() {
      reads.incrementAndGet();
      return inner.all();
    }

    @Override
    public long approximateNumEntries() {
      return inner.approximateNumEntries();
    }

    @Override
    public String name() {
      return inner.name();
    }

    @Override
    public void init(StateStoreContext context, StateStore root) {
      inner.init(context, root);
    }

    @Override
    public void commit(Map<org.apache.kafka.common.TopicPartition, Long> changelogOffsets) {
      inner.commit(changelogOffsets);
    }

    @Override
    public void close() {
      inner.close();
    }

    @Override
    public boolean persistent() {
      return true;
    }

    @Override
    public boolean isOpen() {
      return inner.isOpen();
    }
  }
}

package dev.kdelay.topology.internals;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The task store read by an interactive query while its stream thread writes and drains it: every
 * step of either holds the store's lock, so the two interleave call by call.
 */
class SynchronizedBytesStoreTest {

  @TempDir Path dir;
  private TimeBucketedBytesStore bytes;
  private SynchronizedBytesStore store;

  @BeforeEach
  void open() {
    bytes = new TimeBucketedBytesStore("tasks", 50);
    bytes.openDb(dir.toFile(), Map.of());
    store = new SynchronizedBytesStore(bytes);
  }

  @AfterEach
  void close() {
    store.close();
  }

  @Test
  void shouldKeepEveryLiveEntryVisibleWhenAQueryScansWhileTheOwnerWritesAndDrains()
      throws Exception {
    // given: a reader that scans from the start over and over, as a listing query does
    AtomicBoolean writing = new AtomicBoolean(true);
    CompletableFuture<Integer> reader =
        CompletableFuture.supplyAsync(
            () -> {
              int scans = 0;
              while (writing.get()) {
                List<Long> seen = new ArrayList<>();
                try (KeyValueIterator<Bytes, byte[]> scan =
                    store.range(TaskKey.prefix(Long.MIN_VALUE), TaskKey.prefix(Long.MAX_VALUE))) {
                  scan.forEachRemaining(entry -> seen.add(TaskKey.fromBytes(entry.key).dueMs()));
                }
                assertThat(seen).isSorted();
                scans++;
              }
              return scans;
            });

    // when: the owner schedules tasks ahead, some past due (below the low-water mark), and
    // drains what is due, many buckets over
    long drainedBelow = 0;
    int written = 0;
    int drained = 0;
    for (long due = 0; due < 20_000; due++) {
      store.put(TaskKey.fire(due + 100, "t" + due).toBytes(), new byte[] {1});
      if (due % 50 == 0) {
        store.put(TaskKey.fire(due - 30, "late" + due).toBytes(), new byte[] {1});
        written++;
        drainedBelow = due;
        try (KeyValueIterator<Bytes, byte[]> drain =
            store.range(TaskKey.prefix(Long.MIN_VALUE), TaskKey.prefix(due))) {
          while (drain.hasNext()) {
            store.delete(drain.next().key);
            drained++;
          }
        }
      }
    }
    writing.set(false);

    // then: the reader never failed; every entry due before the last drain was drained, none was
    // hidden from it; everything else is still there, in order
    assertThat(reader.get(60, TimeUnit.SECONDS)).isPositive();
    assertThat(drained).isEqualTo(written + (int) drainedBelow - 100);
    List<Long> left = new ArrayList<>();
    try (KeyValueIterator<Bytes, byte[]> all = store.all()) {
      while (all.hasNext()) {
        KeyValue<Bytes, byte[]> entry = all.next();
        left.add(TaskKey.fromBytes(entry.key).dueMs());
      }
    }
    assertThat(left).hasSize((int) (20_100 - drainedBelow)).isSorted();
    assertThat(left.get(0)).isEqualTo(drainedBelow);
  }

  @Test
  void shouldMakeTheOwnerWaitWhileAQueryHoldsTheStore() throws Exception {
    // given
    Bytes key = TaskKey.fire(5, "blocked").toBytes();
    Thread owner = new Thread(() -> store.put(key, new byte[] {1}), "owner");

    // when: a query step is in progress (it holds the store's lock)
    synchronized (store) {
      owner.start();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (owner.getState() != Thread.State.BLOCKED) {
        assertThat(System.nanoTime()).as("owner blocked in time").isLessThan(deadline);
        Thread.onSpinWait();
      }

      // then: the write waits
      assertThat(bytes.get(key)).isNull();
    }
    owner.join(TimeUnit.SECONDS.toMillis(10));
    assertThat(bytes.get(key)).isNotNull();
  }

  @Test
  void shouldFailAQueryStepInsteadOfReadingAClosedStore() {
    // given
    store.put(TaskKey.fire(1, "a").toBytes(), new byte[] {1});
    store.put(TaskKey.fire(2, "b").toBytes(), new byte[] {1});
    KeyValueIterator<Bytes, byte[]> scan = store.all();
    scan.next();

    // when
    store.close();

    // then
    assertThatThrownBy(scan::hasNext).isInstanceOf(IllegalStateException.class);
    assertThat(store.isOpen()).isFalse();
  }
}

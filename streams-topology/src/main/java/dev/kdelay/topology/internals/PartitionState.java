package dev.kdelay.topology.internals;

import dev.kdelay.topology.PartitionGauges;
import dev.kdelay.topology.internals.ScheduleEntry.State;
import java.util.Arrays;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The gauges of one partition, kept by its stream thread and published for any reader.
 *
 * <p>{@link Schedules} reports every change of an id's state, so the counts cost one call per
 * change. What the partition already holds when it starts (after a restart, or when it moved here)
 * is counted by {@link #countSome}, a chunk at a time between punctuations, so that millions of
 * stored schedules neither delay the first fire nor stall the stream thread. The scan walks the
 * schedules store in key order; a change to an id the scan has passed updates the count, a change
 * to an id ahead of it does not, since the scan will count that id's state when it gets there.
 *
 * <p>Written on the stream thread only; the published values are volatile, each read on its own.
 */
final class PartitionState implements PartitionGauges {

  private final int partition;

  // Stream thread only.
  private long scheduled;
  private long paused;
  private boolean counted;
  private Bytes scannedUpTo; // every id at or below this is counted; null before the first chunk
  private long lastNextDue = UNKNOWN;
  private long lastOverdueSince = UNKNOWN;

  // Published.
  private volatile long pendingView = COUNTING;
  private volatile long pausedView = COUNTING;
  private volatile long nextDueView = UNKNOWN;
  private volatile long overdueSinceView = UNKNOWN;

  PartitionState(int partition) {
    this.partition = partition;
  }

  /** Notes that an id's state changed; null is no state (no entry). */
  void transition(Bytes id, State from, State to) {
    if (from == to) {
      return;
    }
    if (!counted && (scannedUpTo == null || id.compareTo(scannedUpTo) > 0)) {
      return; // ahead of the count scan, which will see the new state
    }
    add(from, -1);
    add(to, 1);
    publishCounts();
  }

  /**
   * Counts up to {@code max} more stored schedules.
   *
   * @return whether every stored schedule is counted now
   */
  boolean countSome(KeyValueStore<Bytes, byte[]> entries, int max) {
    if (counted) {
      return true;
    }
    try (KeyValueIterator<Bytes, byte[]> scan =
        scannedUpTo == null ? entries.all() : entries.range(successor(scannedUpTo), null)) {
      for (int seen = 0; seen < max && scan.hasNext(); seen++) {
        KeyValue<Bytes, byte[]> entry = scan.next();
        try {
          add(ScheduleEntry.fromBytes(entry.value).state(), 1);
        } catch (IllegalArgumentException e) {
          // Unreadable: not counted. Schedules rewrites it when its task fires, counting it then.
        }
        scannedUpTo = entry.key;
      }
      counted = !scan.hasNext();
    }
    if (counted) {
      publishCounts();
    }
    return counted;
  }

  /** Publishes what a punctuation learnt; writes shared memory only when something changed. */
  void punctuated(long nextDueMs, long overdueSinceMs) {
    if (nextDueMs != lastNextDue) {
      lastNextDue = nextDueMs;
      nextDueView = nextDueMs;
    }
    if (overdueSinceMs != lastOverdueSince) {
      lastOverdueSince = overdueSinceMs;
      overdueSinceView = overdueSinceMs;
    }
  }

  private void add(State state, int delta) {
    if (state == State.SCHEDULED) {
      scheduled += delta;
    } else if (state == State.PAUSED) {
      paused += delta;
    }
  }

  private void publishCounts() {
    if (counted) {
      pendingView = scheduled;
      pausedView = paused;
    }
  }

  private static Bytes successor(Bytes key) {
    byte[] raw = key.get();
    return Bytes.wrap(Arrays.copyOf(raw, raw.length + 1));
  }

  @Override
  public int partition() {
    return partition;
  }

  @Override
  public long pendingTasks() {
    return pendingView;
  }

  @Override
  public long pausedSchedules() {
    return pausedView;
  }

  @Override
  public long nextDueMs() {
    return nextDueView;
  }

  @Override
  public long overdueSinceMs() {
    return overdueSinceView;
  }

  @Override
  public String toString() {
    return "PartitionState[partition=" + partition + ", pending=" + pendingView + "]";
  }
}

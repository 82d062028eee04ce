package dev.kdelay.topology.internals;

import dev.kdelay.topology.Decoded;
import dev.kdelay.topology.PartitionGauges;
import dev.kdelay.topology.internals.store.ScheduleBytes;
import dev.kdelay.topology.internals.store.ScheduleEntry;
import dev.kdelay.topology.internals.store.ScheduleEntry.State;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.OptionalLong;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.Cancellable;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.ProcessorContext;

/**
 * The gauges of one partition, kept by its stream thread and published for any reader.
 *
 * <p>{@link Schedules} reports every change of an id's state, so the counts cost one call per
 * change. What the partition already holds when it starts (after a restart, or when it moved here)
 * is counted by {@link #countSome}, a chunk at a time between punctuations, so that millions of
 * stored schedules neither delay the first fire nor stall the stream thread. The scan walks the
 * store's entries in id order; a change to an id the scan has passed updates the count, a change to
 * an id ahead of it does not, since the scan will count that id's state when it gets there.
 *
 * <p>Written on the stream thread only; the published values are volatile, each read on its own.
 */
final class PartitionState implements PartitionGauges {

  /**
   * Stored schedules counted per step when a partition starts here, and how often a step runs: a
   * step costs a few milliseconds of the stream thread, so fires due meanwhile are barely delayed.
   */
  private static final int COUNT_STEP = 5_000;

  private static final Duration COUNT_INTERVAL = Duration.ofMillis(50);

  private final int partition;

  // Stream thread only.
  private long scheduled;
  private long paused;
  private boolean counted;
  private Bytes scannedUpTo; // every id at or below this is counted; null before the first chunk
  // each tenant's stored schedules (scheduled or paused), counted as the totals are
  private final Map<String, long[]> storedByTenant = new HashMap<>();
  private boolean tenantsChanged;
  private long lastNextDue = UNKNOWN;
  private long lastOverdueSince = UNKNOWN;

  // Published.
  private volatile long pendingView = COUNTING;
  private volatile long pausedView = COUNTING;
  private volatile long nextDueView = UNKNOWN;
  private volatile long overdueSinceView = UNKNOWN;
  private volatile Map<String, Long> storedByTenantView; // null while counting

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
    int stored = stored(to) - stored(from);
    if (stored != 0) {
      String tenant = tenantOf(id.get());
      if (tenant != null) {
        storedByTenant.computeIfAbsent(tenant, t -> new long[1])[0] += stored;
        tenantsChanged = true;
      }
    }
    publishCounts();
  }

  /**
   * How many schedules (scheduled or paused) the tenant holds on this partition; empty while the
   * partition is still counting what it held when it started here.
   */
  OptionalLong storedOf(String tenant) {
    if (!counted) {
      return OptionalLong.empty();
    }
    long[] count = storedByTenant.get(tenant);
    return OptionalLong.of(count == null ? 0 : count[0]);
  }

  private static int stored(State state) {
    return state == State.SCHEDULED || state == State.PAUSED ? 1 : 0;
  }

  /** The tenant of a kept id's bytes (U+0000, the tenant, U+0000, the id); null for a plain id. */
  private static String tenantOf(byte[] id) {
    if (id.length == 0 || id[0] != 0) {
      return null;
    }
    for (int i = 1; i < id.length; i++) {
      if (id[i] == 0) {
        return new String(id, 1, i - 1, StandardCharsets.UTF_8);
      }
    }
    return null;
  }

  /**
   * Counts what the partition holds when it starts: a step now, and the rest a step per wall-clock
   * interval, on the stream thread, until every stored schedule is counted.
   */
  void countInSteps(ProcessorContext<?, ?> context, ScheduleBytes store) {
    if (countSome(store, COUNT_STEP)) {
      return;
    }
    Cancellable[] counting = new Cancellable[1];
    counting[0] =
        context.schedule(
            COUNT_INTERVAL,
            PunctuationType.WALL_CLOCK_TIME,
            timestamp -> {
              if (countSome(store, COUNT_STEP)) {
                counting[0].cancel();
              }
            });
  }

  /**
   * Counts up to {@code max} more stored schedules.
   *
   * @return whether every stored schedule is counted now
   */
  boolean countSome(ScheduleBytes store, int max) {
    if (counted) {
      return true;
    }
    int[] seen = {0};
    byte[] last =
        store.scanEntries(
            scannedUpTo == null ? null : scannedUpTo.get(),
            max,
            (id, entry) -> {
              seen[0]++;
              Decoded<ScheduleEntry> decoded = ScheduleEntry.decode(entry);
              // Unreadable: not counted. A schedule or cancel replaces it, counting it then.
              if (decoded.isReadable()) {
                State state = decoded.value().state();
                add(state, 1);
                String tenant = stored(state) == 1 ? tenantOf(id) : null;
                if (tenant != null) {
                  storedByTenant.computeIfAbsent(tenant, t -> new long[1])[0]++;
                }
              }
            });
    if (last != null) {
      scannedUpTo = Bytes.wrap(last);
    }
    if (seen[0] < max) {
      counted = true;
      publishCounts();
      publishTenants();
    }
    return counted;
  }

  /** Publishes what a punctuation learnt; writes shared memory only when something changed. */
  void punctuated(long nextDueMs, long overdueSinceMs) {
    if (tenantsChanged && counted) {
      publishTenants();
    }
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

  /** Publishes each tenant's count: a copy, at most once a punctuation, not at every change. */
  private void publishTenants() {
    Map<String, Long> view = new HashMap<>();
    storedByTenant.forEach(
        (tenant, count) -> {
          if (count[0] != 0) {
            view.put(tenant, count[0]);
          }
        });
    storedByTenantView = Map.copyOf(view);
    tenantsChanged = false;
  }

  @Override
  public Map<String, Long> storedByTenant() {
    return storedByTenantView;
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

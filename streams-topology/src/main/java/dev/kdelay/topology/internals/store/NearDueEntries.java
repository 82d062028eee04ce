package dev.kdelay.topology.internals.store;

import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.utils.Bytes;

/**
 * Live entries due soon, by id, each exactly as stored: what a due scan reads instead of RocksDB.
 * Most tasks are scheduled a few seconds to minutes ahead and fire from here; a due scan's
 * multi-get, one memtable search per entry, took a fifth of its time (a CPU profile of the
 * throughput benchmark). An entry is kept as it is written when it is due within {@link
 * #NEAR_DUE_MS} of the latest due scan's time, while the budget of {@link #MAX_NEAR_DUE_BYTES}
 * allows; all are forgotten when RocksDB may change under them (a restore).
 *
 * <p>Not thread-safe: the store calls it holding its lock. The budget is shared by every store of
 * the JVM.
 */
final class NearDueEntries {

  /** How far past the latest due scan an entry's due time may be for it to be kept. */
  static final long NEAR_DUE_MS = 60_000;

  /**
   * Bytes of entries kept at most, by all the stores of this JVM together: each takes its share
   * from {@link #BUDGET} as it keeps an entry.
   */
  static final long MAX_NEAR_DUE_BYTES = 32L * 1024 * 1024;

  private static final AtomicLong BUDGET = new AtomicLong(MAX_NEAR_DUE_BYTES);

  private final Map<Bytes, byte[]> entries = new HashMap<>();
  private long bytes;

  /** The time of the latest due scan; entries due up to a while after it are kept. */
  private long lastScanMs = Long.MIN_VALUE;

  /** Notes a due scan at {@code nowMs}. */
  void scanned(long nowMs) {
    lastScanMs = Math.max(lastScanMs, nowMs);
  }

  /**
   * Keeps an id's new entry if it is live and due soon, forgetting the old one.
   *
   * @param next the new entry, or null when the id's entry is deleted
   * @return whether the new entry is kept
   */
  boolean keep(Bytes id, byte[] next) {
    byte[] old = entries.isEmpty() ? null : entries.remove(id);
    if (old != null) {
      bytes -= old.length;
      BUDGET.addAndGet(old.length);
    }
    if (next != null
        && lastScanMs != Long.MIN_VALUE
        && ScheduleEntry.damage(next) == null
        && ScheduleEntry.stateOf(next) == ScheduleEntry.State.SCHEDULED
        && ScheduleEntry.timeOf(next) <= lastScanMs + NEAR_DUE_MS
        && takeFromBudget(next.length)) {
      entries.put(id, next);
      bytes += next.length;
      return true;
    }
    return false;
  }

  private static boolean takeFromBudget(long bytes) {
    if (BUDGET.addAndGet(-bytes) >= 0) {
      return true;
    }
    BUDGET.addAndGet(bytes);
    return false;
  }

  /** The entries kept, by id, for a due scan to read. */
  Map<Bytes, byte[]> byId() {
    return Collections.unmodifiableMap(entries);
  }

  /** Forgets every entry kept, giving its bytes back to the budget. */
  void forget() {
    entries.clear();
    BUDGET.addAndGet(bytes);
    bytes = 0;
  }

  int size() {
    return entries.size();
  }

  /** Bytes the stores of this JVM may still keep; for tests. */
  static long budgetLeft() {
    return BUDGET.get();
  }
}

package dev.kdelay.topology;

import java.util.Map;

/**
 * The state of one partition's schedules, as gauges: written by the partition's stream thread,
 * readable from any thread (a metrics scrape), each value on its own and without a lock.
 *
 * <p>Times are epoch milliseconds of the stream thread's wall clock; a reader computes ages against
 * its own clock.
 */
public interface PartitionGauges {

  /** {@link #pendingTasks} and {@link #pausedSchedules} while the partition is still counted. */
  long COUNTING = -1;

  /** {@link #nextDueMs} and {@link #overdueSinceMs} when nothing is pending. */
  long NONE = Long.MAX_VALUE;

  /** {@link #nextDueMs} and {@link #overdueSinceMs} before the first punctuation. */
  long UNKNOWN = Long.MIN_VALUE;

  /** The partition of the request topic this is the state of. */
  int partition();

  /**
   * Schedules waiting to fire: one-shots and recurring schedules that are not paused.
   *
   * @return the count, or {@link #COUNTING} until the count of the partition's existing schedules
   *     (after a restart or when the partition moved here) is complete
   */
  long pendingTasks();

  /**
   * Recurring schedules that are paused.
   *
   * @return the count, or {@link #COUNTING} as {@link #pendingTasks}
   */
  long pausedSchedules();

  /**
   * The earliest due time of a task in the schedule store (markers' expiries are not counted). It
   * is a lower bound: it may still name a task that was cancelled, until the time passes.
   *
   * @return epoch milliseconds, {@link #NONE} or {@link #UNKNOWN}
   */
  long nextDueMs();

  /**
   * The due time of the oldest entry that is due and has not been handled yet, as of the last
   * punctuation. While the partition keeps up this is in the future (it is then {@link
   * #nextDueMs}); when punctuations stop, or cannot keep up with a backlog, it falls behind the
   * clock, and the difference is how late the oldest waiting task is.
   *
   * @return epoch milliseconds, {@link #NONE} or {@link #UNKNOWN}
   */
  long overdueSinceMs();

  /**
   * Each tenant's schedules on this partition (scheduled or paused), by tenant, as of the last
   * punctuation.
   *
   * @return the counts, tenants holding none left out; null until the partition's existing
   *     schedules are counted
   */
  default Map<String, Long> storedByTenant() {
    return Map.of();
  }
}

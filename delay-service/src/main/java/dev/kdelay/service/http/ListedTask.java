package dev.kdelay.service.http;

import dev.kdelay.topology.ReadableSchedules.Listed;
import java.util.Comparator;

/**
 * An entry of {@code GET /schedules}, a pending task or one that cannot be read, with its position
 * in due order and its JSON: a map when read here, a tree when a peer sent it.
 *
 * @param dueMs when it is due, epoch milliseconds
 * @param id the schedule id
 * @param json what the listing shows of it
 */
record ListedTask(long dueMs, String id, Object json) {

  /** The order tasks fire in: {@link Listed#DUE_ORDER}. */
  static final Comparator<ListedTask> DUE_ORDER =
      Comparator.comparingLong(ListedTask::dueMs).thenComparing(ListedTask::id, Listed::compareIds);
}

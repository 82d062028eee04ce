package dev.kdelay.topology.internals;

import dev.kdelay.schemas.StoredTaskCodec;
import dev.kdelay.topology.Decoded;
import dev.kdelay.topology.internals.store.MeteredScheduleStore.Due;
import dev.kdelay.topology.internals.store.ScheduleEntry;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The order a batch of due entries is handled in: by the due time each fires as, then as the due
 * index holds them.
 *
 * <p>A task a fire-rate limit deferred waits in the due index at its slot, later than its own due
 * time. When the stream thread comes back after that slot (a long commit, a pause), the scan finds
 * tasks that came due after it, but before its slot, ahead of it; handled in index order they would
 * take the limit's free slots first and overtake it. So would tasks that waited one punctuation
 * behind a deferred one ({@link dev.kdelay.topology.internals.limits.FireSlots#take}): all of them
 * are due at the same slot, and the index orders them by id. Sorted by the due time they fire as, a
 * partition's tasks go out in due order, deferred ones included.
 *
 * <p>Nothing is deferred without fire-rate limits, and then the batch is handled as scanned: one
 * look at each entry's first byte.
 */
final class DueOrder {

  private static final Comparator<Due> FIRES_AS = Comparator.comparingLong(DueOrder::firesAsDueMs);

  private DueOrder() {}

  /** The batch in the order to handle it: itself, unless it holds a deferred task. */
  static List<Due> of(List<Due> batch) {
    for (Due due : batch) {
      if (firesAsDueMs(due) != due.dueMs()) {
        List<Due> sorted = new ArrayList<>(batch);
        sorted.sort(FIRES_AS); // stable: ties keep the index's order
        return sorted;
      }
    }
    return batch;
  }

  /** The due time an entry fires as: a deferred task's own, otherwise its entry's. */
  private static long firesAsDueMs(Due due) {
    if (due.stored().entry() instanceof Decoded.Readable<ScheduleEntry> readable) {
      return StoredTaskCodec.firesAsDueMs(readable.value().task(), due.dueMs());
    }
    return due.dueMs(); // unreadable: where the index holds it, and dead-lettered from there
  }
}

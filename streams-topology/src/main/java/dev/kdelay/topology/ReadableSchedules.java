package dev.kdelay.topology;

import dev.kdelay.schemas.StoredTaskSummary;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * One partition's schedules, as interactive queries read them, from any thread while the stream
 * thread writes. Obtain one with {@link ScheduleStores#type()}:
 *
 * <pre>{@code
 * ReadableSchedules schedules = streams.store(
 *     StoreQueryParameters.fromNameAndType(DelayTopology.SCHEDULES_STORE, ScheduleStores.type())
 *         .withPartition(partition));
 * switch (schedules.view("order-42")) { ... }
 * }</pre>
 *
 * <p>Every read is a point lookup or one bounded scan; stored bytes that cannot be decoded come
 * back as {@link Decoded.Unreadable}, never as an exception.
 */
public interface ReadableSchedules {

  /**
   * Where one id stands.
   *
   * @param id the schedule id
   * @return the view ({@link ScheduleView.Status#UNKNOWN} if nothing is held), or why what is
   *     stored for the id cannot be read
   * @throws org.apache.kafka.streams.errors.InvalidStateStoreException if the partition moved away
   */
  Decoded<ScheduleView> view(String id);

  /**
   * Tasks waiting to fire, in {@link Listed#DUE_ORDER}: due before a time, after a position, at
   * most a number of them, and no more once a number of stored bytes has been read (at least one
   * task). Paused schedules and markers are not listed.
   *
   * @param afterDueMs with {@code afterId}: list only tasks after the one due then with that id
   * @param afterId the id of the last task of the previous page, or null to start at the earliest
   * @param dueBeforeMs list only tasks due strictly before this, epoch milliseconds
   * @param limit most tasks to list
   * @param maxBytes stored bytes after which the listing stops
   * @return the tasks
   * @throws IllegalArgumentException if {@code limit} or {@code maxBytes} is not positive
   * @throws org.apache.kafka.streams.errors.InvalidStateStoreException if the partition moved away
   */
  Listing pending(long afterDueMs, String afterId, long dueBeforeMs, int limit, long maxBytes);

  /**
   * A listed task.
   *
   * @param id the schedule id
   * @param dueMs when it fires, epoch milliseconds
   * @param task what a listing shows of the stored task (read without copying its payload), or why
   *     it cannot be read
   */
  record Listed(String id, long dueMs, Decoded<StoredTaskSummary> task) {

    /**
     * The order tasks fire in within a partition, and so the order of merged listings: by due time,
     * then by the UTF-8 bytes of the id, unsigned.
     */
    public static final Comparator<Listed> DUE_ORDER =
        Comparator.comparingLong(Listed::dueMs).thenComparing(Listed::id, Listed::compareIds);

    /** Compares ids as the store orders them: their UTF-8 bytes, unsigned. */
    public static int compareIds(String a, String b) {
      return Arrays.compareUnsigned(
          a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));
    }

    /** Creates a listed task. */
    public Listed {
      Objects.requireNonNull(id, "id cannot be null");
      Objects.requireNonNull(task, "task cannot be null");
    }
  }

  /**
   * One partition's share of a listing.
   *
   * @param tasks the tasks in due order
   * @param complete false if the share stopped at its byte budget: tasks due after its last one
   *     (and before the bound) may be missing, so a merge shows nothing after it
   */
  record Listing(List<Listed> tasks, boolean complete) {
    /** Creates a listing. */
    public Listing {
      tasks = List.copyOf(tasks);
    }
  }
}

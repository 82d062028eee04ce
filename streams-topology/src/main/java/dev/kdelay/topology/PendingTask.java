package dev.kdelay.topology;

import dev.kdelay.schemas.StoredTask;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Objects;

/**
 * A task waiting to fire, as {@link ScheduleStores#pending} lists it.
 *
 * @param id the schedule id
 * @param dueMs when it fires, epoch milliseconds
 * @param task the stored task: target, payload, carried headers, timing, occurrence number
 */
public record PendingTask(String id, long dueMs, StoredTask task) {

  /**
   * The order tasks fire in within a partition, and so the order of merged listings: by due time,
   * then by the UTF-8 bytes of the id, unsigned.
   */
  public static final Comparator<PendingTask> DUE_ORDER =
      Comparator.comparingLong(PendingTask::dueMs)
          .thenComparing(PendingTask::id, PendingTask::compareIds);

  /** Creates a pending task. */
  public PendingTask {
    Objects.requireNonNull(id, "id cannot be null");
    Objects.requireNonNull(task, "task cannot be null");
  }

  /** Compares ids as the task store orders them: their UTF-8 bytes, unsigned. */
  public static int compareIds(String a, String b) {
    return Arrays.compareUnsigned(
        a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));
  }
}

package dev.kdelay.schemas;

import java.util.Objects;
import java.util.OptionalLong;

/**
 * What a listing shows of a stored task, read without copying its payload or its carried headers
 * ({@link StoredTaskCodec#summarize}): a page of large tasks costs their sizes, not their bytes.
 *
 * @param target where the task fires to
 * @param timing its due time, or its cron schedule
 * @param payloadBytes the payload's size, or {@value #NO_PAYLOAD} for a tombstone
 * @param headerCount how many headers it carries
 * @param occurrence the 1-based number of the occurrence it fires as next
 * @param deferredDueMs that occurrence's due time when a fire-rate limit deferred it (see {@link
 *     StoredTask#deferredDueMs}); empty when it fires at its own due time
 */
public record StoredTaskSummary(
    Target target,
    Timing timing,
    int payloadBytes,
    int headerCount,
    long occurrence,
    OptionalLong deferredDueMs) {

  /** {@link #payloadBytes} of a task that fires a tombstone. */
  public static final int NO_PAYLOAD = -1;

  /** Creates a summary. */
  public StoredTaskSummary {
    Objects.requireNonNull(target, "target cannot be null");
    Objects.requireNonNull(timing, "timing cannot be null");
    Objects.requireNonNull(deferredDueMs, "deferredDueMs cannot be null");
  }

  /** The summary of a decoded task. */
  public static StoredTaskSummary of(StoredTask task) {
    Schedule schedule = task.schedule();
    return new StoredTaskSummary(
        schedule.target(),
        schedule.timing(),
        schedule.payload() == null ? NO_PAYLOAD : schedule.payload().length,
        schedule.headers().size(),
        task.occurrence(),
        task.deferredDueMs());
  }

  /** Whether it is a recurring (cron) schedule. */
  public boolean recurring() {
    return timing instanceof CronSpec;
  }
}

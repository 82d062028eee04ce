package dev.kdelay.schemas;

/** When a schedule fires: once at a due time, or on a cron cadence. */
public sealed interface Timing permits Timing.Once, CronSpec {

  /**
   * A one-shot schedule.
   *
   * @param dueMs the due time, epoch milliseconds
   */
  record Once(long dueMs) implements Timing {}
}

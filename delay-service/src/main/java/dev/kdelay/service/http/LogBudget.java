package dev.kdelay.service.http;

import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * How many lines of one kind a second may be logged: the lines a caller can cause at will (a
 * refused request) must not fill the disk at the rate someone sends them. Past the budget, lines
 * are skipped and counted; the next line logged says how many were skipped. Counters stay exact.
 */
final class LogBudget {

  private final int perSecond;
  private final LongSupplier nanos;
  private long windowStart;
  private int logged;
  private long skipped;

  /**
   * @param perSecond the most lines logged per second
   * @param nanos the clock, in nanoseconds ({@link System#nanoTime} but in tests)
   */
  LogBudget(int perSecond, LongSupplier nanos) {
    this.perSecond = perSecond;
    this.nanos = nanos;
    this.windowStart = nanos.getAsLong();
  }

  /**
   * Whether a line may be logged now: empty if not (it is counted as skipped), else how many were
   * skipped since the last line logged.
   */
  synchronized OptionalLong admit() {
    long now = nanos.getAsLong();
    if (now - windowStart >= TimeUnit.SECONDS.toNanos(1)) {
      windowStart = now;
      logged = 0;
    }
    if (logged >= perSecond) {
      skipped++;
      return OptionalLong.empty();
    }
    logged++;
    long before = skipped;
    skipped = 0;
    return OptionalLong.of(before);
  }
}

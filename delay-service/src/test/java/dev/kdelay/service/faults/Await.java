package dev.kdelay.service.faults;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Polls a condition until it holds or a timeout passes: the only way the fault tests wait. The poll
 * interval is how often a condition is looked at, never a guess at how long something takes.
 *
 * <p>Every timeout is multiplied by {@code -Dkdelay.faults.timeout.factor} (default 1), for
 * machines slower or busier than a 2-core CI runner.
 */
final class Await {

  private static final long POLL_MS = 25;
  private static final double FACTOR =
      Double.parseDouble(System.getProperty("kdelay.faults.timeout.factor", "1"));

  private Await() {}

  /** The configured factor, for a failure to say what it ran with. */
  static double factor() {
    return FACTOR;
  }

  /** A timeout scaled by the configured factor. */
  static Duration scaled(Duration timeout) {
    return Duration.ofMillis((long) (timeout.toMillis() * FACTOR));
  }

  /**
   * Waits until the condition holds.
   *
   * @throws AssertionError naming what was awaited if it does not hold in time
   */
  static void until(String what, Duration timeout, BooleanSupplier condition) {
    value(what, timeout, () -> condition.getAsBoolean() ? Optional.of(true) : Optional.empty());
  }

  /**
   * Waits until the supplier has a value, and returns it.
   *
   * @throws AssertionError naming what was awaited if no value comes in time
   */
  static <T> T value(String what, Duration timeout, Supplier<Optional<T>> supplier) {
    Duration scaled = scaled(timeout);
    long deadline = System.nanoTime() + scaled.toNanos();
    while (true) {
      Optional<T> value = supplier.get();
      if (value.isPresent()) {
        return value.get();
      }
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError(
            "Timed out after " + scaled.toSeconds() + " s waiting for " + what);
      }
      pause(POLL_MS);
    }
  }

  /** Parks the caller; for pacing and poll intervals only. */
  static void pause(long millis) {
    try {
      TimeUnit.MILLISECONDS.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}

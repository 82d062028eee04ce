package dev.kdelay.service;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.function.Predicate;
import java.util.function.Supplier;

/** Waits of the service's tests that read a value until it meets a condition. */
public final class Conditions {

  private Conditions() {}

  /**
   * Reads {@code value} until it meets {@code condition}, and returns it.
   *
   * @throws AssertionError naming the last value read if none met it within {@code timeout}
   */
  public static <T> T awaitValue(Duration timeout, Supplier<T> value, Predicate<T> condition)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    T current = value.get();
    while (!condition.test(current)) {
      assertThat(System.nanoTime())
          .as("condition met in time, last " + current)
          .isLessThan(deadline);
      Thread.sleep(20); // the poll interval of this wait, not a guess at how long it takes
      current = value.get();
    }
    return current;
  }
}

package dev.kdelay.benchmarks;

import java.util.Arrays;

/**
 * A growable set of {@code long} samples (lateness in milliseconds, for example) and their exact
 * order statistics. Percentiles use the nearest-rank method: the p-th percentile is the smallest
 * sample that at least p percent of the samples do not exceed, so it is always a measured value.
 *
 * <p>Not thread-safe: one thread adds, and reads after adding.
 */
final class Samples {

  private long[] values = new long[1024];
  private int size;
  private boolean sorted = true;

  /** Adds a sample. */
  void add(long value) {
    if (size == values.length) {
      values = Arrays.copyOf(values, size * 2);
    }
    if (size > 0 && value < values[size - 1]) {
      sorted = false;
    }
    values[size++] = value;
  }

  /** Adds every sample of another set. */
  void addAll(Samples other) {
    for (int i = 0; i < other.size; i++) {
      add(other.values[i]);
    }
  }

  int size() {
    return size;
  }

  boolean isEmpty() {
    return size == 0;
  }

  /**
   * The nearest-rank percentile.
   *
   * @param percent in {@code (0, 100]}
   * @throws IllegalArgumentException if percent is out of range
   * @throws IllegalStateException if there are no samples
   */
  long percentile(double percent) {
    if (!(percent > 0 && percent <= 100)) {
      throw new IllegalArgumentException("percent must be in (0, 100], got " + percent);
    }
    if (size == 0) {
      throw new IllegalStateException("no samples");
    }
    sort();
    // The epsilon keeps binary rounding (99.9 / 100 * 10,000 = 9,990.000000000002) off the rank.
    int rank = (int) Math.ceil(percent / 100 * size - 1e-9);
    return values[Math.max(rank, 1) - 1];
  }

  long min() {
    return percentileOrThrow(0);
  }

  long max() {
    return percentileOrThrow(size - 1);
  }

  /** How many samples are below {@code bound}. */
  int countBelow(long bound) {
    int below = 0;
    for (int i = 0; i < size; i++) {
      if (values[i] < bound) {
        below++;
      }
    }
    return below;
  }

  private long percentileOrThrow(int index) {
    if (size == 0) {
      throw new IllegalStateException("no samples");
    }
    sort();
    return values[index];
  }

  private void sort() {
    if (!sorted) {
      Arrays.sort(values, 0, size);
      sorted = true;
    }
  }
}

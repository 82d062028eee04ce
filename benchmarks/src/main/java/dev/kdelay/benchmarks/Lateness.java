package dev.kdelay.benchmarks;

/**
 * Due-to-visible lateness of one run's fired records, in milliseconds: pooled over the run, and per
 * consecutive window of due times, which shows both the spread within the run and whether lateness
 * grows (the instance falls behind the rate).
 */
final class Lateness {

  private final long[] dueMs;
  private final long[] lateMs;
  private final Samples all = new Samples();

  private Lateness(long[] dueMs, long[] visibleMs) {
    this.dueMs = dueMs;
    this.lateMs = new long[dueMs.length];
    for (int i = 0; i < dueMs.length; i++) {
      lateMs[i] = visibleMs[i] - dueMs[i];
      all.add(lateMs[i]);
    }
  }

  /**
   * The lateness of records with these due and visible times.
   *
   * @throws IllegalArgumentException if the arrays differ in length
   */
  static Lateness of(long[] dueMs, long[] visibleMs) {
    if (dueMs.length != visibleMs.length) {
      throw new IllegalArgumentException(
          "due and visible times differ in count: " + dueMs.length + " vs " + visibleMs.length);
    }
    return new Lateness(dueMs, visibleMs);
  }

  int count() {
    return all.size();
  }

  /** Records visible before their due time: must be none. */
  int early() {
    return all.countBelow(0);
  }

  /** A pooled percentile of the run. */
  long percentile(double percent) {
    return all.percentile(percent);
  }

  long max() {
    return all.max();
  }

  /**
   * The lateness of the records due in each of {@code count} equal spans of the run's due times;
   * spans without records are left out.
   */
  Samples[] windows(int count) {
    long first = Long.MAX_VALUE;
    long last = Long.MIN_VALUE;
    for (long due : dueMs) {
      first = Math.min(first, due);
      last = Math.max(last, due);
    }
    Samples[] windows = new Samples[count];
    for (int w = 0; w < count; w++) {
      windows[w] = new Samples();
    }
    double span = last - first + 1.0;
    for (int i = 0; i < dueMs.length; i++) {
      windows[(int) ((dueMs[i] - first) * count / span)].add(lateMs[i]);
    }
    return java.util.Arrays.stream(windows).filter(w -> !w.isEmpty()).toArray(Samples[]::new);
  }

  /** A percentile of each window: its median and range across the windows. */
  Spread acrossWindows(double percent, int count) {
    Samples[] windows = windows(count);
    double[] values = new double[windows.length];
    for (int w = 0; w < windows.length; w++) {
      values[w] = windows[w].percentile(percent);
    }
    return Spread.of(values);
  }
}

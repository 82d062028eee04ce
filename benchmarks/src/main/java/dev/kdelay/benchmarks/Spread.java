package dev.kdelay.benchmarks;

import java.util.Arrays;
import java.util.Locale;

/**
 * A figure measured several times: the median and the range. On a shared machine a single number
 * hides how much it moved; {@code 52,100 [49,800-55,000]} does not.
 *
 * @param median the median (the mean of the middle two for an even count)
 * @param min the smallest value
 * @param max the largest value
 * @param count how many values
 */
record Spread(double median, double min, double max, int count) {

  /**
   * The spread of some values.
   *
   * @throws IllegalArgumentException if there are none
   */
  static Spread of(double... values) {
    if (values.length == 0) {
      throw new IllegalArgumentException("a spread needs at least one value");
    }
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int mid = sorted.length / 2;
    double median = sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    return new Spread(median, sorted[0], sorted[sorted.length - 1], sorted.length);
  }

  /** The median with the range, each with the given decimals: {@code 0.41 [0.38-0.45]}. */
  String format(int decimals) {
    String median = number(this.median, decimals);
    if (count == 1) {
      return median;
    }
    return median + " [" + number(min, decimals) + "-" + number(max, decimals) + "]";
  }

  /** A number with thousands separators. */
  static String number(double value, int decimals) {
    return String.format(Locale.ROOT, "%,." + decimals + "f", value);
  }
}

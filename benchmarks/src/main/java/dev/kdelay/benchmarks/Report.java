package dev.kdelay.benchmarks;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * The printed result: the exact configuration, then one table per measurement. Figures measured
 * several times print as {@code median [min-max]}; comparisons are ratios against the baseline of
 * the same run, because the machine is shared and absolute figures move.
 */
final class Report {

  private final StringBuilder text = new StringBuilder();

  /** Appends a line as it is. */
  Report text(String line) {
    text.append(line).append('\n');
    return this;
  }

  /** Appends a line; {@code format} as {@link String#format}. */
  Report line(String format, Object... args) {
    text.append(String.format(Locale.ROOT, format, args)).append('\n');
    return this;
  }

  Report blank() {
    text.append('\n');
    return this;
  }

  void print(PrintStream out) {
    out.print(text);
    out.flush();
  }

  /** The spread of one figure over several runs. */
  static <T> Spread spread(List<T> runs, ToDoubleFunction<T> figure) {
    return Spread.of(runs.stream().mapToDouble(figure).toArray());
  }

  /** The spread of the ratios of paired runs, {@code a[i] / b[i]}. */
  static <T> Spread ratios(List<T> a, List<T> b, ToDoubleFunction<T> figure) {
    double[] ratios = new double[Math.min(a.size(), b.size())];
    for (int i = 0; i < ratios.length; i++) {
      ratios[i] = figure.applyAsDouble(a.get(i)) / figure.applyAsDouble(b.get(i));
    }
    return Spread.of(ratios);
  }

  /** Bytes in binary units: {@code 1.5 GiB}. */
  static String bytes(long bytes) {
    if (bytes < 0) {
      return "n/a";
    }
    String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
    double value = bytes;
    int unit = 0;
    while (value >= 1024 && unit < units.length - 1) {
      value /= 1024;
      unit++;
    }
    return String.format(Locale.ROOT, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  }

  /** Whether a goal is met, as the report says it. */
  static String verdict(boolean met) {
    return met ? "met" : "NOT MET";
  }
}

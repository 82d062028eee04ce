package dev.kdelay.benchmarks;

import java.time.Duration;
import java.util.List;

/**
 * (1) the ceiling and (2) the throughput of kdelay and of the textbook delay app, end to end. The
 * ratio to the ceiling is the cost of delaying; the ratio to the textbook app is what kdelay's
 * store and features cost (or save) against what a team writes with Kafka Streams alone.
 */
final class ThroughputSection {

  /** The SPEC's goal: kdelay sustains at least this share of the ceiling. */
  static final double GOAL_RATIO = 0.6;

  /** kdelay, every feature on, sustains at least this share of the textbook app's throughput. */
  static final double TEXTBOOK_GOAL_RATIO = 1.0;

  private static final String COLUMNS = "  %-22s %-24s %-17s %-11s %-11s %-16s %-10s %-10s %s";

  private final Settings settings;
  private final int kdelayRecords;
  private final List<Runs.Throughput> ceiling;
  private final List<Runs.Throughput> kdelay;
  private final double idleCeilingCores;
  private final double idleKdelayCores;
  private List<Runs.Throughput> textbook = List.of();
  private double idleTextbookCores = Double.NaN;
  private Runs.Throughput calibration;
  private int calibrationSent;
  private Duration calibrationLimit;

  ThroughputSection(
      Settings settings,
      int kdelayRecords,
      List<Runs.Throughput> ceiling,
      List<Runs.Throughput> kdelay,
      double idleCeilingCores,
      double idleKdelayCores) {
    this.settings = settings;
    this.kdelayRecords = kdelayRecords;
    this.ceiling = ceiling;
    this.kdelay = kdelay;
    this.idleCeilingCores = idleCeilingCores;
    this.idleKdelayCores = idleKdelayCores;
  }

  /** The calibration run: a throwaway instance under a full backlog, for a limited time. */
  ThroughputSection calibration(Runs.Throughput run, int sent, Duration limit) {
    this.calibration = run;
    this.calibrationSent = sent;
    this.calibrationLimit = limit;
    return this;
  }

  /**
   * The textbook delay app's runs, each with the records and delay of the kdelay run of the same
   * round, and its idle CPU use.
   */
  ThroughputSection textbook(List<Runs.Throughput> runs, double idleCores) {
    this.textbook = runs;
    this.idleTextbookCores = idleCores;
    return this;
  }

  void write(Report report) {
    report
        .line(
            "(1) ceiling and (2) kdelay and textbook throughput: records sent as fast as one"
                + " producer goes, timed from the first send")
        .line(
            "    until the last is visible to the read_committed probe; the requests of kdelay and"
                + " of the textbook delay app, the same for")
        .line(
            "    both, are due %,d ms after sending, so intake and firing overlap",
            settings.throughputDelayMs());
    if (kdelay.isEmpty()) {
      report.line("    not measured").blank();
      return;
    }
    if (kdelayRecords < settings.throughputRecords()) {
      report.line(
          "    kdelay's runs (and the textbook app's) were cut to %,d records (the ceiling's have"
              + " %,d): at kdelay's rate after the warm-up, %,d would take longer than the %d s budget.",
          kdelayRecords,
          settings.throughputRecords(),
          settings.throughputRecords(),
          settings.runBudget().toSeconds());
      report.line(
          "    So few could all be taken in before the first is due and measure the delay: they"
              + " are due at once (delay 0) instead.");
    }
    Spread ratio = Report.ratios(kdelay, ceiling, Runs.Throughput::perSecond);
    report
        .line(
            COLUMNS,
            "",
            "records/s",
            "x ceiling",
            "app CPU",
            "broker CPU",
            "records per",
            "produced",
            "commit",
            "sending")
        .line(COLUMNS, "", "", "", "ms/1k", "ms/1k", "transaction", "per record", "wait", "took s")
        .text(row("(1) pass-through ceiling", ceiling, "1"))
        .text(row("(2) kdelay", kdelay, ratio.format(2)));
    if (!textbook.isEmpty()) {
      report.text(
          row(
              "(2) textbook delay app",
              textbook,
              Report.ratios(textbook, ceiling, Runs.Throughput::perSecond).format(2)));
    }
    report
        .text(calibrationRow())
        .line(
            "  exactly once: %s; idle CPU between runs: ceiling %.3f cores, kdelay %.3f cores%s",
            exactlyOnceOfAll(),
            idleCeilingCores,
            idleKdelayCores,
            textbook.isEmpty() ? "" : String.format(", textbook %.3f cores", idleTextbookCores))
        .line(
            "  commit wait: share of the run the stream thread spent in the producer's flush and"
                + " in the transaction commit")
        .line(
            "  goal: kdelay >= %.1f x ceiling: %s",
            GOAL_RATIO, Report.verdict(ratio.median() >= GOAL_RATIO));
    writeTextbookComparison(report);
    report.blank();
  }

  /**
   * kdelay against the textbook app, run for run: the same records, the same delay, in the same
   * round. The ratios to the ceiling are the cost of delaying of each.
   */
  private void writeTextbookComparison(Report report) {
    if (textbook.isEmpty()) {
      report.line("  goal: kdelay >= %.1f x textbook: not measured", TEXTBOOK_GOAL_RATIO);
      return;
    }
    Spread ratio = Report.ratios(kdelay, textbook, Runs.Throughput::perSecond);
    report
        .line(
            "  kdelay / textbook records/s: %s, run for run; the cost of delaying (x ceiling):"
                + " kdelay %s, textbook %s",
            ratio.format(2),
            Report.ratios(kdelay, ceiling, Runs.Throughput::perSecond).format(2),
            Report.ratios(textbook, ceiling, Runs.Throughput::perSecond).format(2))
        .line(
            "  stream thread CPU per 1,000 records: kdelay %s ms, textbook %s ms; kdelay / textbook"
                + " %s, run for run",
            Report.spread(kdelay, Runs.Throughput::streamThreadCpuMsPerThousand).format(1),
            Report.spread(textbook, Runs.Throughput::streamThreadCpuMsPerThousand).format(1),
            Report.ratios(kdelay, textbook, Runs.Throughput::streamThreadCpuMsPerThousand)
                .format(2))
        .line(
            "    (the thread that bounds each app's throughput, without the cores, JIT compiler and"
                + " broker they share: the same work, compared)")
        .line(
            "  goal: kdelay >= %.1f x textbook: %s",
            TEXTBOOK_GOAL_RATIO, Report.verdict(ratio.median() >= TEXTBOOK_GOAL_RATIO));
  }

  /** Whether every run of every application saw every record once, as a phrase. */
  private String exactlyOnceOfAll() {
    String clean = exactlyOnce(0, List.of());
    String top = exactlyOnce(settings.throughputRecords(), ceiling);
    String own = exactlyOnce(kdelayRecords, kdelay);
    String book = exactlyOnce(kdelayRecords, textbook);
    if (top.equals(clean) && own.equals(clean) && book.equals(clean)) {
      return clean;
    }
    return "ceiling: "
        + top
        + "; kdelay: "
        + own
        + (textbook.isEmpty() ? "" : "; textbook: " + book);
  }

  private static String row(String name, List<Runs.Throughput> runs, String ratio) {
    return String.format(
        COLUMNS,
        name,
        Report.spread(runs, Runs.Throughput::perSecond).format(0),
        ratio,
        Report.spread(runs, Runs.Throughput::appCpuMsPerThousand).format(0),
        Report.spread(runs, Runs.Throughput::brokerCpuMsPerThousand).format(0),
        Report.spread(runs, Runs.Throughput::recordsPerCommit).format(0),
        Report.spread(runs, Runs.Throughput::sendsPerRecord).format(1),
        percent(Report.spread(runs, Runs.Throughput::commitShare).median()),
        Report.spread(runs, Runs.Throughput::sendSeconds).format(1));
  }

  /**
   * The calibration run as a row: kdelay under a backlog of a full run's records, which is where
   * intake and firing overlap most; when kdelay's runs were cut short, their intake may end before
   * the first task is due and their rate is bound by the delay, so this is the figure to read.
   */
  private String calibrationRow() {
    if (calibration == null) {
      return "";
    }
    String row =
        row("(2) kdelay, backlog", List.of(calibration), "")
            + String.format(
                "%n  %-22s %,d sent at once, watched for at most %d s on a throwaway instance"
                    + " (x ceiling: %.2f)",
                "",
                calibrationSent,
                calibrationLimit.toSeconds(),
                calibration.perSecond()
                    / Report.spread(ceiling, Runs.Throughput::perSecond).median());
    return row;
  }

  private static String percent(double share) {
    return String.format("%.0f%%", 100 * share);
  }

  /** Whether every run saw every record once, as a phrase. */
  static String exactlyOnce(int expected, List<Runs.Throughput> runs) {
    long missing = 0;
    long duplicates = 0;
    for (Runs.Throughput run : runs) {
      missing += expected - run.seen();
      duplicates += run.duplicates();
    }
    return missing == 0 && duplicates == 0
        ? "every record visible once in every run"
        : String.format("%,d records missing, %,d duplicates", missing, duplicates);
  }
}

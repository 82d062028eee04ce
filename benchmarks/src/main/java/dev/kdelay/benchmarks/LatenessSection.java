package dev.kdelay.benchmarks;

import java.util.List;
import java.util.Optional;

/** (3) lateness at fixed rates and at the highest sustained rate. */
final class LatenessSection {

  /** The SPEC's goal: at this rate, sustained, p50, p99 and the maximum within these bounds. */
  static final int GOAL_RATE = 5_000;

  static final long GOAL_P50_MS = 15;
  static final long GOAL_P99_MS = 50;
  static final long GOAL_MAX_MS = 250;

  static final String HEADER =
      String.format(
          "  %-9s %-6s %-9s %-15s %-17s %-7s %-7s %-6s %-4s %-6s %-7s %-6s %-7s %s",
          "fires/s",
          "for s",
          "tasks",
          "p50",
          "p99",
          "p99.9",
          "max",
          "early",
          "dup",
          "cores",
          "txn/s",
          "fired",
          "commit",
          "sustained");

  private final Settings settings;
  private final List<Runs.LatenessRun> fixed;
  private final List<Runs.LatenessRun> search;
  private List<Runs.LatenessRun> textbook = List.of();

  LatenessSection(Settings settings, List<Runs.LatenessRun> fixed, List<Runs.LatenessRun> search) {
    this.settings = settings;
    this.fixed = fixed;
    this.search = search;
  }

  /** The textbook delay app's runs at the fixed rates, each right after kdelay's. */
  LatenessSection textbook(List<Runs.LatenessRun> runs) {
    this.textbook = runs;
    return this;
  }

  void write(Report report) {
    report
        .line(
            "(3) lateness on the empty instance A, due -> visible to the read_committed probe, in"
                + " ms; each request sent %,d ms ahead,",
            settings.latenessLeadMs())
        .line(
            "    due times spread evenly at the rate for %d s; p50 and p99 are over the run"
                + " [range over its %d windows]; cores: the app's CPU use; txn/s: its commits",
            settings.latenessDuration().toSeconds(), settings.latenessWindows())
        .line(
            "    fired: p50 of due -> delay-fired-at, the stream thread's share; commit: its mean"
                + " time per commit (producer flush and transaction commit), ms")
        .line(
            "    sustained: all fired, p99 <= %,d ms, the last window's median at most %d ms above"
                + " the first's",
            Runs.LatenessRun.SUSTAINED_P99_MS, Runs.LatenessRun.SUSTAINED_GROWTH_MS);
    if (fixed.isEmpty()) {
      report.line("    not measured").blank();
      return;
    }
    report.text(HEADER);
    fixed.forEach(run -> report.text(row(run)));
    if (!textbook.isEmpty()) {
      report.line("  the textbook delay app at the same rates, each run right after kdelay's:");
      textbook.forEach(run -> report.text(row(run)));
    }
    report.line(
        "  the highest sustained rate, from 0.9 x kdelay's throughput (2) down by x%.2f per try:",
        settings.rateStep());
    search.forEach(run -> report.text(row(run)));
    if (search.stream().noneMatch(Runs.LatenessRun::sustained)) {
      report.line("  no rate tried was sustained");
    }
    Optional<Runs.LatenessRun> atGoal =
        fixed.stream().filter(run -> run.rate() == GOAL_RATE).findFirst();
    atGoal.ifPresent(
        run ->
            report.line(
                "  goal: at %,d fires/s sustained, p50 <= %d ms, p99 <= %d ms and max <= %d ms: %s",
                GOAL_RATE,
                GOAL_P50_MS,
                GOAL_P99_MS,
                GOAL_MAX_MS,
                Report.verdict(
                    run.sustained()
                        && run.lateness().percentile(50) <= GOAL_P50_MS
                        && run.lateness().percentile(99) <= GOAL_P99_MS
                        && run.lateness().max() <= GOAL_MAX_MS)));
    if (!textbook.isEmpty()) {
      report.line(
          "  goal: kdelay no later than textbook (all fired, p50 and p99 at most the textbook"
              + " app's at each rate): %s",
          Report.verdict(noLaterThanTextbook(fixed, textbook)));
    }
    report.blank();
  }

  /**
   * Whether kdelay's runs were no later than the textbook app's at the same rates: at each rate
   * kdelay fired every task, and its p50 and p99 are at most the textbook app's (a textbook run
   * that fired nothing is beaten by any that fired all).
   */
  static boolean noLaterThanTextbook(
      List<Runs.LatenessRun> kdelay, List<Runs.LatenessRun> textbook) {
    for (Runs.LatenessRun book : textbook) {
      Optional<Runs.LatenessRun> own =
          kdelay.stream().filter(run -> run.rate() == book.rate()).findFirst();
      if (own.isEmpty() || !noLaterThan(own.get(), book)) {
        return false;
      }
    }
    return true;
  }

  private static boolean noLaterThan(Runs.LatenessRun own, Runs.LatenessRun book) {
    Lateness mine = own.lateness();
    Lateness theirs = book.lateness();
    if (mine.count() < own.expected()) {
      return false;
    }
    return theirs.count() == 0
        || (mine.percentile(50) <= theirs.percentile(50)
            && mine.percentile(99) <= theirs.percentile(99));
  }

  /** One table row. */
  static String row(Runs.LatenessRun run) {
    Lateness lateness = run.lateness();
    if (lateness.count() == 0) {
      return String.format("  %-9s nothing fired", Spread.number(run.rate(), 0));
    }
    return String.format(
        "  %-9s %-6.1f %-9s %-15s %-17s %-7d %-7d %-6d %-4d %-6.2f %-7.0f %-6d %-7.1f %s",
        Spread.number(run.rate(), 0),
        run.duration().toMillis() / 1000.0,
        Spread.number(lateness.count(), 0),
        withWindows(run, 50),
        withWindows(run, 99),
        lateness.percentile(99.9),
        lateness.max(),
        lateness.early() + run.earlyFires(),
        run.duplicates(),
        run.appCores(),
        run.commitsPerSecond(),
        run.firing().percentile(50),
        run.commitMs(),
        run.sustained()
            ? "yes"
            : run.shortened()
                ? "no: above (2), shortened"
                : lateness.count() < run.expected()
                    ? "no (" + (run.expected() - lateness.count()) + " missing)"
                    : "no");
  }

  private static String withWindows(Runs.LatenessRun run, double percent) {
    Spread windows = run.lateness().acrossWindows(percent, run.windows());
    return String.format(
        "%d [%.0f-%.0f]", run.lateness().percentile(percent), windows.min(), windows.max());
  }
}

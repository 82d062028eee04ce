package dev.kdelay.benchmarks;

import java.time.Duration;
import java.util.List;

/**
 * (3b) the first fires to a target topic the instance has never written to. The SPEC wants them as
 * timely as the rest: a producer that has never seen a topic must fetch its metadata before it can
 * send to it, and nothing of that may land on the fires.
 */
final class FirstFireSection {

  /** Fires per second of each run. */
  static final int RATE = 500;

  /** How long each run sends: 2,000 tasks at {@link #RATE}. */
  static final Duration DURATION = Duration.ofSeconds(4);

  /** The SPEC's lateness goal at p99, which the first fires must meet like any others. */
  static final long GOAL_P99_MS = LatenessSection.GOAL_P99_MS;

  private static final String LABEL = "  %-13s ";

  /** The run is cut into this many spans of due times; the first is "the first second". */
  private static final int SPANS = (int) DURATION.toSeconds();

  private final Settings settings;
  private final Runs.LatenessRun baseline;
  private final List<Runs.LatenessRun> runs;
  private final Yardstick plain;

  /**
   * The same runs by a plain transactional producer ({@link PlainFirer}), each new topic's right
   * after kdelay's.
   *
   * @param baseline its run to a topic with data, or null
   * @param runs its runs to new topics, one per kdelay run
   */
  record Yardstick(Runs.LatenessRun baseline, List<Runs.LatenessRun> runs) {}

  FirstFireSection(
      Settings settings, Runs.LatenessRun baseline, List<Runs.LatenessRun> runs, Yardstick plain) {
    this.settings = settings;
    this.baseline = baseline;
    this.runs = runs;
    this.plain = plain;
  }

  void write(Report report) {
    report.line(
        "(3b) first fires to a new target topic, on instance A: %,d tasks at %,d/s, each sent %,d"
            + " ms ahead,",
        RATE * DURATION.toSeconds(), RATE, settings.latenessLeadMs());
    report.line(
        "    to a topic created just before and never written to (a new one each run); first"
            + " one run to the topic A knows");
    if (runs.isEmpty()) {
      report.line("    not measured").blank();
      return;
    }
    report.text(String.format(LABEL, "") + LatenessSection.HEADER.substring(2));
    if (baseline != null) {
      report.text(labelled("known topic", baseline));
    }
    for (int run = 0; run < runs.size(); run++) {
      report.text(labelled("new topic " + (run + 1), runs.get(run)));
    }
    report.line(
        "  the first second of due times alone (the first fires), and the rest; fired: due ->"
            + " delay-fired-at, the part spent before the send on the stream thread:");
    if (baseline != null) {
      report.text(firstSecond("known topic", baseline));
    }
    for (int run = 0; run < runs.size(); run++) {
      report.text(firstSecond("new topic " + (run + 1), runs.get(run)));
    }
    writeYardstick(report);
    boolean met =
        runs.stream()
            .allMatch(
                run ->
                    run.lateness().count() == run.expected()
                        && run.lateness().percentile(99) <= GOAL_P99_MS);
    report
        .line(
            "  goal: the first fires as timely as the rest, p99 <= %d ms in every run: %s",
            GOAL_P99_MS, Report.verdict(met))
        .blank();
  }

  /**
   * The plain producer's rows, and kdelay's first second against its own, run for run: what a new
   * topic costs any client on this broker, and what kdelay adds to it.
   */
  private void writeYardstick(Report report) {
    if (plain.runs().isEmpty()) {
      return;
    }
    report.line(
        "  the same fires by a plain transactional producer (kdelay's producer settings, a commit"
            + " as soon as %d ms after the last), no kdelay:",
        PlainFirer.COMMIT_GAP_MS);
    if (plain.baseline() != null) {
      report.text(labelled("plain, known", plain.baseline()));
    }
    for (int run = 0; run < plain.runs().size(); run++) {
      report.text(labelled("plain, new " + (run + 1), plain.runs().get(run)));
    }
    if (plain.baseline() != null) {
      report.text(firstSecond("plain, known", plain.baseline()));
    }
    for (int run = 0; run < plain.runs().size(); run++) {
      report.text(firstSecond("plain, new " + (run + 1), plain.runs().get(run)));
    }
    report.line("  %s", againstPlain(runs, plain.runs()));
  }

  /**
   * kdelay's first-second p99 on each new topic beside the plain producer's on its own new topic in
   * the same round, and the largest difference.
   */
  static String againstPlain(List<Runs.LatenessRun> kdelay, List<Runs.LatenessRun> plain) {
    StringBuilder pairs = new StringBuilder();
    long worst = Long.MIN_VALUE;
    for (int run = 0; run < Math.min(kdelay.size(), plain.size()); run++) {
      if (kdelay.get(run).lateness().count() == 0 || plain.get(run).lateness().count() == 0) {
        continue;
      }
      long own = kdelay.get(run).lateness().windows(SPANS)[0].percentile(99);
      long yardstick = plain.get(run).lateness().windows(SPANS)[0].percentile(99);
      pairs.append(pairs.length() == 0 ? "" : ", ").append(own).append(" | ").append(yardstick);
      worst = Math.max(worst, own - yardstick);
    }
    if (pairs.length() == 0) {
      return "kdelay against the plain producer: nothing to compare";
    }
    return "first second on a new topic, p99 ms, kdelay | plain producer, run for run: "
        + pairs
        + "; kdelay adds at most "
        + worst
        + " ms";
  }

  static String firstSecond(String label, Runs.LatenessRun run) {
    if (run.lateness().count() == 0) {
      return String.format(LABEL, label) + "nothing fired";
    }
    Samples[] visible = run.lateness().windows(SPANS);
    Samples[] fired = run.firing().windows(SPANS);
    return String.format(LABEL, label)
        + String.format(
            "first second: p99 %d, max %d ms (fired: max %d); the rest: p99 %d, max %d ms"
                + " (fired: max %d)%s",
            visible[0].percentile(99),
            visible[0].max(),
            fired[0].max(),
            rest(visible).map(rest -> rest.percentile(99)).orElse(-1L),
            rest(visible).map(Samples::max).orElse(-1L),
            rest(fired).map(Samples::max).orElse(-1L),
            // The plain producer runs in the benchmark's JVM, whose JIT is not measured.
            run.compileMs() > 0
                ? String.format("; JIT at work %,d ms in the run", run.compileMs())
                : "");
  }

  /** The samples of every span but the first. */
  private static java.util.Optional<Samples> rest(Samples[] spans) {
    Samples rest = new Samples();
    for (int i = 1; i < spans.length; i++) {
      rest.addAll(spans[i]);
    }
    return rest.isEmpty() ? java.util.Optional.empty() : java.util.Optional.of(rest);
  }

  private static String labelled(String label, Runs.LatenessRun run) {
    return String.format(LABEL, label) + LatenessSection.row(run).substring(2);
  }
}

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

  FirstFireSection(Settings settings, Runs.LatenessRun baseline, List<Runs.LatenessRun> runs) {
    this.settings = settings;
    this.baseline = baseline;
    this.runs = runs;
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

  static String firstSecond(String label, Runs.LatenessRun run) {
    if (run.lateness().count() == 0) {
      return String.format(LABEL, label) + "nothing fired";
    }
    Samples[] visible = run.lateness().windows(SPANS);
    Samples[] fired = run.firing().windows(SPANS);
    return String.format(LABEL, label)
        + String.format(
            "first second: p99 %d, max %d ms (fired: max %d); the rest: p99 %d, max %d ms"
                + " (fired: max %d); JIT at work %,d ms in the run",
            visible[0].percentile(99),
            visible[0].max(),
            fired[0].max(),
            rest(visible).map(rest -> rest.percentile(99)).orElse(-1L),
            rest(visible).map(Samples::max).orElse(-1L),
            rest(fired).map(Samples::max).orElse(-1L),
            run.compileMs());
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

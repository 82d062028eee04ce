package dev.kdelay.benchmarks;

import java.util.List;

/** (4) many tasks due in the same millisecond. */
final class BurstSection {

  private final List<Runs.Burst> bursts;
  private final long leadMs;

  BurstSection(List<Runs.Burst> bursts, long leadMs) {
    this.bursts = bursts;
    this.leadMs = leadMs;
  }

  void write(Report report) {
    if (bursts.isEmpty()) {
      report.line("(4) burst: not measured").blank();
      return;
    }
    int tasks = bursts.get(0).tasks();
    long intakeInTime = bursts.stream().filter(Runs.Burst::intakeBeforeDue).count();
    long early = bursts.stream().mapToLong(Runs.Burst::early).sum();
    long missing = bursts.stream().mapToLong(burst -> burst.tasks() - burst.seen()).sum();
    long duplicates = bursts.stream().mapToLong(Runs.Burst::duplicates).sum();
    Spread drain = Report.spread(bursts, Runs.Burst::drainPerSecond);
    report
        .line(
            "(4) burst on instance A: %,d tasks due in the same millisecond, sent %,d ms ahead; %d"
                + " runs",
            tasks, leadMs, bursts.size())
        .line(
            "  intake, first send -> all committed   %s s (complete before the due time in %d of"
                + " %d runs)",
            Report.spread(bursts, burst -> burst.intake().toMillis() / 1000.0).format(1),
            intakeInTime,
            bursts.size())
        .line(
            "  due -> first visible                  %s ms",
            Report.spread(bursts, Runs.Burst::firstAfterDueMs).format(0))
        .line(
            "  due -> visible, p50                   %s ms",
            Report.spread(bursts, Runs.Burst::p50Ms).format(0))
        .line(
            "  due -> visible, p99                   %s ms",
            Report.spread(bursts, Runs.Burst::p99Ms).format(0))
        .line(
            "  due -> last visible                   %s ms",
            Report.spread(bursts, Runs.Burst::lastAfterDueMs).format(0))
        .line("  drain rate, due -> last visible       %s fires/s", drain.format(0))
        .line(
            "  early %d, missing %d, duplicates %d; goal: all fired, none early: %s",
            early, missing, duplicates, Report.verdict(early == 0 && missing == 0))
        .blank();
  }
}

package dev.kdelay.benchmarks;

import java.util.Comparator;
import java.util.List;

/** (4) many tasks due in the same millisecond. */
final class BurstSection {

  private final List<Runs.Burst> bursts;
  private final long leadMs;
  private final List<Runs.Burst> fresh;

  BurstSection(List<Runs.Burst> bursts, long leadMs, List<Runs.Burst> fresh) {
    this.bursts = bursts;
    this.leadMs = leadMs;
    this.fresh = fresh;
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
        .line("  commits of the median run (p50)       %s", steps(bursts))
        .line("  during the drain                      %s", drainWork(bursts))
        .line(
            "  early %d, missing %d, duplicates %d; goal: all fired, none early: %s",
            early, missing, duplicates, Report.verdict(early == 0 && missing == 0))
        .blank();
    writeFresh(report);
  }

  /** The most commits a report line shows. */
  private static final int MAX_STEPS_SHOWN = 6;

  /**
   * The run with the median p50, as its commits became visible: for each, the tasks it carried,
   * when the last of them was fired and when they became visible, in ms after the due time. The gap
   * between fired and visible is the commit; between one commit's visibility and the next's last
   * fire, the stream thread firing.
   */
  static String steps(List<Runs.Burst> runs) {
    List<Runs.Burst> byP50 =
        runs.stream().sorted(Comparator.comparingLong(Runs.Burst::p50Ms)).toList();
    List<Observation.Step> steps = byP50.get((byP50.size() - 1) / 2).steps();
    StringBuilder line = new StringBuilder("tasks: fired by -> visible at, ms after due:");
    for (int i = 0; i < Math.min(steps.size(), MAX_STEPS_SHOWN); i++) {
      Observation.Step step = steps.get(i);
      line.append(
          String.format(" %,d: %,d -> %,d;", step.records(), step.firedByMs(), step.visibleAtMs()));
    }
    if (steps.size() > MAX_STEPS_SHOWN) {
      line.append(String.format(" %d more", steps.size() - MAX_STEPS_SHOWN));
    }
    return line.toString();
  }

  /**
   * What the instance did from just before the due time until the last task was visible: its stream
   * threads' CPU time and the time its JIT compilers were at work, in ms. On two cores, a compiler
   * busy during a burst takes CPU from the stream thread, the producer and the broker.
   */
  static String drainWork(List<Runs.Burst> runs) {
    return String.format(
        "stream threads' CPU %s ms, JIT compiling %s ms",
        Report.spread(runs, burst -> burst.drain().streamThreadCpuNanos() / 1e6).format(0),
        Report.spread(runs, burst -> (double) burst.drain().compileMillis()).format(0));
  }

  /** (4b): the same on instances that had just become ready, one per run. */
  private void writeFresh(Report report) {
    if (fresh.isEmpty()) {
      return;
    }
    Spread p50 = Report.spread(fresh, Runs.Burst::p50Ms);
    Spread p99 = Report.spread(fresh, Runs.Burst::p99Ms);
    long wrong =
        fresh.stream()
            .mapToLong(burst -> burst.early() + burst.duplicates() + burst.tasks() - burst.seen())
            .sum();
    report
        .line(
            "(4b) burst on a fresh instance: %,d tasks due in the same millisecond, sent %,d ms"
                + " ahead to an instance that had just become ready (a new one each run); %d runs",
            fresh.get(0).tasks(), Benchmark.FRESH_BURST_LEAD_MS, fresh.size())
        .line(
            "  due -> first visible                  %s ms",
            Report.spread(fresh, Runs.Burst::firstAfterDueMs).format(0))
        .line("  due -> visible, p50                   %s ms", p50.format(0))
        .line("  due -> visible, p99                   %s ms", p99.format(0))
        .line(
            "  due -> last visible                   %s ms",
            Report.spread(fresh, Runs.Burst::lastAfterDueMs).format(0))
        .line("  commits of the median run (p50)       %s", steps(fresh))
        .line("  during the drain                      %s", drainWork(fresh))
        .line(
            "  early, missing or duplicated %d; goal: all once, p50 <= 250 ms, p99 <= 500 ms"
                + " (medians): %s",
            wrong, Report.verdict(wrong == 0 && p50.median() <= 250 && p99.median() <= 500))
        .blank();
  }
}

package dev.kdelay.benchmarks;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.ToLongFunction;
import java.util.stream.Stream;

/** (5) an instance filled with pending tasks against the empty one. */
final class CapacitySection {

  /** The SPEC's goals: throughput and lateness within 20%, heap under 512 MiB. */
  static final double GOAL_SHARE = 0.2;

  static final long GOAL_HEAP_BYTES = 512L * 1024 * 1024;

  /** Lateness differences below this are within the millisecond clock's noise. */
  static final long LATENESS_NOISE_MS = 5;

  private final Settings settings;
  private final int tasks;
  private final Duration fill;
  private final List<Runs.Throughput> empty;
  private final List<Runs.Throughput> filled;
  private final List<Runs.LatenessRun> emptyLateness;
  private final List<Runs.LatenessRun> filledLateness;
  private Results.Memory emptyMemory;
  private Results.Memory filledMemory;
  private long changelogRecords = -1;
  private List<Runs.Restore> restores = List.of();
  private long emptyStartupMs = -1;
  private Runs.Move move;
  private long changelogBytes = -1;

  CapacitySection(
      Settings settings,
      int tasks,
      Duration fill,
      List<Runs.Throughput> empty,
      List<Runs.Throughput> filled,
      List<Runs.LatenessRun> fixed,
      List<Runs.LatenessRun> search,
      List<Runs.LatenessRun> filledLateness) {
    this.settings = settings;
    this.tasks = tasks;
    this.fill = fill;
    this.empty = empty;
    this.filled = filled;
    this.emptyLateness = Stream.concat(fixed.stream(), search.stream()).toList();
    this.filledLateness = filledLateness;
  }

  CapacitySection memory(Results.Memory empty, Results.Memory filled) {
    this.emptyMemory = empty;
    this.filledMemory = filled;
    return this;
  }

  CapacitySection restore(long records, List<Runs.Restore> restores, long emptyStartupMs) {
    this.changelogRecords = records;
    this.restores = List.copyOf(restores);
    this.emptyStartupMs = emptyStartupMs;
    return this;
  }

  CapacitySection changelogBytes(long bytes) {
    this.changelogBytes = bytes;
    return this;
  }

  CapacitySection move(Runs.Move move) {
    this.move = move;
    return this;
  }

  void write(Report report) {
    if (fill == null) {
      report.line("(5) capacity: not measured").blank();
      return;
    }
    report
        .line(
            "(5) capacity: instance B filled with %,d pending tasks due 1 to 8 days ahead, against"
                + " the empty instance A",
            tasks)
        .line(
            "  fill (intake only)     %,d requests in %.1f s = %,.0f requests/s",
            tasks, fill.toMillis() / 1000.0, tasks * 1000.0 / Math.max(1, fill.toMillis()));
    throughput(report);
    lateness(report);
    memory(report);
    restore(report);
    move(report);
    report.blank();
  }

  private void throughput(Report report) {
    if (filled.isEmpty()) {
      return;
    }
    Spread ratio = Report.ratios(filled, empty, Runs.Throughput::perSecond);
    report.line(
        "  throughput (2)         A %s/s, B %s/s, B/A %s (runs interleaved); goal B/A >= %.1f: %s",
        Report.spread(empty, Runs.Throughput::perSecond).format(0),
        Report.spread(filled, Runs.Throughput::perSecond).format(0),
        ratio.format(2),
        1 - GOAL_SHARE,
        Report.verdict(ratio.median() >= 1 - GOAL_SHARE));
  }

  private void lateness(Report report) {
    if (filledLateness.isEmpty()) {
      return;
    }
    report
        .line(
            "  lateness (3) on B, %d s per rate; B/A compares with A's run at the same rate in (3)",
            settings.capacityLatenessDuration().toSeconds())
        .text(LatenessSection.HEADER + "   B/A p50   B/A p99   within 20%");
    for (Runs.LatenessRun b : filledLateness) {
      Optional<Runs.LatenessRun> a =
          emptyLateness.stream().filter(run -> run.rate() == b.rate()).findFirst();
      String comparison =
          a.filter(run -> run.lateness().count() > 0 && b.lateness().count() > 0)
              .map(run -> compare(run.lateness(), b.lateness()))
              .orElse("");
      report.text(LatenessSection.row(b) + comparison);
    }
    report.line(
        "    (within 20%%: B's p50 and p99 at most 1.2 x A's, or at most %d ms above)",
        LATENESS_NOISE_MS);
  }

  private static String compare(Lateness a, Lateness b) {
    boolean within =
        close(a.percentile(50), b.percentile(50)) && close(a.percentile(99), b.percentile(99));
    return String.format(
        "   %-9s %-9s %s",
        ratio(b.percentile(50), a.percentile(50)),
        ratio(b.percentile(99), a.percentile(99)),
        within ? "yes" : "NO");
  }

  private static boolean close(long a, long b) {
    return b <= a * (1 + GOAL_SHARE) || b - a <= LATENESS_NOISE_MS;
  }

  private static String ratio(long b, long a) {
    return a <= 0 ? "n/a" : String.format("%.2f", (double) b / a);
  }

  private void memory(Report report) {
    if (filledMemory == null) {
      return;
    }
    report
        .line("  %-22s %-14s %-14s", "memory", "A (empty)", "B (filled)")
        .line(
            "  %-22s %-14s %-14s goal B < %s: %s",
            "heap after full GC",
            Report.bytes(emptyMemory.heapAfterGc()),
            Report.bytes(filledMemory.heapAfterGc()),
            Report.bytes(GOAL_HEAP_BYTES),
            Report.verdict(filledMemory.heapAfterGc() < GOAL_HEAP_BYTES))
        .line(
            "  %-22s %-14s %-14s",
            "process RSS",
            Report.bytes(emptyMemory.resident()),
            Report.bytes(filledMemory.resident()))
        .line(
            "  %-22s %-14s %-14s",
            "state directory",
            Report.bytes(emptyMemory.stateDir()),
            Report.bytes(filledMemory.stateDir()));
  }

  private void restore(Report report) {
    if (restores.isEmpty()) {
      return;
    }
    Spread running = seconds(Runs.Restore::runningMs);
    long restoring = Math.max(1, (long) (running.median() * 1000) - emptyStartupMs);
    report
        .line(
            "  restore                a fresh instance of B (empty state directory) reached"
                + " RUNNING in %s s (%d %s),",
            running.format(1),
            restores.size(),
            restores.size() == 1 ? "run" : "runs, each a new instance")
        .line(
            "                         %,d changelog records (entries and markers); an empty"
                + " instance starts in %.1f s,",
            changelogRecords, emptyStartupMs / 1000.0)
        .line(
            "                         so about %,.0f records/s restored (median);",
            changelogRecords * 1000.0 / restoring)
        .line(
            "                         the changelog takes %s on the broker, %,.0f bytes a record"
                + " (one replica, before compaction);",
            Report.bytes(changelogBytes), changelogBytes / (double) Math.max(1, changelogRecords))
        .line(
            "                         CPU until RUNNING %s s; then more than half a core busy for"
                + " %s s, %s CPU-s",
            seconds(Runs.Restore::cpuMs).format(1),
            seconds(Runs.Restore::busyMs).format(1),
            seconds(Runs.Restore::busyCpuMs).format(1));
  }

  private void move(Report report) {
    if (move == null) {
      return;
    }
    report.line(
        "  move                   kdelay move of B, stopped, to a new requests topic of %d"
            + " partitions: %,d ids in %.1f s = %,.0f ids/s (%,d a transaction)",
        move.partitions(),
        move.ids(),
        move.ms() / 1000.0,
        move.ids() * 1000.0 / Math.max(1, move.ms()),
        move.batch());
  }

  private Spread seconds(ToLongFunction<Runs.Restore> ms) {
    return Spread.of(restores.stream().mapToDouble(r -> ms.applyAsLong(r) / 1000.0).toArray());
  }
}

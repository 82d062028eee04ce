package dev.kdelay.benchmarks;

import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * The sizes and durations of a benchmark run.
 *
 * <p>Runs against kdelay are sized by its measured throughput as well, so that a slow build still
 * finishes in the mode's time: a run that would take longer than {@code runBudget} is shortened,
 * and the report says so.
 *
 * @param mode {@code quick} or {@code full}
 * @param runs repetitions of each throughput and burst figure (median and range are reported)
 * @param throughputRecords records per throughput run, for the ceiling and for kdelay
 * @param throughputDelayMs the delay of each request in a kdelay throughput run
 * @param latenessDuration how long each lateness run sends (and so fires) at its rate
 * @param latenessLeadMs how far ahead of its due time each request is sent
 * @param latenessWindows windows of a lateness run, for its spread and its trend
 * @param fixedRates the fixed fires/s of the lateness runs; the highest sustainable one is found
 * @param maxRateAttempts how many rates the search for the highest sustainable one tries
 * @param rateStep factor between successive attempts, from 0.9 x the measured throughput down
 * @param burstTasks tasks due in the same millisecond
 * @param capacityTasks pending tasks the capacity instance is filled with
 * @param capacityLatenessDuration how long each lateness run on the filled instance sends
 * @param runBudget the longest a kdelay throughput run, or the backlog of a lateness run at a rate
 *     above kdelay's throughput, may take at the measured throughput
 * @param fillBudget the longest filling the capacity instance may take at the intake rate the
 *     bursts measured
 * @param parts the parts to run, of {@link #PARTS}
 */
record Settings(
    String mode,
    int runs,
    int throughputRecords,
    long throughputDelayMs,
    Duration latenessDuration,
    long latenessLeadMs,
    int latenessWindows,
    List<Integer> fixedRates,
    int maxRateAttempts,
    double rateStep,
    int burstTasks,
    int capacityTasks,
    Duration capacityLatenessDuration,
    Duration runBudget,
    Duration fillBudget,
    Set<String> parts) {

  /** The benchmark's parts, in the order they run. */
  static final List<String> PARTS =
      List.of("throughput", "lateness", "first-fire", "burst", "capacity");

  /** The part that needs no sizing by kdelay's throughput: its runs have a fixed size. */
  static final String FIRST_FIRE = "first-fire";

  /** A few minutes on a 2-core machine. */
  static Settings quick() {
    return new Settings(
        "quick",
        3,
        100_000,
        2_000,
        // 20 s at 5,000/s: 100,000 tasks right after the throughput runs, so a stall of a second
        // or two after heavy runs (a slow transaction completion, the broker's cleaner) shows in
        // p99 and in the spread of the run's windows.
        Duration.ofSeconds(20),
        3_000,
        2,
        List.of(1_000, 5_000),
        3,
        0.8,
        100_000,
        200_000,
        Duration.ofSeconds(10),
        Duration.ofSeconds(10),
        Duration.ofSeconds(30),
        Set.copyOf(PARTS));
  }

  /** The figures the performance goals are judged by; about 25 minutes on a 2-core machine. */
  static Settings full() {
    return new Settings(
        "full",
        5,
        500_000,
        3_000,
        Duration.ofSeconds(60),
        3_000,
        6,
        List.of(1_000, 5_000),
        5,
        0.85,
        100_000,
        10_000_000,
        Duration.ofSeconds(30),
        Duration.ofSeconds(60),
        Duration.ofMinutes(20),
        Set.copyOf(PARTS));
  }

  /** Whether a part runs. */
  boolean runs(String part) {
    return parts.contains(part);
  }

  /**
   * Whether a part that is sized by kdelay's measured throughput runs, so that the ceiling and the
   * calibration must run first: every part but {@value #FIRST_FIRE}.
   */
  boolean sizesByThroughput() {
    return parts.stream().anyMatch(part -> !part.equals(FIRST_FIRE));
  }

  /** Records per kdelay throughput run: as many as the ceiling's, unless that busts the budget. */
  int kdelayRecords(double kdelayPerSecond) {
    long affordable = (long) (kdelayPerSecond * runBudget.toSeconds());
    return (int)
        Math.max(Math.min(throughputRecords, 500), Math.min(throughputRecords, affordable));
  }

  /**
   * The delay of kdelay's throughput requests when its runs have {@code records}: the configured
   * one, but none when the runs were cut short, since so few requests may all be taken in before
   * the first is due, and then the run measures the delay instead of kdelay.
   */
  long kdelayDelayMs(int records) {
    return records < throughputRecords ? 0 : throughputDelayMs;
  }

  /**
   * How long a lateness run at {@code rate} sends: the full duration, unless the rate is above half
   * kdelay's throughput (paced firing batches less than a backlog does, so it may drain at half the
   * rate) and the backlog would take longer than the budget to drain.
   */
  Duration latenessDuration(Duration full, int rate, double kdelayPerSecond) {
    double drain = kdelayPerSecond / 2;
    if (rate <= drain) {
      return full;
    }
    double seconds = runBudget.toSeconds() * drain / (rate - drain);
    return Duration.ofMillis(Math.min(full.toMillis(), Math.max(1_000, (long) (seconds * 1000))));
  }

  /**
   * Pending tasks for the capacity part: {@link #capacityTasks}, unless intake busts the budget.
   */
  int capacityTasks(double intakePerSecond) {
    long affordable = (long) (intakePerSecond * fillBudget.toSeconds());
    return (int) Math.max(Math.min(capacityTasks, 10_000), Math.min(capacityTasks, affordable));
  }

  /** These settings with another number of runs per figure. */
  Settings withRuns(int count) {
    return with(count, throughputRecords, burstTasks, capacityTasks, parts, latenessLeadMs);
  }

  /** These settings with another number of records per throughput run. */
  Settings withThroughputRecords(int records) {
    return with(runs, records, burstTasks, capacityTasks, parts, latenessLeadMs);
  }

  /**
   * These settings with another lead: how far ahead of its due time each request of the lateness
   * and first-fire runs is sent. A short lead shows what intake adds (a request must be stored
   * before it is due).
   */
  Settings withLatenessLeadMs(long leadMs) {
    return with(runs, throughputRecords, burstTasks, capacityTasks, parts, leadMs);
  }

  /** These settings with another number of tasks per burst. */
  Settings withBurstTasks(int tasks) {
    return with(runs, throughputRecords, tasks, capacityTasks, parts, latenessLeadMs);
  }

  /** These settings with another number of pending tasks for the capacity part. */
  Settings withCapacityTasks(int tasks) {
    return with(runs, throughputRecords, burstTasks, tasks, parts, latenessLeadMs);
  }

  /**
   * These settings running only some parts.
   *
   * @throws IllegalArgumentException if a part is unknown
   */
  Settings withParts(Set<String> only) {
    for (String part : only) {
      if (!PARTS.contains(part)) {
        throw new IllegalArgumentException("unknown part " + part + "; parts are " + PARTS);
      }
    }
    return with(
        runs, throughputRecords, burstTasks, capacityTasks, Set.copyOf(only), latenessLeadMs);
  }

  /** These settings with the fields the command line can override replaced. */
  private Settings with(
      int runs,
      int throughputRecords,
      int burstTasks,
      int capacityTasks,
      Set<String> parts,
      long latenessLeadMs) {
    return new Settings(
        mode,
        runs,
        throughputRecords,
        throughputDelayMs,
        latenessDuration,
        latenessLeadMs,
        latenessWindows,
        fixedRates,
        maxRateAttempts,
        rateStep,
        burstTasks,
        capacityTasks,
        capacityLatenessDuration,
        runBudget,
        fillBudget,
        parts);
  }
}

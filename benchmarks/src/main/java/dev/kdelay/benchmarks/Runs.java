package dev.kdelay.benchmarks;

import java.time.Duration;
import java.util.List;

/** Results of single runs; the report aggregates several. */
final class Runs {

  private Runs() {}

  /**
   * One throughput run: records sent as fast as the producer goes, then the time from the first
   * send until the last record is visible to a {@code read_committed} consumer.
   *
   * @param perSecond records end to end per second
   * @param sendSeconds how long the producer took to send them all (it is not the bottleneck when
   *     this is well below the run's length)
   * @param appCpuMsPerThousand CPU milliseconds the application used per 1,000 records
   * @param brokerCpuMsPerThousand CPU milliseconds the broker used per 1,000 records
   * @param seen distinct records visible
   * @param duplicates records visible twice
   * @param durationMs from the first send until the last record was visible
   * @param counters what the application's Kafka Streams did meanwhile
   */
  record Throughput(
      double perSecond,
      double sendSeconds,
      double appCpuMsPerThousand,
      double brokerCpuMsPerThousand,
      int seen,
      int duplicates,
      long durationMs,
      StreamsCounters counters) {

    /**
     * Records the application took in: those its stream threads processed, or where it reports
     * none, those seen. A run watched for a limited time saw only some of them come out, and its
     * CPU went to taking in the rest too.
     */
    static long takenIn(StreamsCounters counters, int seen) {
      return Math.max(1, counters.processed() > 0 ? counters.processed() : seen);
    }

    /** CPU milliseconds of the application's stream threads per 1,000 records taken in. */
    double streamThreadCpuMsPerThousand() {
      return counters.streamThreadCpuNanos() / 1e6 * 1000 / takenIn(counters, seen);
    }

    /** Records per committed transaction. */
    double recordsPerCommit() {
      return seen / (double) Math.max(1, counters.commits());
    }

    /** Records the application produced (output and changelogs) per record. */
    double sendsPerRecord() {
      return counters.sends() / (double) Math.max(1, seen);
    }

    /** The share of the run the stream thread spent in the producer's flush and in commits. */
    double commitShare() {
      return (counters.flushNanos() + counters.commitNanos()) / 1e6 / Math.max(1, durationMs);
    }
  }

  /**
   * One lateness run: requests sent at a rate, each a lead time ahead of its due time, due times
   * spread evenly at that rate.
   *
   * @param rate the target fires per second
   * @param lateness due-to-visible lateness of every fired record
   * @param firing due-to-fired lateness ({@code delay-fired-at}) of every fired record
   * @param earlyFires records fired before their due time
   * @param expected records due in the run
   * @param duplicates records visible twice
   * @param appCores the application's CPU use, in cores, while the run lasted
   * @param windows windows for the spread and the trend
   * @param duration how long requests were sent at the rate
   * @param commitsPerSecond transactions the application committed per second of the run
   * @param commitMs the stream threads' time per commit: the producer's flush and the commit
   * @param compileMs how long the application's JIT compilers were at work during the run
   * @param shortened whether the run sent for less than its duration, its rate being above what
   *     kdelay's throughput could drain in the budget: such a run is never called sustained
   */
  record LatenessRun(
      int rate,
      Lateness lateness,
      Lateness firing,
      int earlyFires,
      int expected,
      int duplicates,
      double appCores,
      int windows,
      Duration duration,
      double commitsPerSecond,
      double commitMs,
      long compileMs,
      boolean shortened) {

    /** Lateness above this at p99 means the instance does not keep up. */
    static final long SUSTAINED_P99_MS = 1_000;

    /** Growth of the median from the first to the last window that means it falls behind. */
    static final long SUSTAINED_GROWTH_MS = 100;

    /** A run of {@code expected} records at {@code rate}, of which the probe saw {@code seen}. */
    static LatenessRun of(
        Observation seen,
        int rate,
        int expected,
        double appCores,
        int windows,
        Duration duration,
        double commitsPerSecond,
        double commitMs,
        long compileMs,
        boolean shortened) {
      return new LatenessRun(
          rate,
          seen.lateness(),
          seen.firingLateness(),
          seen.earlyFires(),
          expected,
          seen.duplicates(),
          appCores,
          windows,
          duration,
          commitsPerSecond,
          commitMs,
          compileMs,
          shortened);
    }

    /**
     * Whether the instance kept up: every task fired, p99 within {@value #SUSTAINED_P99_MS} ms, and
     * the median of the last window at most {@value #SUSTAINED_GROWTH_MS} ms above the first's.
     */
    boolean sustained() {
      if (shortened || lateness.count() < expected) {
        return false;
      }
      Samples[] w = lateness.windows(windows);
      return lateness.percentile(99) <= SUSTAINED_P99_MS
          && w[w.length - 1].percentile(50) - w[0].percentile(50) <= SUSTAINED_GROWTH_MS;
    }
  }

  /**
   * One burst: tasks all due in the same millisecond.
   *
   * @param tasks how many
   * @param intake how long the instance took to take them all in (before the due time, or the burst
   *     measures intake too)
   * @param intakeBeforeDue whether the intake was complete at the due time
   * @param firstAfterDueMs from the due time until the first was visible
   * @param lastAfterDueMs from the due time until the last was visible
   * @param seen distinct tasks visible
   * @param early tasks visible or fired before the due time
   * @param duplicates tasks visible twice
   * @param steps how the tasks became visible, one step per commit as the probe saw them
   * @param drain what the instance did from just before the due time until the last was visible:
   *     its stream threads' CPU time and its JIT compilers' time among the rest
   */
  record Burst(
      int tasks,
      Duration intake,
      boolean intakeBeforeDue,
      long firstAfterDueMs,
      long lastAfterDueMs,
      long p50Ms,
      long p99Ms,
      int seen,
      int early,
      int duplicates,
      List<Observation.Step> steps,
      StreamsCounters drain) {

    /** Tasks fired per second, from the due time until the last was visible. */
    double drainPerSecond() {
      return tasks * 1000.0 / Math.max(1, lastAfterDueMs);
    }
  }

  /**
   * One fresh instance's restore of the filled instance's changelog.
   *
   * @param runningMs from launch to RUNNING
   * @param cpuMs the instance's CPU time until RUNNING, every thread's, RocksDB's included
   * @param busyMs how long after RUNNING the instance went on using more than half a core: the
   *     compactions a restore holds back run then
   * @param busyCpuMs its CPU time in that while
   */
  record Restore(long runningMs, long cpuMs, long busyMs, long busyCpuMs) {}

  /**
   * {@code kdelay move} of the filled instance's schedules, stopped, to a new requests topic.
   *
   * @param ids the ids moved (schedules and markers)
   * @param partitions the new topic's partition count
   * @param batch ids per transaction
   * @param ms how long the move took, from start to its last commit
   */
  record Move(long ids, int partitions, int batch, long ms) {}
}

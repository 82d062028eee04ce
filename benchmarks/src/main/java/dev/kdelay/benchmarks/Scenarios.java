package dev.kdelay.benchmarks;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The measurements, one run each: throughput end to end, lateness at a rate, a burst, filling an
 * instance. Every run has a tag of its own in its keys, so that nothing of an earlier run is
 * counted, and every run checks exactly-once: each record seen once, none missing.
 */
final class Scenarios {

  private static final Duration DRAIN_TIMEOUT = Duration.ofMinutes(10);
  private static final long LAG_POLL_MS = 100;

  /**
   * A burst's records that became visible with no pause this long between them count as one step
   * (one commit): the probe fetches a transaction's records within a few milliseconds.
   */
  private static final long STEP_GAP_MS = 10;

  /** How long before a burst's due time its instance's counters are read. */
  private static final long DRAIN_READ_AHEAD_MS = 50;

  private final Testbed testbed;
  private final AtomicInteger runs = new AtomicInteger();

  Scenarios(Testbed testbed) {
    this.testbed = testbed;
  }

  /**
   * Sends {@code records} as fast as the producer goes to the application's input and times them
   * until the last is visible in {@code visibleIn}. For kdelay each is due {@code delayMs} after it
   * is sent, so intake and firing overlap; the pass-through forwards the same records.
   */
  Runs.Throughput throughput(App app, String visibleIn, int records, long delayMs) {
    return throughput(app, visibleIn, records, delayMs, DRAIN_TIMEOUT);
  }

  /**
   * As {@link #throughput(App, String, int, long)}, but stops watching after {@code limit}: the
   * rate is then what was visible by that time, and the application still has a backlog.
   */
  Runs.Throughput throughput(App app, String visibleIn, int records, long delayMs, Duration limit) {
    String tag = nextTag();
    ChildJvm broker = testbed.broker();
    try (Watch watch = testbed.probe().watch(visibleIn, tag, records)) {
      StreamsCounters before = app.counters();
      Duration appCpu = app.jvm().cpuTime();
      Duration brokerCpu = broker.cpuTime();
      RequestProducer.Sent sent =
          testbed
              .producer()
              .send(app.input(), visibleIn, tag, records, (i, now) -> now + delayMs, 0);
      Observation seen = watch.await(limit);
      double appMs = app.jvm().cpuTime().minus(appCpu).toNanos() / 1e6;
      double brokerMs = broker.cpuTime().minus(brokerCpu).toNanos() / 1e6;
      StreamsCounters counters = app.counters().since(before);
      long end = seen.complete() ? seen.lastVisibleMs() : System.currentTimeMillis();
      long durationMs = Math.max(1, end - sent.firstSendMs());
      long done = Runs.Throughput.takenIn(counters, seen.seen());
      return new Runs.Throughput(
          seen.seen() * 1000.0 / durationMs,
          (sent.lastSendMs() - sent.firstSendMs()) / 1000.0,
          appMs * 1000 / done,
          brokerMs * 1000 / done,
          seen.seen(),
          seen.duplicates(),
          durationMs,
          counters);
    }
  }

  /**
   * Sends requests at {@code rate} per second for {@code duration}, each {@code leadMs} ahead of
   * its due time, due times spread evenly at the rate, and records when each fired record becomes
   * visible.
   */
  Runs.LatenessRun lateness(
      App app,
      String firedTopic,
      int rate,
      Duration duration,
      boolean shortened,
      long leadMs,
      int windows) {
    String tag = nextTag();
    int count = (int) (rate * duration.toMillis() / 1000);
    try (Watch watch = testbed.probe().watch(firedTopic, tag, count)) {
      StreamsCounters before = app.counters();
      long startMs = System.currentTimeMillis();
      long firstDue = startMs + leadMs;
      Duration appCpu = app.jvm().cpuTime();
      testbed
          .producer()
          .send(
              app.input(),
              firedTopic,
              tag,
              count,
              (i, now) -> firstDue + (long) (i * 1000.0 / rate),
              rate);
      Observation seen = watch.await(duration.plus(Duration.ofMillis(leadMs)).plus(DRAIN_TIMEOUT));
      long elapsedMs = Math.max(1, System.currentTimeMillis() - startMs);
      double cores = app.jvm().cpuTime().minus(appCpu).toNanos() / 1e6 / elapsedMs;
      StreamsCounters counters = app.counters().since(before);
      double commitsPerSecond = counters.commits() * 1000.0 / elapsedMs;
      // The stream thread's time per commit: the producer's flush, then the transaction's commit.
      double commitMs =
          (counters.flushNanos() + counters.commitNanos()) / 1e6 / Math.max(1, counters.commits());
      return Runs.LatenessRun.of(
          seen,
          rate,
          count,
          cores,
          windows,
          duration,
          commitsPerSecond,
          commitMs,
          counters.compileMillis(),
          shortened);
    }
  }

  /**
   * The same run as {@link #lateness} without kdelay: {@code firer} writes each record when it is
   * due, as kdelay would fire it. The JVM's CPU and the JIT are not measured (0): the firer runs in
   * this JVM.
   */
  Runs.LatenessRun plainLateness(
      PlainFirer firer, String topic, int rate, Duration duration, long leadMs, int windows) {
    String tag = nextTag();
    int count = (int) (rate * duration.toMillis() / 1000);
    try (Watch watch = testbed.probe().watch(topic, tag, count)) {
      long startMs = System.currentTimeMillis();
      PlainFirer.Commits commits = firer.fire(topic, tag, count, rate, leadMs);
      Observation seen = watch.await(DRAIN_TIMEOUT);
      long elapsedMs = Math.max(1, System.currentTimeMillis() - startMs);
      return Runs.LatenessRun.of(
          seen,
          rate,
          count,
          0,
          windows,
          duration,
          commits.count() * 1000.0 / elapsedMs,
          commits.nanos() / 1e6 / Math.max(1, commits.count()),
          0,
          false);
    }
  }

  /**
   * Sends {@code tasks} requests all due in the same millisecond, {@code leadMs} ahead, and times
   * them until the last fired one is visible.
   */
  Runs.Burst burst(App app, String firedTopic, int tasks, long leadMs) {
    String tag = nextTag();
    try (Watch watch = testbed.probe().watch(firedTopic, tag, tasks)) {
      long dueMs = System.currentTimeMillis() + leadMs;
      RequestProducer.Sent sent =
          testbed.producer().send(app.input(), firedTopic, tag, tasks, (i, now) -> dueMs, 0);
      Duration intake = awaitCaughtUp(app, sent.firstSendMs());
      boolean intakeBeforeDue = sent.firstSendMs() + intake.toMillis() <= dueMs;
      // Read just before the due time, so that the drain's figures leave out the intake and the
      // idle time after it, and the reading itself does not take CPU from the first fires.
      sleep(Math.max(0, dueMs - DRAIN_READ_AHEAD_MS - System.currentTimeMillis()));
      StreamsCounters beforeDue = app.counters();
      Observation seen = watch.await(DRAIN_TIMEOUT.plus(Duration.ofMillis(leadMs)));
      StreamsCounters drain = app.counters().since(beforeDue);
      Lateness lateness = seen.lateness();
      return new Runs.Burst(
          tasks,
          intake,
          intakeBeforeDue,
          seen.firstVisibleMs() - dueMs,
          seen.lastVisibleMs() - dueMs,
          lateness.percentile(50),
          lateness.percentile(99),
          seen.seen(),
          lateness.early() + seen.earlyFires(),
          seen.duplicates(),
          seen.steps(STEP_GAP_MS),
          drain);
    }
  }

  /**
   * Fills an instance with {@code tasks} pending tasks due between one and eight days from now,
   * spread evenly, and waits until it has taken them all in.
   *
   * @return how long from the first send until the instance had committed them all
   */
  Duration fill(App app, String target, int tasks) {
    String tag = nextTag();
    long firstDue = System.currentTimeMillis() + Duration.ofDays(1).toMillis();
    double spacingMs = Duration.ofDays(7).toMillis() / (double) tasks;
    RequestProducer.Sent sent =
        testbed
            .producer()
            .send(
                app.input(), target, tag, tasks, (i, now) -> firstDue + (long) (i * spacingMs), 0);
    return awaitCaughtUp(app, sent.firstSendMs());
  }

  /** Waits until the application has committed every request; the time since {@code sinceMs}. */
  private Duration awaitCaughtUp(App app, long sinceMs) {
    long deadline = System.currentTimeMillis() + DRAIN_TIMEOUT.toMillis() * 6;
    while (testbed.lag(app) > 0) {
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException(app.jvm().name() + " did not catch up with its requests");
      }
      sleep(LAG_POLL_MS);
    }
    return Duration.ofMillis(System.currentTimeMillis() - sinceMs);
  }

  /** Measures the application's CPU use while nothing is sent, in cores. */
  double idleCores(App app, Duration window) {
    Duration before = app.jvm().cpuTime();
    sleep(window.toMillis());
    return app.jvm().cpuTime().minus(before).toNanos() / 1e6 / window.toMillis();
  }

  private String nextTag() {
    return "r" + runs.incrementAndGet();
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}

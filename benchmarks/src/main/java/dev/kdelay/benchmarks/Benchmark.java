package dev.kdelay.benchmarks;

import dev.kdelay.service.broker.BrokerProfile;
import dev.kdelay.service.move.DeploymentMove;
import dev.kdelay.topology.ScheduleMove;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.AdminClientConfig;

/**
 * How close kdelay comes to the limit of Kafka itself, measured against a pass-through Kafka
 * Streams topology on the same broker and machine in the same run.
 *
 * <p>The broker (kdelay's embedded KRaft broker) and each application under test run in JVMs of
 * their own; this JVM runs the load generator (one producer) and the visibility probe (one {@code
 * read_committed} consumer). Progress goes to standard error, the report to standard output.
 *
 * <pre>{@code
 * bin/kdelay-bench            # quick mode, a few minutes
 * bin/kdelay-bench --full     # the figures the performance goals are judged by
 * bin/kdelay-bench --broker tuned  # on a broker with kdelay's recommended settings
 * bin/kdelay-bench --jfr DIR  # also record each application with Java Flight Recorder
 * }</pre>
 */
public final class Benchmark {

  /** Partitions of every topic, for kdelay and the ceiling alike. */
  static final int PARTITIONS = 6;

  static final String CEILING_IN = "bench-ceiling-in";
  static final String CEILING_OUT = "bench-ceiling-out";
  static final String EMPTY_REQUESTS = "bench-a-requests";
  static final String EMPTY_FIRED = "bench-a-fired";
  static final String FILLED_REQUESTS = "bench-b-requests";
  static final String FILLED_FIRED = "bench-b-fired";
  static final String MOVED_REQUESTS = "bench-moved-requests";

  static final String FILLED_APPLICATION = "bench-kdelay-b";
  static final String CALIBRATION_REQUESTS = "bench-cal-requests";
  static final String CALIBRATION_FIRED = "bench-cal-fired";
  static final String TEXTBOOK_REQUESTS = "bench-textbook-requests";
  static final String TEXTBOOK_FIRED = "bench-textbook-fired";

  /** Tasks of a burst on a fresh instance: the stock-broker goal's size. */
  static final int FRESH_BURST_TASKS = 20_000;

  /** How far ahead a fresh instance's burst is sent: its intake is slow while it is cold. */
  static final long FRESH_BURST_LEAD_MS = 10_000;

  /** A warm-up ends when the ceiling's rate moves less than this share between two runs. */
  private static final double SETTLED = 0.1;

  /** How long an application's idle CPU use is measured. */
  private static final Duration IDLE_WINDOW = Duration.ofSeconds(2);

  private static final int MIN_RATE = 10;

  private static final int MAX_BUSY_AFTER_RESTORE_S = 120;
  private static final long MAX_BURST_LEAD_MS = 15_000;
  private static final int ASSUMED_INTAKE_PER_S = 5_000;
  private static final Duration FIRST_FIRE_WARM_UP = Duration.ofSeconds(15);

  private final Settings settings;
  private final Testbed testbed;
  private final Scenarios scenarios;
  private final Results results;
  private final long startedNanos = System.nanoTime();

  private Benchmark(Settings settings, Testbed testbed, Results results) {
    this.settings = settings;
    this.testbed = testbed;
    this.scenarios = new Scenarios(testbed);
    this.results = results;
  }

  /**
   * Runs the benchmark.
   *
   * @param args {@code --quick} (default) or {@code --full}; {@code --broker stock} (default:
   *     Apache Kafka's default settings) or {@code --broker tuned}; {@code --jfr DIR}; {@code
   *     --work DIR} (default {@code benchmarks/target/bench-work}, emptied first); {@code --keep}
   *     keeps it; {@code --runs N}, {@code --records N}, {@code --pending N} override the mode's
   *     sizes; {@code --only throughput,lateness,first-fire,burst,capacity} runs some parts (the
   *     settings must be given before it); {@code --set KEY=VALUE} sets a kdelay or Kafka property
   *     of every application, for experiments such as {@code --set delay.punctuate.interval.ms=20}
   * @throws IOException if the work directory cannot be prepared
   */
  public static void main(String[] args) throws IOException {
    Settings settings = Settings.quick();
    Optional<Path> jfr = Optional.empty();
    Path work = Path.of("benchmarks", "target", "bench-work");
    boolean keep = false;
    BrokerProfile broker = BrokerProfile.STOCK;
    Map<String, String> overrides = new TreeMap<>();
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--quick" -> settings = Settings.quick();
        case "--full" -> settings = Settings.full();
        case "--jfr" -> jfr = Optional.of(Path.of(args[++i]).toAbsolutePath());
        case "--work" -> work = Path.of(args[++i]);
        case "--keep" -> keep = true;
        case "--broker" -> broker = BrokerProfile.parse(args[++i]);
        case "--runs" -> settings = settings.withRuns(Integer.parseInt(args[++i]));
        case "--records" -> settings = settings.withThroughputRecords(Integer.parseInt(args[++i]));
        case "--pending" -> settings = settings.withCapacityTasks(Integer.parseInt(args[++i]));
        case "--burst" -> settings = settings.withBurstTasks(Integer.parseInt(args[++i]));
        case "--lead" -> settings = settings.withLatenessLeadMs(Long.parseLong(args[++i]));
        case "--only" -> settings = settings.withParts(Set.of(args[++i].split(",")));
        case "--set" -> {
          String[] pair = args[++i].split("=", 2);
          overrides.put(pair[0], pair[1]);
        }
        default -> {
          System.err.println(
              "usage: kdelay-bench [--quick | --full] [--broker stock|tuned] [--jfr DIR]"
                  + " [--work DIR] [--keep]"
                  + " [--runs N] [--records N] [--pending N] [--burst N] [--lead MS]"
                  + " [--only PART,...]"
                  + " [--set KEY=VALUE ...]\n"
                  + "  parts: "
                  + String.join(", ", Settings.PARTS));
          System.exit(2);
        }
      }
    }
    work = work.toAbsolutePath();
    deleteRecursively(work);
    Files.createDirectories(work);
    if (jfr.isPresent()) {
      Files.createDirectories(jfr.get());
    }
    // Checked here, not in the children: a bad key fails at once.
    AppKind.config("localhost:9092", "check", "check", "check", overrides);
    Results results =
        new Results(settings, broker, Machine.describe(), Machine.loadAverage(), overrides);
    // Interrupted (Ctrl-C, SIGTERM): still print what was measured. The children stop on their
    // own when this JVM's end closes their standard input.
    AtomicBoolean reported = new AtomicBoolean();
    Runnable report =
        () -> {
          if (reported.compareAndSet(false, true)) {
            results.loadAtEnd(Machine.loadAverage());
            results.report().print(System.out);
          }
        };
    Runtime.getRuntime().addShutdownHook(new Thread(report, "report-on-exit"));
    try (Testbed testbed = new Testbed(work, jfr, overrides, broker)) {
      new Benchmark(settings, testbed, results).run();
    } finally {
      report.run();
      if (!keep) {
        deleteRecursively(work);
      }
    }
    System.exit(0);
  }

  private void run() {
    testbed.createTopics(
        CEILING_IN,
        CEILING_OUT,
        EMPTY_FIRED,
        FILLED_FIRED,
        CALIBRATION_FIRED,
        TEXTBOOK_REQUESTS,
        TEXTBOOK_FIRED);
    // The textbook delay app is compared in (2) and (3) only.
    Optional<App> textbook =
        settings.runs("throughput") || settings.runs("lateness")
            ? Optional.of(
                testbed.start(
                    AppKind.TEXTBOOK, "textbook", "bench-textbook", TEXTBOOK_REQUESTS, ""))
            : Optional.empty();
    App empty = settings.sizesByThroughput() ? startAndMeasureThroughput(textbook) : startEmpty();
    if (settings.runs("lateness")) {
      lateness(empty, textbook);
    }
    // Stopped before the parts it takes no part in, so that its JVM does not compete with kdelay's.
    textbook.ifPresent(testbed::stop);
    if (settings.runs(Settings.FIRST_FIRE)) {
      firstFires(empty);
    }
    if (settings.runs("burst")) {
      bursts(empty);
    }
    if (settings.runs("capacity")) {
      capacity(empty);
    }
  }

  /**
   * Starts the ceiling and instance A, sizes kdelay's runs and measures (1) and (2), the textbook
   * delay app's runs (when it runs) alongside kdelay's; the ceiling stops afterwards.
   */
  private App startAndMeasureThroughput(Optional<App> textbook) {
    App ceiling =
        testbed.start(AppKind.PASS_THROUGH, "ceiling", "bench-ceiling", CEILING_IN, CEILING_OUT);
    App empty = startEmpty();
    progress(
        "started the broker, the ceiling, kdelay instance A%s",
        textbook.isPresent() ? " and the textbook delay app" : "");
    calibrate(ceiling, empty, textbook);
    if (settings.runs("throughput")) {
      throughput(ceiling, empty, textbook);
    } else {
      // The later parts size themselves by kdelay's throughput: measure it once.
      results.throughput(
          scenarios.throughput(ceiling, CEILING_OUT, settings.throughputRecords(), 0),
          scenarios.throughput(
              empty, EMPTY_FIRED, results.kdelayRecords(), settings.throughputDelayMs()));
    }
    // Idle use is measured once the applications are warm: measured at their start, it was the
    // JIT compiler working through its queue (kdelay 0.61-0.91 cores against 0.07-0.10 for the
    // others, which have no warm-up of their own), not what an idle instance costs.
    results.idle(
        scenarios.idleCores(ceiling, IDLE_WINDOW), scenarios.idleCores(empty, IDLE_WINDOW));
    textbook.ifPresent(app -> results.idleTextbook(scenarios.idleCores(app, IDLE_WINDOW)));
    testbed.stop(ceiling);
    return empty;
  }

  private App startEmpty() {
    App empty = testbed.start(AppKind.KDELAY, "kdelay-a", "bench-kdelay-a", EMPTY_REQUESTS, "");
    results.emptyStartup(empty.startupMs());
    return empty;
  }

  /**
   * Sizes kdelay's runs by a throwaway instance's rate, so that a slow build still finishes in the
   * mode's time, then warms the applications up (see {@link #warmUp}).
   */
  private void calibrate(App ceiling, App kdelay, Optional<App> textbook) {
    int records = settings.throughputRecords();
    long delay = settings.throughputDelayMs();
    scenarios.throughput(ceiling, CEILING_OUT, records / 5, 0);
    // A throwaway instance takes a full run's records for a while: its rate sizes kdelay's runs.
    // What it has not fired when the time is up dies with it, so it cannot slow the runs down.
    App probe =
        testbed.start(
            AppKind.KDELAY, "kdelay-calibration", "bench-kdelay-cal", CALIBRATION_REQUESTS, "");
    Duration limit = settings.runBudget().multipliedBy(3).dividedBy(2);
    Runs.Throughput calibration =
        scenarios.throughput(probe, CALIBRATION_FIRED, records, delay, limit);
    testbed.stop(probe);
    results.calibration(calibration, records, limit);
    results.kdelayRecords(settings.kdelayRecords(calibration.perSecond()));
    progress(
        "kdelay calibrated at %,.0f/s: %,d records per kdelay run",
        calibration.perSecond(), results.kdelayRecords());
    warmUp(ceiling, kdelay, textbook);
  }

  /**
   * Full-size runs of the applications, interleaved, until the ceiling's rate settles: within
   * {@link #SETTLED} of the run before, or after as many rounds as the mode has runs. One short run
   * each left both still speeding up through the measured runs (the ceiling from 41k to 122k/s over
   * five quick-mode runs, kdelay from 11k to 26k/s), which pulled every median down. The textbook
   * delay app gets the same runs as kdelay.
   */
  private void warmUp(App ceiling, App kdelay, Optional<App> textbook) {
    double previous = Double.NaN;
    int records = results.kdelayRecords();
    long delay = settings.kdelayDelayMs(records);
    double kdelayRate = Double.NaN;
    for (int pair = 1; pair <= Math.max(2, settings.runs()); pair++) {
      double rate =
          scenarios.throughput(ceiling, CEILING_OUT, settings.throughputRecords(), 0).perSecond();
      kdelayRate = scenarios.throughput(kdelay, EMPTY_FIRED, records, delay).perSecond();
      textbook.ifPresent(app -> scenarios.throughput(app, TEXTBOOK_FIRED, records, delay));
      progress("warm-up %d: ceiling %,.0f/s, kdelay %,.0f/s", pair, rate, kdelayRate);
      if (Math.abs(rate - previous) <= SETTLED * previous) {
        break;
      }
      previous = rate;
    }
    // The calibration instance ran cold (interpreted code, an empty JIT cache), three or four
    // times slower than a warm one: sized by it alone, the measured runs were cut to a fraction of
    // the ceiling's and ran with no delay. The warm instance's last rate sizes them instead.
    int resized = settings.kdelayRecords(kdelayRate);
    if (resized != records) {
      results.kdelayRecords(resized);
      progress("kdelay warm at %,.0f/s: %,d records per kdelay run", kdelayRate, resized);
    }
  }

  /**
   * (1) and (2): ceiling, kdelay and textbook runs interleaved. kdelay and the textbook app get the
   * same records and delay, and take turns at going first, so that neither always runs on the heels
   * of the other's run (the broker still writing out its transaction markers and logs).
   */
  private void throughput(App ceiling, App kdelay, Optional<App> textbook) {
    int records = settings.throughputRecords();
    int delayed = results.kdelayRecords();
    long delay = settings.kdelayDelayMs(delayed);
    for (int run = 1; run <= settings.runs(); run++) {
      Runs.Throughput top = scenarios.throughput(ceiling, CEILING_OUT, records, 0);
      boolean textbookFirst = run % 2 == 0;
      Optional<Runs.Throughput> book =
          textbookFirst
              ? textbook.map(app -> scenarios.throughput(app, TEXTBOOK_FIRED, delayed, delay))
              : Optional.empty();
      Runs.Throughput own = scenarios.throughput(kdelay, EMPTY_FIRED, delayed, delay);
      if (!textbookFirst) {
        book = textbook.map(app -> scenarios.throughput(app, TEXTBOOK_FIRED, delayed, delay));
      }
      results.throughput(top, own);
      book.ifPresent(results::textbookThroughput);
      progress(
          "throughput run %d/%d: ceiling %,.0f/s, kdelay %,.0f/s%s",
          run,
          settings.runs(),
          top.perSecond(),
          own.perSecond(),
          book.map(t -> String.format(", textbook %,.0f/s", t.perSecond())).orElse(""));
    }
  }

  /**
   * (3): the fixed rates, each for kdelay then for the textbook delay app, then kdelay's highest
   * sustained rate, searched down from the throughput.
   */
  private void lateness(App kdelay, Optional<App> textbook) {
    for (int rate : settings.fixedRates()) {
      results.lateness(latenessRun(kdelay, EMPTY_FIRED, rate, settings.latenessDuration(), true));
      textbook.ifPresent(
          app ->
              results.textbookLateness(
                  latenessRun(app, TEXTBOOK_FIRED, rate, settings.latenessDuration(), true)));
    }
    double start = 0.9 * results.kdelayThroughput().median();
    for (int attempt = 0; attempt < settings.maxRateAttempts(); attempt++) {
      int rate = roundRate(start * Math.pow(settings.rateStep(), attempt));
      Runs.LatenessRun run =
          latenessRun(kdelay, EMPTY_FIRED, rate, settings.latenessDuration(), false);
      results.searchAttempt(run);
      if (run.sustained()) {
        break;
      }
    }
  }

  /**
   * One lateness run. A fixed rate above what kdelay's throughput can drain in the budget is sent
   * for a shorter time ({@code mayShorten}); the search's rates are below the throughput.
   */
  private Runs.LatenessRun latenessRun(
      App app, String fired, int rate, Duration full, boolean mayShorten) {
    Duration duration =
        mayShorten
            ? settings.latenessDuration(full, rate, results.kdelayThroughput().median())
            : full;
    Runs.LatenessRun run =
        scenarios.lateness(
            app,
            fired,
            rate,
            duration,
            duration.compareTo(full) < 0,
            settings.latenessLeadMs(),
            settings.latenessWindows());
    progress(
        "lateness %s at %,d/s for %.1f s: p50 %d ms, p99 %d ms, max %d ms%s",
        app.jvm().name(),
        rate,
        duration.toMillis() / 1000.0,
        run.lateness().count() == 0 ? -1 : run.lateness().percentile(50),
        run.lateness().count() == 0 ? -1 : run.lateness().percentile(99),
        run.lateness().count() == 0 ? -1 : run.lateness().max(),
        run.sustained() ? "" : " (not sustained)");
    return run;
  }

  /**
   * (3b): tasks to a target topic instance A has never written to, a new topic each run, after one
   * run at the same rate to the topic it knows: the baseline of the same minute. The runs have a
   * fixed size, so they need no calibration and can run alone, after a warm-up run.
   */
  private void firstFires(App kdelay) {
    if (!settings.sizesByThroughput()) {
      // Alone, the instance is fresh: its first runs measure the JIT compiler, not the topics.
      latenessRun(kdelay, EMPTY_FIRED, FirstFireSection.RATE, FIRST_FIRE_WARM_UP, false);
    }
    results.firstFireBaseline(
        latenessRun(kdelay, EMPTY_FIRED, FirstFireSection.RATE, FirstFireSection.DURATION, false));
    try (PlainFirer plain = testbed.plainFirer()) {
      // The yardstick's own first run warms its producer and this JVM on a topic with data.
      plainRun(plain, EMPTY_FIRED);
      results.plainFirstFireBaseline(plainRun(plain, EMPTY_FIRED));
      for (int run = 1; run <= settings.runs(); run++) {
        String topic = "bench-first-fire-" + run;
        String plainTopic = "bench-first-fire-plain-" + run;
        testbed.createTopics(topic, plainTopic);
        results.firstFire(
            latenessRun(kdelay, topic, FirstFireSection.RATE, FirstFireSection.DURATION, false));
        results.plainFirstFire(plainRun(plain, plainTopic));
      }
    }
  }

  /** (3b)'s yardstick: a plain transactional producer writes the same run's fires itself. */
  private Runs.LatenessRun plainRun(PlainFirer plain, String topic) {
    Runs.LatenessRun run =
        scenarios.plainLateness(
            plain,
            topic,
            FirstFireSection.RATE,
            FirstFireSection.DURATION,
            settings.latenessLeadMs(),
            settings.latenessWindows());
    progress(
        "plain transactional producer to %s at %,d/s: p50 %d ms, p99 %d ms, max %d ms",
        topic,
        FirstFireSection.RATE,
        run.lateness().count() == 0 ? -1 : run.lateness().percentile(50),
        run.lateness().count() == 0 ? -1 : run.lateness().percentile(99),
        run.lateness().count() == 0 ? -1 : run.lateness().max());
    return run;
  }

  /** (4): bursts, sent far enough ahead for the instance to take them in before they are due. */
  private void bursts(App kdelay) {
    int tasks = settings.burstTasks();
    // Intake alone (nothing fires meanwhile) is much faster than (2), where intake and firing
    // overlap: the first burst's lead assumes a modest intake rate, the later ones the intake the
    // first one took. A burst whose intake was not complete at the due time is reported as such.
    long lead =
        Math.max(3_000, Math.min(MAX_BURST_LEAD_MS, 1_000 + tasks * 1000L / ASSUMED_INTAKE_PER_S));
    for (int run = 1; run <= settings.runs(); run++) {
      Runs.Burst burst = scenarios.burst(kdelay, EMPTY_FIRED, tasks, lead);
      results.burst(burst, lead);
      progress(
          "burst %d/%d: %,d tasks taken in in %,d ms; visible after due: p50 %,d, p99 %,d, last"
              + " %,d ms; %,.0f fires/s",
          run,
          settings.runs(),
          tasks,
          burst.intake().toMillis(),
          burst.p50Ms(),
          burst.p99Ms(),
          burst.lastAfterDueMs(),
          burst.drainPerSecond());
      lead = Math.max(2_000, 1_000 + burst.intake().toMillis() * 3 / 2);
    }
    freshBursts();
  }

  /**
   * (4b): {@value #FRESH_BURST_TASKS} tasks due at once on an instance that just became ready, a
   * new one each run (its own application id and topics): what a deployment or a failover meets
   * before the JVM, the store and the clients have done any work.
   */
  private void freshBursts() {
    for (int run = 1; run <= settings.runs(); run++) {
      String requests = "bench-fresh-" + run + "-requests";
      String fired = "bench-fresh-" + run + "-fired";
      testbed.createTopics(requests, fired);
      App fresh =
          testbed.start(
              AppKind.KDELAY, "kdelay-fresh-" + run, "bench-kdelay-fresh-" + run, requests, "");
      Runs.Burst burst = scenarios.burst(fresh, fired, FRESH_BURST_TASKS, FRESH_BURST_LEAD_MS);
      testbed.stop(fresh);
      results.freshBurst(burst);
      progress(
          "burst on a fresh instance %d/%d: %,d tasks; visible after due: first %,d, p50 %,d, p99"
              + " %,d, last %,d ms",
          run,
          settings.runs(),
          FRESH_BURST_TASKS,
          burst.firstAfterDueMs(),
          burst.p50Ms(),
          burst.p99Ms(),
          burst.lastAfterDueMs());
    }
  }

  /** (5): a second instance filled with pending tasks, against the empty one. */
  private void capacity(App empty) {
    App filled = testbed.start(AppKind.KDELAY, "kdelay-b", FILLED_APPLICATION, FILLED_REQUESTS, "");
    Duration fill = scenarios.fill(filled, FILLED_FIRED, settings.capacityTasks());
    results.fill(settings.capacityTasks(), fill);
    progress(
        "filled instance B with %,d tasks in %d s", settings.capacityTasks(), fill.toSeconds());
    int records = results.kdelayRecords();
    long delay = settings.kdelayDelayMs(records);
    scenarios.throughput(filled, FILLED_FIRED, Math.min(records, 5_000), delay);
    for (int run = 1; run <= settings.runs(); run++) {
      Runs.Throughput a = scenarios.throughput(empty, EMPTY_FIRED, records, delay);
      Runs.Throughput b = scenarios.throughput(filled, FILLED_FIRED, records, delay);
      results.capacityThroughput(a, b);
      progress(
          "capacity throughput %d/%d: empty %,.0f/s, filled %,.0f/s",
          run, settings.runs(), a.perSecond(), b.perSecond());
    }
    int sustained = results.highestSustained().map(Runs.LatenessRun::rate).orElse(0);
    for (int rate : results.latenessRates()) {
      results.capacityLateness(
          latenessRun(
              filled, FILLED_FIRED, rate, settings.capacityLatenessDuration(), rate > sustained));
    }
    results.memory(
        new Results.Memory(
            empty.heapAfterGcBytes(), empty.jvm().residentBytes(), empty.stateDirBytes()),
        new Results.Memory(
            filled.heapAfterGcBytes(), filled.jvm().residentBytes(), filled.stateDirBytes()));
    testbed.stop(filled);
    String changelogTopic = ScheduleMove.changelogTopic(FILLED_APPLICATION);
    long changelog = testbed.endOffsetSum(changelogTopic);
    results.changelogBytes(testbed.topicBytes(changelogTopic));
    // One restore is one figure on a shared machine: as many as the mode's runs, each by a new
    // instance with an empty state directory, so the report gives their spread.
    for (int run = 1; run <= settings.runs(); run++) {
      App restored =
          testbed.start(
              AppKind.KDELAY, "kdelay-b-restore-" + run, FILLED_APPLICATION, FILLED_REQUESTS, "");
      Runs.Restore restore = restored(restored);
      results.restore(changelog, restore);
      testbed.stop(restored);
      progress(
          "restore %d/%d: %,d changelog records, RUNNING in %.1f s, %.1f CPU-s; then busy %.1f s,"
              + " %.1f CPU-s",
          run,
          settings.runs(),
          changelog,
          restore.runningMs() / 1000.0,
          restore.cpuMs() / 1000.0,
          restore.busyMs() / 1000.0,
          restore.busyCpuMs() / 1000.0);
    }
    move();
  }

  /**
   * (5) {@code kdelay move} of B, now stopped, to a requests topic of four times the partitions:
   * what growing the partition count costs. Its imports stay unread; nothing runs on them.
   */
  private void move() {
    int partitions = 4 * PARTITIONS;
    testbed.createTopic(MOVED_REQUESTS, partitions);
    Map<String, Object> clients =
        Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, testbed.bootstrapServers());
    long start = System.nanoTime();
    DeploymentMove.Report moved =
        new DeploymentMove(
                clients,
                clients,
                clients,
                new DeploymentMove.Source(
                    FILLED_APPLICATION, FILLED_REQUESTS, FILLED_REQUESTS + "-rerouted"),
                MOVED_REQUESTS,
                DeploymentMove.DEFAULT_BATCH,
                Duration.ofMinutes(2),
                System::currentTimeMillis)
            .run();
    long ms = (System.nanoTime() - start) / 1_000_000;
    results.move(new Runs.Move(moved.moved(), partitions, DeploymentMove.DEFAULT_BATCH, ms));
    progress(
        "moved %,d ids of B to %d partitions in %.1f s", moved.moved(), partitions, ms / 1000.0);
  }

  /**
   * A restore's figures: its CPU until RUNNING, and how long the instance then stays busy, until a
   * second in which it used less than half a core (at most {@value #MAX_BUSY_AFTER_RESTORE_S} s).
   */
  private static Runs.Restore restored(App app) {
    long running = System.nanoTime();
    long cpuMs = app.jvm().cpuTime().toMillis();
    long last = cpuMs;
    long quietAt = running;
    for (int second = 0; second < MAX_BUSY_AFTER_RESTORE_S; second++) {
      long start = System.nanoTime();
      try {
        Thread.sleep(1_000); // a sampling window, not a wait for a condition
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
      long now = app.jvm().cpuTime().toMillis();
      long elapsedMs = Math.max(1, (System.nanoTime() - start) / 1_000_000);
      quietAt = start;
      if ((now - last) * 2 < elapsedMs) {
        break;
      }
      last = now;
    }
    return new Runs.Restore(app.startupMs(), cpuMs, (quietAt - running) / 1_000_000, last - cpuMs);
  }

  /** A rate rounded down to two significant digits, at least {@value #MIN_RATE}/s. */
  static int roundRate(double rate) {
    if (rate < MIN_RATE) {
      return MIN_RATE;
    }
    double unit = Math.pow(10, Math.floor(Math.log10(rate)) - 1);
    return (int) (Math.floor(rate / unit) * unit);
  }

  private void progress(String format, Object... args) {
    long seconds = (System.nanoTime() - startedNanos) / 1_000_000_000L;
    System.err.printf("[%4ds] %s%n", seconds, String.format(format, args));
  }

  private static void deleteRecursively(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      List<Path> all = new ArrayList<>(paths.sorted(Comparator.reverseOrder()).toList());
      for (Path path : all) {
        Files.deleteIfExists(path);
      }
    }
  }
}

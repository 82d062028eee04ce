package dev.kdelay.benchmarks;

import dev.kdelay.benchmarks.textbook.TextbookDelay;
import dev.kdelay.service.broker.BrokerProfile;
import dev.kdelay.topology.DelayConfig;
import dev.kdelay.topology.StreamsTuning;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;
import org.apache.kafka.common.utils.AppInfoParser;

/**
 * Everything measured in one benchmark run, and the report made of it. A run that fails halfway
 * still reports what it measured.
 */
final class Results {

  /**
   * Memory of one instance.
   *
   * @param heapAfterGc heap in use after a full GC
   * @param resident the process's resident set size
   * @param stateDir bytes in its state directory
   */
  record Memory(long heapAfterGc, long resident, long stateDir) {}

  private static final String[] STREAMS_KEYS = {
    "processing.guarantee",
    "num.stream.threads",
    "num.standby.replicas",
    "commit.interval.ms",
    "poll.ms",
    "max.task.idle.ms",
    "producer.linger.ms",
    "consumer.max.poll.records"
  };

  private final Settings settings;
  private final Map<String, String> overrides;
  private final BrokerProfile broker;
  private final String machine;
  private final String loadAtStart;
  private String loadAtEnd = "?";
  private long emptyStartupMs = -1;
  private int kdelayRecords;
  private Runs.Throughput calibration;
  private int calibrationSent;
  private Duration calibrationLimit;
  private double idleCeilingCores = Double.NaN;
  private double idleKdelayCores = Double.NaN;
  private double idleTextbookCores = Double.NaN;
  private final List<Runs.Throughput> ceiling = new ArrayList<>();
  private final List<Runs.Throughput> kdelay = new ArrayList<>();
  private final List<Runs.Throughput> textbook = new ArrayList<>();
  private final List<Runs.LatenessRun> lateness = new ArrayList<>();
  private final List<Runs.LatenessRun> textbookLateness = new ArrayList<>();
  private final List<Runs.LatenessRun> search = new ArrayList<>();
  private Runs.LatenessRun firstFireBaseline;
  private final List<Runs.LatenessRun> firstFires = new ArrayList<>();
  private Runs.LatenessRun plainFirstFireBaseline;
  private final List<Runs.LatenessRun> plainFirstFires = new ArrayList<>();
  private final List<Runs.Burst> bursts = new ArrayList<>();
  private final List<Runs.Burst> freshBursts = new ArrayList<>();
  private long burstLeadMs;
  private int fillTasks;
  private Duration fill;
  private final List<Runs.Throughput> capacityEmpty = new ArrayList<>();
  private final List<Runs.Throughput> capacityFilled = new ArrayList<>();
  private final List<Runs.LatenessRun> capacityLateness = new ArrayList<>();
  private Memory emptyMemory;
  private Memory filledMemory;
  private long changelogRecords = -1;
  private Runs.Move move;
  private long changelogBytes = -1;
  private final List<Runs.Restore> restores = new ArrayList<>();

  Results(
      Settings settings,
      BrokerProfile broker,
      String machine,
      String loadAtStart,
      Map<String, String> overrides) {
    this.settings = settings;
    this.broker = broker;
    this.overrides = Map.copyOf(overrides);
    this.machine = machine;
    this.loadAtStart = loadAtStart;
  }

  void loadAtEnd(String load) {
    this.loadAtEnd = load;
  }

  void emptyStartup(long ms) {
    this.emptyStartupMs = ms;
  }

  /** Records per kdelay throughput run. */
  int kdelayRecords() {
    return kdelayRecords;
  }

  void kdelayRecords(int records) {
    this.kdelayRecords = records;
  }

  void calibration(Runs.Throughput run, int sent, Duration limit) {
    this.calibration = run;
    this.calibrationSent = sent;
    this.calibrationLimit = limit;
  }

  void idle(double ceilingCores, double kdelayCores) {
    this.idleCeilingCores = ceilingCores;
    this.idleKdelayCores = kdelayCores;
  }

  void idleTextbook(double cores) {
    this.idleTextbookCores = cores;
  }

  void throughput(Runs.Throughput ceilingRun, Runs.Throughput kdelayRun) {
    ceiling.add(ceilingRun);
    kdelay.add(kdelayRun);
  }

  /** A run of the textbook delay app, with the records and delay of kdelay's run beside it. */
  void textbookThroughput(Runs.Throughput run) {
    textbook.add(run);
  }

  /** kdelay's throughput on the empty store. */
  Spread kdelayThroughput() {
    return Report.spread(kdelay, Runs.Throughput::perSecond);
  }

  void lateness(Runs.LatenessRun run) {
    lateness.add(run);
  }

  /** A run of the textbook delay app at one of the fixed rates. */
  void textbookLateness(Runs.LatenessRun run) {
    textbookLateness.add(run);
  }

  void searchAttempt(Runs.LatenessRun run) {
    search.add(run);
  }

  /** The highest sustained rate found, if any. */
  java.util.Optional<Runs.LatenessRun> highestSustained() {
    return search.stream().filter(Runs.LatenessRun::sustained).findFirst();
  }

  /** The rates (3) measured on the empty store: the fixed ones and the highest sustained one. */
  List<Integer> latenessRates() {
    TreeSet<Integer> rates = new TreeSet<>();
    lateness.forEach(run -> rates.add(run.rate()));
    highestSustained().ifPresent(run -> rates.add(run.rate()));
    return List.copyOf(rates);
  }

  void firstFireBaseline(Runs.LatenessRun run) {
    this.firstFireBaseline = run;
  }

  void plainFirstFireBaseline(Runs.LatenessRun run) {
    this.plainFirstFireBaseline = run;
  }

  void plainFirstFire(Runs.LatenessRun run) {
    plainFirstFires.add(run);
  }

  void firstFire(Runs.LatenessRun run) {
    firstFires.add(run);
  }

  void burst(Runs.Burst burst, long leadMs) {
    bursts.add(burst);
    burstLeadMs = leadMs;
  }

  void freshBurst(Runs.Burst burst) {
    freshBursts.add(burst);
  }

  /** Intake alone, requests per second, as the bursts measured it (median), if they ran. */
  java.util.Optional<Double> intakePerSecond() {
    if (bursts.isEmpty()) {
      return java.util.Optional.empty();
    }
    return java.util.Optional.of(
        Report.spread(
                bursts, burst -> burst.tasks() * 1000.0 / Math.max(1, burst.intake().toMillis()))
            .median());
  }

  void fill(int tasks, Duration took) {
    this.fillTasks = tasks;
    this.fill = took;
  }

  void capacityThroughput(Runs.Throughput empty, Runs.Throughput filled) {
    capacityEmpty.add(empty);
    capacityFilled.add(filled);
  }

  void capacityLateness(Runs.LatenessRun run) {
    capacityLateness.add(run);
  }

  void memory(Memory empty, Memory filled) {
    this.emptyMemory = empty;
    this.filledMemory = filled;
  }

  /** One fresh instance's restore of the filled instance's changelog. */
  void restore(long records, Runs.Restore restore) {
    this.changelogRecords = records;
    this.restores.add(restore);
  }

  /** What the filled instance's changelog takes on the broker, after the capacity runs. */
  void changelogBytes(long bytes) {
    this.changelogBytes = bytes;
  }

  /** The filled instance's schedules moved to a requests topic of more partitions. */
  void move(Runs.Move move) {
    this.move = move;
  }

  /** The report of what has been measured. */
  Report report() {
    Report report = new Report();
    configuration(report);
    new ThroughputSection(
            settings, kdelayRecords, ceiling, kdelay, idleCeilingCores, idleKdelayCores)
        .calibration(calibration, calibrationSent, calibrationLimit)
        .textbook(textbook, idleTextbookCores)
        .write(report);
    new LatenessSection(settings, lateness, search).textbook(textbookLateness).write(report);
    new FirstFireSection(
            settings,
            firstFireBaseline,
            firstFires,
            new FirstFireSection.Yardstick(plainFirstFireBaseline, plainFirstFires))
        .write(report);
    new BurstSection(bursts, burstLeadMs, freshBursts).write(report);
    new CapacitySection(
            settings,
            fillTasks,
            fill,
            capacityEmpty,
            capacityFilled,
            lateness,
            search,
            capacityLateness)
        .memory(emptyMemory, filledMemory)
        .restore(changelogRecords, restores, emptyStartupMs)
        .changelogBytes(changelogBytes)
        .move(move)
        .write(report);
    return report;
  }

  private void configuration(Report report) {
    DelayConfig config = AppKind.config("broker", "id", "dir", "requests", overrides).delay();
    Properties streams = StreamsTuning.streamsProperties(config);
    StringBuilder keys = new StringBuilder();
    for (String key : STREAMS_KEYS) {
      keys.append(' ').append(key).append('=').append(streams.get(key));
    }
    report
        .line("kdelay benchmark, %s mode, %s broker", settings.mode(), broker.label())
        .line("  machine     %s", machine)
        .line("  load avg    %s at start, %s at end (1/5/15 min)", loadAtStart, loadAtEnd)
        .line(
            "  processes   broker JVM %s; each application in a JVM of its own %s;",
            String.join(" ", Testbed.BROKER_JVM), String.join(" ", Testbed.APP_JVM.subList(0, 2)))
        .line("              this JVM: the load generator (1 producer) and the probe (1 consumer)");
    extraOptions(report);
    report
        .line(
            "  broker      Apache Kafka %s, kdelay's embedded single-node KRaft broker, replication"
                + " factor 1, %d partitions per topic; profile %s: %s",
            AppInfoParser.getVersion(),
            Benchmark.PARTITIONS,
            broker.label(),
            broker == BrokerProfile.STOCK
                ? "Apache Kafka's default settings (as managed Kafka)"
                : "kdelay's recommended settings (as bin/kdelay)")
        .line("  streams     (kdelay, textbook and ceiling, from StreamsTuning)%s", keys)
        .line(
            "  overrides   %s",
            overrides.isEmpty() ? "none: kdelay's defaults" : "--set " + overrides)
        .line(
            "  kdelay      punctuate every %d ms, at most %d fires per punctuation, RocksDB cache %s with %s of write buffers",
            config.punctuateInterval().toMillis(),
            config.maxFiresPerPunctuation(),
            Report.bytes(config.getLong(DelayConfig.ROCKSDB_BLOCK_CACHE_BYTES_CONFIG)),
            Report.bytes(config.getLong(DelayConfig.ROCKSDB_WRITE_BUFFER_BYTES_CONFIG)))
        .line(
            "  ceiling     a source wired to a sink (input -> output, headers kept), same topics"
                + " layout, same records")
        .line(
            "  textbook    Kafka Streams alone: requests put into a changelogged RocksDB store keyed"
                + " by due time, no cache; punctuate every %d ms",
            TextbookDelay.PUNCTUATE_INTERVAL.toMillis())
        .line(
            "              from the earliest unfired due time, at most %d fires per punctuation,"
                + " each deleted: a put, a fire and a tombstone per request",
            TextbookDelay.MAX_FIRES_PER_PUNCTUATION)
        .line(
            "  records     key 'r<run>-<n>', payload %d B, headers delay-target-topic and"
                + " delay-fire-at (epoch ms)",
            RequestProducer.PAYLOAD_BYTES)
        .line("  producer    %s", settingsText(RequestProducer.SETTINGS))
        .line(
            "  probe       %s, assigned partitions, no group",
            settingsText(VisibilityProbe.SETTINGS))
        .line(
            "  repeats     %d runs per throughput and burst figure, interleaved with their"
                + " baseline; figures are median [min-max]",
            settings.runs())
        .blank();
  }

  private static String settingsText(java.util.Map<String, Object> settings) {
    StringBuilder text = new StringBuilder();
    new java.util.TreeMap<>(settings)
        .forEach(
            (key, value) ->
                text.append(text.length() == 0 ? "" : " ").append(key).append('=').append(value));
    return text.toString();
  }

  /**
   * The JVM options added through the environment, if any, as a line of the report: a profiler or a
   * log changes what a run measures.
   */
  private static void extraOptions(Report report) {
    List<String> broker = Testbed.extraBrokerOptions();
    List<String> apps = Testbed.extraAppOptions();
    if (!broker.isEmpty() || !apps.isEmpty()) {
      report.line(
          "  added       broker JVM: %s; applications' JVMs: %s",
          broker.isEmpty() ? "nothing" : String.join(" ", broker),
          apps.isEmpty() ? "nothing" : String.join(" ", apps));
    }
  }
}

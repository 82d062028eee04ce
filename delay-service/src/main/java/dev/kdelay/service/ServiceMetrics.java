package dev.kdelay.service;

import dev.kdelay.schemas.Action;
import dev.kdelay.schemas.LogValues;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.topology.DelayMetrics;
import dev.kdelay.topology.PartitionGauges;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.kafka.KafkaStreamsMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import java.util.function.ToLongFunction;
import org.apache.kafka.streams.KafkaStreams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * kdelay's metrics in Micrometer, exposed in Prometheus' text format: the topology's events as
 * counters and histograms, its partitions' state as gauges, and Kafka Streams' and the JVM's own
 * metrics through Micrometer's binders.
 *
 * <p>The {@link DelayMetrics} methods run on stream threads for every request and fire: each
 * increments a meter resolved at construction, found by an array index, so they neither allocate
 * nor look anything up by name. Gauges are computed when scraped, from the partitions' published
 * {@link PartitionGauges}.
 *
 * <p>Meter names (Prometheus form):
 *
 * <ul>
 *   <li>{@code kdelay_requests_total{action,outcome}}: requests applied or rejected, by action
 *       ({@code schedule}, {@code cancel}, {@code pause}, {@code resume}, {@code unknown});
 *   <li>{@code kdelay_requests_rerouted_total}: requests forwarded to the partition their id hashes
 *       to;
 *   <li>{@code kdelay_requests_waited_total}: rounds requests waited aside for the look-up of a
 *       target topic not seen before (or behind their id's requests that did);
 *   <li>{@code kdelay_rejections_total{reason}}: dead-lettered requests by rejection code;
 *   <li>{@code kdelay_tasks_fired_total}, {@code kdelay_tasks_cancelled_total}, {@code
 *       kdelay_tasks_undeliverable_total{reason}}, {@code kdelay_occurrences_skipped_total};
 *   <li>{@code kdelay_fire_lateness_seconds}: due time to fire, a histogram whose buckets are fine
 *       around the latency goals; percentiles come from {@code histogram_quantile}, across
 *       instances;
 *   <li>{@code kdelay_fire_deferral_seconds}: how much later than its due time a fire-rate limit
 *       ({@code delay.fire.rate.limits}) deferred a task, one count per task deferred: the limit's
 *       share of the lateness above;
 *   <li>{@code kdelay_punctuation_duration_seconds}, {@code kdelay_punctuation_tasks}: the
 *       punctuations that found something due;
 *   <li>gauges {@code kdelay_tasks_pending}, {@code kdelay_schedules_paused}, {@code
 *       kdelay_next_due_timestamp_seconds}, {@code kdelay_oldest_overdue_task_age_seconds}, {@code
 *       kdelay_partitions_active}, {@code kdelay_partitions_restoring}.
 * </ul>
 */
public final class ServiceMetrics implements DelayMetrics, AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(ServiceMetrics.class);

  /** Content type of {@link #scrape()}: Prometheus' text format 0.0.4. */
  public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

  /**
   * Lateness buckets, fine around the latency goals (p50 <= 10 ms, p99 <= 50 ms) so that {@code
   * histogram_quantile} reads percentiles closely there, coarse far beyond.
   */
  private static final Duration[] LATENESS_BUCKETS =
      millis(
          1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 75, 100, 150, 250, 500, 1_000, 2_500, 5_000, 10_000,
          30_000, 60_000, 300_000);

  private static final Duration[] PUNCTUATION_BUCKETS =
      millis(1, 2, 5, 10, 20, 50, 100, 250, 500, 1_000, 5_000);

  private static final double[] PUNCTUATION_TASK_BUCKETS = {1, 10, 100, 500, 1_000, 2_000, 5_000};

  private static final String UNKNOWN_ACTION = "unknown";

  private final PrometheusMeterRegistry registry;
  private final Clock clock;
  private final Map<Integer, PartitionGauges> partitions = new ConcurrentHashMap<>();
  private final List<AutoCloseable> closeables = new ArrayList<>();

  // Indexed by Action ordinal; the last slot is "unknown".
  private final Counter[] applied;
  private final Counter[] rejectedByAction;
  private final Counter[] rejections;
  private final Counter[] undeliverable;
  private final Counter rerouted;
  private final Counter waited;
  private final Counter fired;
  private final Counter cancelled;
  private final Counter skipped;
  private final Timer lateness;
  private final Timer deferral;
  private final Timer punctuationDuration;
  private final DistributionSummary punctuationTasks;
  private final Map<String, TenantMeters> tenants = new ConcurrentHashMap<>();

  /** What is counted of one tenant's fires. */
  private record TenantMeters(Counter fired, Timer lateness) {}

  /**
   * Creates the registry and every kdelay meter.
   *
   * @param clock the clock ages are measured with
   * @param restoringPartitions how many state-store partitions are being restored now
   */
  public ServiceMetrics(Clock clock, IntSupplier restoringPartitions) {
    this.clock = clock;
    this.registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    // The task store reports under a metrics scope of its own, so its state-store metrics carry
    // the tag time.bucketed.rocksdb.state.id where the schedules store's carry rocksdb.state.id.
    // Prometheus allows one set of tag keys per metric name: give both the same key.
    registry
        .config()
        .meterFilter(
            MeterFilter.renameTag(
                "kafka.stream.state", "time.bucketed.rocksdb.state.id", "rocksdb.state.id"));
    int actions = Action.values().length;
    applied = new Counter[actions + 1];
    rejectedByAction = new Counter[actions + 1];
    for (int i = 0; i <= actions; i++) {
      String action = i < actions ? Action.values()[i].wireName() : UNKNOWN_ACTION;
      applied[i] = requests(action, "applied");
      rejectedByAction[i] = requests(action, "rejected");
    }
    RejectionReason[] reasons = RejectionReason.values();
    rejections = new Counter[reasons.length];
    undeliverable = new Counter[reasons.length];
    for (RejectionReason reason : reasons) {
      rejections[reason.ordinal()] =
          Counter.builder("kdelay.rejections")
              .description("Requests rejected and dead-lettered, by rejection code")
              .tag("reason", reason.name())
              .register(registry);
    }
    for (RejectionReason reason :
        List.of(RejectionReason.UNKNOWN_TOPIC, RejectionReason.BAD_PARTITION)) {
      undeliverable[reason.ordinal()] = undeliverableCounter(reason);
    }
    rerouted =
        Counter.builder("kdelay.requests.rerouted")
            .description("Requests that arrived on another partition than their id's, forwarded")
            .register(registry);
    waited =
        Counter.builder("kdelay.requests.waited")
            .description(
                "Rounds requests waited aside for the look-up of a target topic not seen before")
            .register(registry);
    fired =
        Counter.builder("kdelay.tasks.fired")
            .description("Tasks fired to their target topics (occurrences, for cron)")
            .register(registry);
    cancelled =
        Counter.builder("kdelay.tasks.cancelled")
            .description("Pending or paused schedules removed by a cancel")
            .register(registry);
    skipped =
        Counter.builder("kdelay.occurrences.skipped")
            .description("Missed occurrences of recurring schedules not fired (misfire policy)")
            .register(registry);
    lateness =
        Timer.builder("kdelay.fire.lateness")
            .description("How long after its due time a task fired")
            .serviceLevelObjectives(LATENESS_BUCKETS)
            .register(registry);
    deferral =
        Timer.builder("kdelay.fire.deferral")
            .description(
                "How much later than its due time a fire-rate limit deferred a task (one per task)")
            .serviceLevelObjectives(LATENESS_BUCKETS)
            .register(registry);
    punctuationDuration =
        Timer.builder("kdelay.punctuation.duration")
            .description("Duration of the punctuations that found something due")
            .serviceLevelObjectives(PUNCTUATION_BUCKETS)
            .register(registry);
    punctuationTasks =
        DistributionSummary.builder("kdelay.punctuation.tasks")
            .description("Entries handled by the punctuations that found something due")
            .serviceLevelObjectives(PUNCTUATION_TASK_BUCKETS)
            .register(registry);
    gauges(restoringPartitions);
    bind(
        new JvmMemoryMetrics(),
        new JvmThreadMetrics(),
        new ClassLoaderMetrics(),
        new ProcessorMetrics(),
        new UptimeMetrics(),
        new FileDescriptorMetrics());
    JvmGcMetrics gc = new JvmGcMetrics();
    bind(gc);
    closeables.add(gc);
  }

  private static Duration[] millis(long... millis) {
    return Arrays.stream(millis).mapToObj(Duration::ofMillis).toArray(Duration[]::new);
  }

  private Counter requests(String action, String outcome) {
    return Counter.builder("kdelay.requests")
        .description("Requests applied or rejected, by action and outcome")
        .tag("action", action)
        .tag("outcome", outcome)
        .register(registry);
  }

  private Counter undeliverableCounter(RejectionReason reason) {
    return Counter.builder("kdelay.tasks.undeliverable")
        .description("Due tasks dead-lettered because their target topic or partition is gone")
        .tag("reason", reason.name())
        .register(registry);
  }

  private void gauges(IntSupplier restoringPartitions) {
    Gauge.builder("kdelay.tasks.pending", this, ServiceMetrics::pendingTasks)
        .description("Schedules waiting to fire on this instance (NaN while still counting)")
        .register(registry);
    Gauge.builder("kdelay.schedules.paused", this, ServiceMetrics::pausedSchedules)
        .description("Paused recurring schedules on this instance (NaN while still counting)")
        .register(registry);
    Gauge.builder("kdelay.next.due.timestamp", this, ServiceMetrics::nextDueSeconds)
        .description("Earliest due time on this instance, epoch seconds (NaN: nothing pending)")
        .baseUnit("seconds")
        .register(registry);
    Gauge.builder("kdelay.oldest.overdue.task.age", this, ServiceMetrics::oldestOverdueSeconds)
        .description(
            "How long the oldest task that is due has waited to fire; stays near 0 while"
                + " kdelay keeps up, grows when something is not firing")
        .baseUnit("seconds")
        .register(registry);
    Gauge.builder("kdelay.partitions.active", partitions, Map::size)
        .description("Request-topic partitions this instance fires for")
        .register(registry);
    Gauge.builder("kdelay.partitions.restoring", restoringPartitions, IntSupplier::getAsInt)
        .description("State store partitions this instance is restoring from their changelogs")
        .register(registry);
  }

  /** Binds the metrics of the instance's Kafka Streams application and of its clients. */
  synchronized void bind(KafkaStreams streams) {
    KafkaStreamsMetrics streamsMetrics = new KafkaStreamsMetrics(streams);
    streamsMetrics.bindTo(registry);
    closeables.add(streamsMetrics);
  }

  private void bind(MeterBinder... binders) {
    for (MeterBinder binder : binders) {
      binder.bindTo(registry);
    }
  }

  /** The registry, for tests and for binding more. */
  MeterRegistry registry() {
    return registry;
  }

  /** Every meter, in Prometheus' text format ({@link #CONTENT_TYPE}). */
  public String scrape() {
    return registry.scrape();
  }

  @Override
  public void requestApplied(Action action) {
    applied[action.ordinal()].increment();
  }

  @Override
  public void requestRejected(Action action, RejectionReason reason) {
    rejectedByAction[action == null ? rejectedByAction.length - 1 : action.ordinal()].increment();
    rejections[reason.ordinal()].increment();
  }

  @Override
  public void requestRerouted() {
    rerouted.increment();
  }

  @Override
  public void requestWaited() {
    waited.increment();
  }

  @Override
  public void taskFired(long latenessMs) {
    fired.increment();
    lateness.record(latenessMs, TimeUnit.MILLISECONDS);
  }

  @Override
  public void tenantTaskFired(String tenant, long latenessMs) {
    TenantMeters meters = tenants.computeIfAbsent(tenant, this::tenantMeters);
    meters.fired().increment();
    meters.lateness().record(latenessMs, TimeUnit.MILLISECONDS);
  }

  private TenantMeters tenantMeters(String tenant) {
    return new TenantMeters(
        Counter.builder("kdelay.tenant.tasks.fired")
            .description("A tenant's tasks fired to their target topics (occurrences, for cron)")
            .tag("tenant", tenant)
            .register(registry),
        Timer.builder("kdelay.tenant.fire.lateness")
            .description("How long after its due time a tenant's task fired")
            .tag("tenant", tenant)
            .serviceLevelObjectives(LATENESS_BUCKETS)
            .register(registry));
  }

  /**
   * Registers each tenant's meters: its fires, their lateness, and the schedules it holds on this
   * instance, so that a tenant shows in the scrape before its first fire.
   *
   * @param names the deployment's tenants
   */
  public void tenants(Collection<String> names) {
    for (String tenant : names) {
      tenants.computeIfAbsent(tenant, this::tenantMeters);
      Gauge.builder("kdelay.tenant.schedules.pending", this, m -> m.storedBy(tenant))
          .description(
              "A tenant's schedules on this instance, waiting or paused (NaN while still counting)")
          .tag("tenant", tenant)
          .register(registry);
    }
  }

  /**
   * What a tenant may read of a scrape: the series labelled with its name ({@code
   * kdelay_tenant_*{tenant="..."}}), each metric's {@code # HELP} and {@code # TYPE} lines with
   * them; nothing of the deployment's or another tenant's.
   *
   * @param scrape a scrape in Prometheus text format
   * @param tenant the tenant's name (lowercase letters and digits)
   * @return the tenant's part of it
   */
  public static String ofTenant(String scrape, String tenant) {
    String label = "tenant=\"" + tenant + "\"";
    StringBuilder own = new StringBuilder();
    List<String> comments = new ArrayList<>();
    for (String line : scrape.split("\n")) {
      if (line.startsWith("#")) {
        comments.add(line);
        continue;
      }
      int labels = line.indexOf('{');
      boolean tenants =
          labels > 0
              && line.startsWith("kdelay_tenant_")
              && (line.contains("{" + label) || line.contains("," + label));
      if (tenants) {
        String name = line.substring(0, labels);
        for (String comment : comments) {
          // only the metric's own: a histogram's series share its family's name as a prefix
          if (name.startsWith(comment.split(" ")[2])) {
            own.append(comment).append('\n');
          }
        }
        comments.clear();
        own.append(line).append('\n');
      } else if (!line.isBlank()) {
        comments.clear();
      }
    }
    return own.toString();
  }

  /** A tenant's schedules over this instance's partitions; NaN while any is still counting. */
  private double storedBy(String tenant) {
    long sum = 0;
    for (PartitionGauges gauges : partitions.values()) {
      Map<String, Long> counts = gauges.storedByTenant();
      if (counts == null) {
        return Double.NaN;
      }
      sum += counts.getOrDefault(tenant, 0L);
    }
    return sum;
  }

  @Override
  public void taskUndeliverable(RejectionReason reason) {
    Counter counter = undeliverable[reason.ordinal()];
    if (counter == null) {
      // Not a reason the topology gives today; registering is idempotent, so a race is harmless.
      counter = undeliverableCounter(reason);
      undeliverable[reason.ordinal()] = counter;
    }
    counter.increment();
  }

  @Override
  public void fireDeferred(long deferredMs) {
    deferral.record(deferredMs, TimeUnit.MILLISECONDS);
  }

  @Override
  public void occurrenceSkipped() {
    skipped.increment();
  }

  @Override
  public void taskCancelled() {
    cancelled.increment();
  }

  @Override
  public void punctuated(long durationNanos, int handled) {
    punctuationDuration.record(durationNanos, TimeUnit.NANOSECONDS);
    punctuationTasks.record(handled);
  }

  @Override
  public void partitionOpened(PartitionGauges gauges) {
    partitions.put(gauges.partition(), gauges);
  }

  @Override
  public void partitionClosed(PartitionGauges gauges) {
    partitions.remove(gauges.partition(), gauges);
  }

  /**
   * What the console's overview shows of this instance, read now.
   *
   * @param pendingTasks schedules waiting to fire; NaN while still counting
   * @param pausedSchedules paused recurring schedules; NaN while still counting
   * @param nextDueMs the earliest due time, epoch milliseconds; -1 if nothing is pending
   * @param oldestOverdueSeconds how long the oldest due task has waited to fire
   * @param rejections requests dead-lettered so far, by rejection code; codes never seen left out
   */
  public record Summary(
      double pendingTasks,
      double pausedSchedules,
      long nextDueMs,
      double oldestOverdueSeconds,
      Map<String, Long> rejections) {}

  /** This instance's figures for the console's overview. */
  public Summary summary() {
    Map<String, Long> byCode = new TreeMap<>();
    for (RejectionReason reason : RejectionReason.values()) {
      long count = (long) rejections[reason.ordinal()].count();
      if (count > 0) {
        byCode.put(reason.name(), count);
      }
    }
    double next = nextDueSeconds();
    return new Summary(
        pendingTasks(),
        pausedSchedules(),
        Double.isNaN(next) ? -1 : Math.round(next * 1000),
        oldestOverdueSeconds(),
        byCode);
  }

  /**
   * Fires so far and the lateness histogram, cumulative since start: two of them taken apart say
   * how many fired in between and how late.
   *
   * @param fired tasks fired so far
   * @param boundsMs the lateness buckets' upper bounds, milliseconds, ascending
   * @param counts how many fires were at most as late as each bound
   * @param deferred tasks a fire-rate limit deferred so far
   */
  public record FireCounts(long fired, double[] boundsMs, double[] counts, long deferred) {}

  /** The fire counts now. */
  public FireCounts fireCounts() {
    CountAtBucket[] buckets = lateness.takeSnapshot().histogramCounts();
    double[] bounds = new double[buckets.length];
    double[] counts = new double[buckets.length];
    for (int i = 0; i < buckets.length; i++) {
      bounds[i] = buckets[i].bucket(TimeUnit.MILLISECONDS);
      counts[i] = buckets[i].count();
    }
    return new FireCounts((long) fired.count(), bounds, counts, deferral.count());
  }

  /** The gauges of the partitions open on this instance. */
  List<PartitionGauges> partitions() {
    return List.copyOf(partitions.values());
  }

  private double pendingTasks() {
    return countOverPartitions(PartitionGauges::pendingTasks);
  }

  private double pausedSchedules() {
    return countOverPartitions(PartitionGauges::pausedSchedules);
  }

  /** The sum of a count over this instance's partitions; NaN while any is still counting. */
  private double countOverPartitions(ToLongFunction<PartitionGauges> count) {
    long sum = 0;
    for (PartitionGauges partition : partitions.values()) {
      long value = count.applyAsLong(partition);
      if (value == PartitionGauges.COUNTING) {
        return Double.NaN;
      }
      sum += value;
    }
    return sum;
  }

  private double nextDueSeconds() {
    long next = PartitionGauges.NONE;
    for (PartitionGauges partition : partitions.values()) {
      long due = partition.nextDueMs();
      if (due != PartitionGauges.UNKNOWN) {
        next = Math.min(next, due);
      }
    }
    return next == PartitionGauges.NONE ? Double.NaN : next / 1000.0;
  }

  private double oldestOverdueSeconds() {
    long oldest = PartitionGauges.NONE;
    for (PartitionGauges partition : partitions.values()) {
      long since = partition.overdueSinceMs();
      if (since != PartitionGauges.UNKNOWN) {
        oldest = Math.min(oldest, since);
      }
    }
    long now = clock.millis();
    return oldest >= now ? 0 : (now - oldest) / 1000.0;
  }

  @Override
  public synchronized void close() {
    for (AutoCloseable closeable : closeables) {
      try {
        closeable.close();
      } catch (Exception e) {
        // Closing metrics must not keep the service from stopping.
        log.warn(
            "event=metrics-close-failed binder={} error={}",
            LogValues.quote(closeable.getClass().getName()),
            LogValues.quote(e));
      }
    }
    registry.close();
  }
}

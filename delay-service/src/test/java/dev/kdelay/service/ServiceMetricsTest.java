package dev.kdelay.service;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.Action;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.topology.PartitionGauges;
import io.micrometer.core.instrument.Gauge;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

public class ServiceMetricsTest {

  private static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");

  private final ServiceMetrics metrics =
      new ServiceMetrics(Clock.fixed(NOW, ZoneOffset.UTC), () -> 0);

  @AfterEach
  void close() {
    metrics.close();
  }

  @Test
  void shouldCountRequestsByActionAndOutcomeWhenTheTopologyReportsThem() {
    // when
    metrics.requestApplied(Action.SCHEDULE);
    metrics.requestApplied(Action.SCHEDULE);
    metrics.requestApplied(Action.CANCEL);
    metrics.requestRejected(Action.SCHEDULE, RejectionReason.BAD_TIME);
    metrics.requestRejected(null, RejectionReason.UNKNOWN_ACTION);
    metrics.requestRerouted();

    // then
    String scrape = metrics.scrape();
    assertThat(sample(scrape, "kdelay_requests_total{action=\"schedule\",outcome=\"applied\"}"))
        .hasValue(2);
    assertThat(sample(scrape, "kdelay_requests_total{action=\"cancel\",outcome=\"applied\"}"))
        .hasValue(1);
    assertThat(sample(scrape, "kdelay_requests_total{action=\"schedule\",outcome=\"rejected\"}"))
        .hasValue(1);
    assertThat(sample(scrape, "kdelay_requests_total{action=\"unknown\",outcome=\"rejected\"}"))
        .hasValue(1);
    assertThat(sample(scrape, "kdelay_requests_total{action=\"pause\",outcome=\"applied\"}"))
        .hasValue(0);
    assertThat(sample(scrape, "kdelay_rejections_total{reason=\"BAD_TIME\"}")).hasValue(1);
    assertThat(sample(scrape, "kdelay_rejections_total{reason=\"UNKNOWN_ACTION\"}")).hasValue(1);
    assertThat(sample(scrape, "kdelay_rejections_total{reason=\"TOO_FAR\"}")).hasValue(0);
    assertThat(sample(scrape, "kdelay_requests_rerouted_total")).hasValue(1);
  }

  @Test
  void shouldRecordLatenessInSecondsBucketsWhenTasksFire() {
    // when
    metrics.taskFired(3);
    metrics.taskFired(40);
    metrics.taskFired(2_000);

    // then
    String scrape = metrics.scrape();
    assertThat(sample(scrape, "kdelay_tasks_fired_total")).hasValue(3);
    assertThat(sample(scrape, "kdelay_fire_lateness_seconds_count")).hasValue(3);
    assertThat(sample(scrape, "kdelay_fire_lateness_seconds_sum")).hasValue(2.043);
    assertThat(sample(scrape, "kdelay_fire_lateness_seconds_bucket{le=\"0.005\"}")).hasValue(1);
    assertThat(sample(scrape, "kdelay_fire_lateness_seconds_bucket{le=\"0.05\"}")).hasValue(2);
    assertThat(sample(scrape, "kdelay_fire_lateness_seconds_bucket{le=\"+Inf\"}")).hasValue(3);
    assertThat(sample(scrape, "kdelay_fire_lateness_seconds_max")).hasValue(2);
  }

  @Test
  void shouldRecordWhatFireRateLimitsDeferredApartFromTheLateness() {
    // when: two tasks deferred by a fire-rate limit, by 200 ms and 4 s
    metrics.fireDeferred(200);
    metrics.fireDeferred(4_000);

    // then
    String scrape = metrics.scrape();
    assertThat(sample(scrape, "kdelay_fire_deferral_seconds_count")).hasValue(2);
    assertThat(sample(scrape, "kdelay_fire_deferral_seconds_sum")).hasValue(4.2);
    assertThat(sample(scrape, "kdelay_fire_deferral_seconds_bucket{le=\"0.25\"}")).hasValue(1);
    assertThat(sample(scrape, "kdelay_fire_lateness_seconds_count")).hasValue(0);
  }

  @Test
  void shouldCountCancelsSkipsUndeliverablesAndPunctuations() {
    // when
    metrics.taskCancelled();
    metrics.occurrenceSkipped();
    metrics.taskUndeliverable(RejectionReason.UNKNOWN_TOPIC);
    metrics.taskUndeliverable(RejectionReason.TOO_LARGE);
    metrics.punctuated(TimeUnit.MILLISECONDS.toNanos(4), 7);

    // then
    String scrape = metrics.scrape();
    assertThat(sample(scrape, "kdelay_tasks_cancelled_total")).hasValue(1);
    assertThat(sample(scrape, "kdelay_occurrences_skipped_total")).hasValue(1);
    assertThat(sample(scrape, "kdelay_tasks_undeliverable_total{reason=\"UNKNOWN_TOPIC\"}"))
        .hasValue(1);
    assertThat(sample(scrape, "kdelay_tasks_undeliverable_total{reason=\"TOO_LARGE\"}"))
        .hasValue(1);
    assertThat(sample(scrape, "kdelay_punctuation_duration_seconds_count")).hasValue(1);
    assertThat(sample(scrape, "kdelay_punctuation_duration_seconds_bucket{le=\"0.005\"}"))
        .hasValue(1);
    assertThat(sample(scrape, "kdelay_punctuation_tasks_bucket{le=\"10.0\"}")).hasValue(1);
    assertThat(sample(scrape, "kdelay_punctuation_tasks_sum")).hasValue(7);
  }

  @Test
  void shouldSumPartitionGaugesWhenScraped() {
    // given: one partition ten seconds behind, one idle
    long now = NOW.toEpochMilli();
    metrics.partitionOpened(new Gauges(0, 5, 1, now - 10_000, now - 10_000));
    metrics.partitionOpened(new Gauges(1, 7, 0, now + 60_000, now + 60_000));

    // when
    String scrape = metrics.scrape();

    // then
    assertThat(sample(scrape, "kdelay_tasks_pending")).hasValue(12);
    assertThat(sample(scrape, "kdelay_schedules_paused")).hasValue(1);
    assertThat(sample(scrape, "kdelay_partitions_active")).hasValue(2);
    assertThat(sample(scrape, "kdelay_oldest_overdue_task_age_seconds")).hasValue(10);
    assertThat(sample(scrape, "kdelay_next_due_timestamp_seconds"))
        .hasValue((now - 10_000) / 1000.0);
  }

  @Test
  void shouldReportNoOverdueAndNoCountWhileAPartitionIsCounted() {
    // given
    long now = NOW.toEpochMilli();
    Gauges counting =
        new Gauges(0, PartitionGauges.COUNTING, PartitionGauges.COUNTING, now + 5, now + 5);
    metrics.partitionOpened(counting);

    // when
    String scrape = metrics.scrape();

    // then
    assertThat(sample(scrape, "kdelay_tasks_pending")).hasValue(Double.NaN);
    assertThat(sample(scrape, "kdelay_oldest_overdue_task_age_seconds")).hasValue(0);

    // and when the partition closes
    metrics.partitionClosed(counting);
    assertThat(sample(metrics.scrape(), "kdelay_partitions_active")).hasValue(0);
    assertThat(sample(metrics.scrape(), "kdelay_next_due_timestamp_seconds")).hasValue(Double.NaN);
  }

  @Test
  void shouldExportBothStoresStateMetricsUnderOneTagKeyWhenKafkaStreamsReportsThem() {
    // given: what Kafka's binder registers for the schedules store and for the task store, whose
    // metrics scope differs
    Gauge.builder("kafka.stream.state.delete.rate", () -> 1.0)
        .tags("rocksdb.state.id", "delay-schedules", "task.id", "0_0")
        .register(metrics.registry());
    Gauge.builder("kafka.stream.state.delete.rate", () -> 2.0)
        .tags("time.bucketed.rocksdb.state.id", "delay-tasks", "task.id", "0_0")
        .register(metrics.registry());

    // when
    String scrape = metrics.scrape();

    // then
    assertThat(
            sample(
                scrape,
                "kafka_stream_state_delete_rate{rocksdb_state_id=\"delay-schedules\",task_id=\"0_0\"}"))
        .hasValue(1);
    assertThat(
            sample(
                scrape,
                "kafka_stream_state_delete_rate{rocksdb_state_id=\"delay-tasks\",task_id=\"0_0\"}"))
        .hasValue(2);
  }

  @Test
  void shouldExposeJvmMetricsWhenScraped() {
    String scrape = metrics.scrape();
    assertThat(scrape).contains("jvm_memory_used_bytes", "jvm_threads_live_threads");
  }

  /** The value of one sample line of a scrape, by its name and labels as written. */
  @Test
  void shouldCountEachTenantsFiresAndSchedulesWhenScraped() {
    // given: two tenants; two partitions, teama holding schedules on both, teamb on one
    metrics.tenants(List.of("teama", "teamb"));
    metrics.partitionOpened(new TenantGauges(0, Map.of("teama", 3L, "teamb", 2L)));
    metrics.partitionOpened(new TenantGauges(1, Map.of("teama", 4L)));

    // when: teama's tasks fire, one of them late
    metrics.tenantTaskFired("teama", 3);
    metrics.tenantTaskFired("teama", 1_500);
    String scrape = metrics.scrape();

    // then
    assertThat(sample(scrape, "kdelay_tenant_schedules_pending{tenant=\"teama\"}")).hasValue(7);
    assertThat(sample(scrape, "kdelay_tenant_schedules_pending{tenant=\"teamb\"}")).hasValue(2);
    assertThat(sample(scrape, "kdelay_tenant_tasks_fired_total{tenant=\"teama\"}")).hasValue(2);
    assertThat(sample(scrape, "kdelay_tenant_tasks_fired_total{tenant=\"teamb\"}")).hasValue(0);
    assertThat(sample(scrape, "kdelay_tenant_fire_lateness_seconds_count{tenant=\"teama\"}"))
        .hasValue(2);

    // and while a partition still counts what it holds, the tenant's figure is unknown
    metrics.partitionOpened(new TenantGauges(2, null));
    assertThat(
            sample(metrics.scrape(), "kdelay_tenant_schedules_pending{tenant=\"teamb\"}")
                .orElseThrow())
        .isNaN();
  }

  @Test
  void shouldGiveATenantItsOwnSeriesOfAScrapeAndNothingElse() {
    metrics.tenants(List.of("teama", "teamb"));
    metrics.partitionOpened(new TenantGauges(0, Map.of("teama", 3L, "teamb", 2L)));
    metrics.tenantTaskFired("teama", 3);
    metrics.tenantTaskFired("teamb", 3);
    metrics.taskFired(3);

    String teamas = ServiceMetrics.ofTenant(metrics.scrape(), "teama");

    assertThat(sample(teamas, "kdelay_tenant_schedules_pending{tenant=\"teama\"}")).hasValue(3);
    assertThat(sample(teamas, "kdelay_tenant_tasks_fired_total{tenant=\"teama\"}")).hasValue(1);
    assertThat(sample(teamas, "kdelay_tenant_fire_lateness_seconds_count{tenant=\"teama\"}"))
        .hasValue(1);
    assertThat(teamas)
        .contains("# TYPE kdelay_tenant_tasks_fired_total counter")
        .contains("# HELP kdelay_tenant_schedules_pending")
        .doesNotContain("teamb")
        .doesNotContain("kdelay_tasks_fired_total")
        .doesNotContain("jvm_")
        .doesNotContain("# TYPE kdelay_tasks_pending");
    // every line but comments is one of teama's series
    assertThat(teamas.lines().filter(line -> !line.startsWith("#")))
        .isNotEmpty()
        .allSatisfy(
            line -> assertThat(line).startsWith("kdelay_tenant_").contains("tenant=\"teama\""));
  }

  /** A partition's gauges that say only what its tenants hold. */
  private record TenantGauges(int partition, Map<String, Long> storedByTenant)
      implements PartitionGauges {
    @Override
    public long pendingTasks() {
      return 0;
    }

    @Override
    public long pausedSchedules() {
      return 0;
    }

    @Override
    public long nextDueMs() {
      return PartitionGauges.NONE;
    }

    @Override
    public long overdueSinceMs() {
      return PartitionGauges.NONE;
    }
  }

  public static OptionalDouble sample(String scrape, String series) {
    Map<String, String> samples =
        Arrays.stream(scrape.split("\n"))
            .filter(line -> !line.startsWith("#") && line.contains(" "))
            .collect(
                Collectors.toMap(
                    line -> line.substring(0, line.lastIndexOf(' ')),
                    line -> line.substring(line.lastIndexOf(' ') + 1),
                    (a, b) -> a));
    String value = samples.get(series);
    return value == null ? OptionalDouble.empty() : OptionalDouble.of(Double.parseDouble(value));
  }

  private record Gauges(
      int partition, long pendingTasks, long pausedSchedules, long nextDueMs, long overdueSinceMs)
      implements PartitionGauges {}
}

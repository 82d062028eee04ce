package dev.kdelay.topology;

import static dev.kdelay.topology.DelayDriver.START;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.topology.internals.store.MeteredScheduleStore;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The schedule store's metering layer: its reads and writes timed into Kafka Streams' state-store
 * metrics, at the DEBUG recording level as Kafka Streams' own stores are.
 */
class ScheduleStoreMetricsTest {

  private static final String GROUP = "stream-state-metrics";
  private static final String STORE_TAG = MeteredScheduleStore.METRICS_SCOPE + "-state-id";

  @TempDir Path stateDir;

  @Test
  void shouldTimeLookupsWritesDeletesScansAndSweepsWhenRecordingAtDebug() {
    try (DelayDriver delay =
        new DelayDriver(stateDir, Map.of(StreamsConfig.METRICS_RECORDING_LEVEL_CONFIG, "DEBUG"))) {
      // given: a schedule (a lookup and a put), a cancel (a lookup and a put of its marker), a
      // recurring schedule ended by its last fire (a delete)
      delay.scheduleAt("fires", START.plusSeconds(1), "payload");
      delay.scheduleAt("cancelled", START.plusSeconds(1), "payload");
      delay.request("cancelled", null);
      delay.request(
          "ends",
          "payload",
          DelayDriver.header(DelayHeaders.TARGET_TOPIC, DelayDriver.TARGET),
          DelayDriver.header(DelayHeaders.CRON, "* * * * * ?"),
          DelayDriver.header(DelayHeaders.MAX_FIRES, "1"));

      // when: both fire (due scans)
      delay.advanceTo(START.plusSeconds(3));

      // then (read at once: the rates and averages cover the last minute of the driver's clock)
      assertThat(delay.fired()).hasSize(2);
      for (String operation : new String[] {"get", "put", "delete", "range"}) {
        assertRecorded(delay, operation);
      }

      // when: the markers expire (a sweep)
      long retentionMs =
          Math.max(delay.config.firedRetentionMs(), delay.config.cancelRetentionMs());
      delay.advance(Duration.ofMillis(retentionMs).plusSeconds(1));

      // then
      assertRecorded(delay, "remove");
    }
  }

  private static void assertRecorded(DelayDriver delay, String operation) {
    assertThat(metric(delay, operation + "-rate"))
        .as("%s-rate of the schedule store", operation)
        .isGreaterThan(0.0);
    assertThat(metric(delay, operation + "-latency-avg"))
        .as("%s-latency-avg of the schedule store", operation)
        .isGreaterThan(0.0);
  }

  @Test
  void shouldRecordNothingAtTheDefaultInfoLevel() {
    try (DelayDriver delay = new DelayDriver(stateDir)) {
      // given
      delay.scheduleAt("fires", START.plusSeconds(1), "payload");

      // when
      delay.advanceTo(START.plusSeconds(2));

      // then: the metrics exist, as Kafka Streams' own stores' do, and record nothing
      assertThat(delay.fired()).hasSize(1);
      assertThat(metric(delay, "put-latency-avg")).isNaN();
      assertThat(metric(delay, "get-latency-avg")).isNaN();
    }
  }

  /** The value of one of the schedule store's metrics; fails if the store has no such metric. */
  private static double metric(DelayDriver delay, String name) {
    Map<MetricName, ? extends Metric> metrics = delay.driver.metrics();
    return metrics.entrySet().stream()
        .filter(entry -> entry.getKey().group().equals(GROUP))
        .filter(entry -> entry.getKey().name().equals(name))
        .filter(entry -> DelayTopology.SCHEDULES_STORE.equals(entry.getKey().tags().get(STORE_TAG)))
        .map(entry -> ((Number) entry.getValue().metricValue()).doubleValue())
        .findFirst()
        .orElseThrow(() -> new AssertionError("no metric " + name + " in " + names(metrics)));
  }

  private static String names(Map<MetricName, ? extends Metric> metrics) {
    return metrics.keySet().stream()
        .filter(name -> name.group().equals(GROUP))
        .map(name -> name.name() + name.tags())
        .sorted()
        .toList()
        .toString();
  }
}

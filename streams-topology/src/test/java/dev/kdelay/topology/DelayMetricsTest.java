package dev.kdelay.topology;

import static dev.kdelay.topology.DelayDriver.header;
import static dev.kdelay.topology.MeteredDriver.START;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.Action;
import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.topology.RecordingMetrics.Outcome;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the topology tells its {@link DelayMetrics}: events and the partition's gauges. */
class DelayMetricsTest {

  @TempDir Path stateDir;
  private MeteredDriver delay;

  @AfterEach
  void stop() {
    if (delay != null) {
      delay.close();
    }
  }

  private MeteredDriver start(Map<String, Object> overrides) {
    delay = new MeteredDriver(stateDir, overrides);
    return delay;
  }

  @Test
  void shouldCountRequestsByActionAndOutcomeWhenTheyApplyOrAreRejected() {
    // given
    start(Map.of());

    // when
    delay.scheduleAt("a", START.plusSeconds(60));
    delay.action("a", "cancel");
    delay.action("never-seen", "pause");
    delay.request("b", "x", header(DelayHeaders.ACTION, "explode"));
    delay.request("c", "x", header(DelayHeaders.AFTER, "PT1S"));

    // then
    assertThat(delay.metrics.requests)
        .containsExactly(
            new Outcome(Action.SCHEDULE, null),
            new Outcome(Action.CANCEL, null),
            new Outcome(Action.PAUSE, RejectionReason.NOT_APPLICABLE),
            new Outcome(null, RejectionReason.UNKNOWN_ACTION),
            new Outcome(Action.SCHEDULE, RejectionReason.MISSING_TARGET));
  }

  @Test
  void shouldReportLatenessWhenAPastDueTaskFires() {
    // given: due two seconds before it arrives
    start(Map.of());
    delay.scheduleAt("late", START.minusSeconds(2));

    // when
    delay.advanceTo(START.plusMillis(20));

    // then
    assertThat(delay.fired()).hasSize(1);
    assertThat(delay.metrics.latenesses).singleElement().isIn(2_005L, 2_010L);
  }

  @Test
  void shouldReportAPunctuationOnlyWhenItFoundSomethingDue() {
    // given
    start(Map.of());
    delay.advanceTo(START.plusSeconds(1));
    assertThat(delay.metrics.punctuations).isEmpty();

    // when
    delay.scheduleAt("one", START.plusMillis(1_500));
    delay.scheduleAt("two", START.plusMillis(1_500));
    delay.advanceTo(START.plusSeconds(3));

    // then
    assertThat(delay.metrics.punctuations).containsExactly(2);
  }

  @Test
  void shouldCountACancelOnlyWhenItRemovesASchedule() {
    // given
    start(Map.of());
    delay.scheduleAt("pending", START.plusSeconds(60));

    // when
    delay.action("unknown", "cancel");
    delay.action("pending", "cancel");
    delay.action("pending", "cancel");

    // then
    assertThat(delay.metrics.cancelled).isEqualTo(1);
  }

  @Test
  void shouldCountASkippedOccurrenceWhenAMissedOneDoesNotFire() {
    // given: every 10 s, skipping what an outage missed
    start(Map.of());
    delay.cron("skipper", "*/10 * * * * ?", header(DelayHeaders.MISFIRE, "skip"));

    // when: a five-minute stall
    delay.advance(Duration.ofMinutes(5));

    // then
    assertThat(delay.fired()).isEmpty();
    assertThat(delay.metrics.skipped).isEqualTo(1);
    assertThat(delay.metrics.latenesses).isEmpty();
  }

  @Test
  void shouldCountPendingAndPausedSchedulesWhenTheyChange() {
    // given
    start(Map.of());
    PartitionGauges gauges = delay.metrics.gauges();
    assertThat(gauges.pendingTasks()).isZero();

    // when / then
    delay.scheduleAt("a", START.plusSeconds(10));
    delay.scheduleAt("b", START.plusSeconds(20));
    delay.scheduleAt("b", START.plusSeconds(25)); // a replace is not a new schedule
    delay.cron("c", "*/30 * * * * ?");
    assertThat(gauges.pendingTasks()).isEqualTo(3);

    delay.action("c", "pause");
    assertThat(gauges.pendingTasks()).isEqualTo(2);
    assertThat(gauges.pausedSchedules()).isEqualTo(1);

    delay.action("b", "cancel");
    delay.advanceTo(START.plusSeconds(11)); // "a" fires
    assertThat(gauges.pendingTasks()).isZero();

    delay.action("c", "resume");
    assertThat(gauges.pendingTasks()).isEqualTo(1);
    assertThat(gauges.pausedSchedules()).isZero();
  }

  @Test
  void shouldPublishNextDueTimeWhileIdle() {
    // given
    start(Map.of());
    delay.advance(Duration.ofMillis(5));
    assertThat(delay.metrics.gauges().nextDueMs()).isEqualTo(PartitionGauges.NONE);

    // when
    Instant due = START.plusSeconds(30);
    delay.scheduleAt("later", due);
    delay.advance(Duration.ofMillis(5));

    // then: not overdue, so the oldest waiting entry is the one due next
    assertThat(delay.metrics.gauges().nextDueMs()).isEqualTo(due.toEpochMilli());
    assertThat(delay.metrics.gauges().overdueSinceMs()).isEqualTo(due.toEpochMilli());
  }

  @Test
  void shouldReportOverdueSinceWhileABacklogWaitsAndClearItWhenDrained() {
    // given: five tasks due at once, two fires per punctuation; fired tasks forgotten at once, so
    // that no marker's expiry shows as the next due time
    start(
        Map.of(
            DelayConfig.MAX_FIRES_PER_PUNCTUATION_CONFIG,
            2,
            DelayConfig.FIRED_RETENTION_CONFIG,
            0L));
    Instant due = START.plusSeconds(1);
    for (int i = 0; i < 5; i++) {
      delay.scheduleAt("task-" + i, due);
    }
    PartitionGauges gauges = delay.metrics.gauges();

    // when: one punctuation, well after the due time
    delay.advance(Duration.ofSeconds(10));

    // then
    assertThat(delay.fired()).hasSize(2);
    assertThat(gauges.overdueSinceMs()).isEqualTo(due.toEpochMilli());

    // and when the backlog drains
    delay.advance(Duration.ofMillis(5));
    delay.advance(Duration.ofMillis(5));
    assertThat(delay.fired()).hasSize(3);
    assertThat(gauges.overdueSinceMs()).isEqualTo(PartitionGauges.NONE);
    assertThat(gauges.nextDueMs()).isEqualTo(PartitionGauges.NONE);
    assertThat(delay.metrics.punctuations).containsExactly(2, 2, 1);
  }

  @Test
  void shouldCloseThePartitionsGaugesWhenTheTopologyCloses() {
    // given
    start(Map.of());
    RecordingMetrics metrics = delay.metrics;
    PartitionGauges gauges = metrics.gauges();
    assertThat(gauges.partition()).isZero();
    assertThat(metrics.closed).isEmpty();

    // when
    delay.close();
    delay = null;

    // then
    assertThat(metrics.closed).containsExactly(gauges);
  }
}

package dev.kdelay.topology;

import static dev.kdelay.topology.DelayDriver.header;
import static dev.kdelay.topology.MeteredDriver.START;
import static dev.kdelay.topology.MeteredDriver.TARGET;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.schemas.CronSpec;
import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.topology.ScheduleView.Status;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reading the stores for operators: one id's status, and pending tasks in due order. */
class ScheduleStoresTest {

  @TempDir Path stateDir;
  private MeteredDriver delay;
  private KeyValueStore<Bytes, byte[]> schedules;
  private KeyValueStore<Bytes, byte[]> tasks;

  @BeforeEach
  void start() {
    delay = new MeteredDriver(stateDir, Map.of());
    schedules = delay.store(DelayTopology.SCHEDULES_STORE);
    tasks = delay.store(DelayTopology.TASKS_STORE);
  }

  @AfterEach
  void stop() {
    delay.close();
  }

  @Test
  void shouldViewAPendingScheduleWithItsNextDueTimeAndTarget() {
    // given
    Instant due = START.plusSeconds(90);
    delay.request(
        "order-42",
        "payload",
        header(DelayHeaders.TARGET_TOPIC, TARGET),
        header(DelayHeaders.TARGET_KEY, "customer-7"),
        header(DelayHeaders.FIRE_AT, due.toString()));

    // when
    ScheduleView view = ScheduleStores.view(schedules, tasks, "order-42");

    // then
    assertThat(view.status()).isEqualTo(Status.PENDING);
    assertThat(view.nextDueMs()).hasValue(due.toEpochMilli());
    assertThat(view.task()).isPresent();
    assertThat(view.task().get().schedule().target().topic()).isEqualTo(TARGET);
    assertThat(new String(view.task().get().schedule().target().key(), StandardCharsets.UTF_8))
        .isEqualTo("customer-7");
    assertThat(view.task().get().occurrence()).isEqualTo(1);
  }

  @Test
  void shouldViewTheNextOccurrenceWhenARecurringScheduleHasFired() {
    // given: every 10 s, from 12:00:00
    delay.cron("tick", "*/10 * * * * ?");
    delay.advanceTo(START.plusSeconds(11));

    // when
    ScheduleView view = ScheduleStores.view(schedules, tasks, "tick");

    // then: 12:00:00 and 12:00:10 fired; the third is next
    assertThat(view.status()).isEqualTo(Status.PENDING);
    assertThat(view.nextDueMs()).hasValue(START.plusSeconds(20).toEpochMilli());
    assertThat(view.task().orElseThrow().occurrence()).isEqualTo(3);
    assertThat(view.task().orElseThrow().schedule().timing()).isInstanceOf(CronSpec.class);
  }

  @Test
  void shouldViewPausedAndCancelledSchedules() {
    // given
    delay.cron("paused", "*/10 * * * * ?");
    delay.action("paused", "pause");
    delay.scheduleAt("cancelled", START.plusSeconds(60));
    delay.action("cancelled", "cancel");

    // when
    ScheduleView paused = ScheduleStores.view(schedules, tasks, "paused");
    ScheduleView cancelled = ScheduleStores.view(schedules, tasks, "cancelled");

    // then
    assertThat(paused.status()).isEqualTo(Status.PAUSED);
    assertThat(paused.nextDueMs()).isEmpty();
    assertThat(paused.task()).isPresent();
    assertThat(cancelled.status()).isEqualTo(Status.CANCELLED);
    assertThat(cancelled.forgottenAtMs()).hasValue(START.plusSeconds(3600).toEpochMilli());
    assertThat(cancelled.task()).isEmpty();
  }

  @Test
  void shouldViewFiredWhenAOneShotHasFiredAndUnknownWhenTheIdWasNeverSeen() {
    // given
    delay.scheduleAt("once", START.plusSeconds(1));
    delay.advanceTo(START.plusSeconds(2));

    // when
    ScheduleView fired = ScheduleStores.view(schedules, tasks, "once");

    // then: remembered for the fired retention (1 h by default) from the fire
    assertThat(delay.fired()).hasSize(1);
    assertThat(fired.status()).isEqualTo(Status.FIRED);
    assertThat(fired.forgottenAtMs().getAsLong())
        .isBetween(
            START.plusSeconds(1).plus(Duration.ofHours(1)).toEpochMilli(),
            START.plusSeconds(2).plus(Duration.ofHours(1)).toEpochMilli());
    assertThat(fired.nextDueMs()).isEmpty();
    assertThat(fired.task()).isEmpty();
    assertThat(ScheduleStores.view(schedules, tasks, "never"))
        .isEqualTo(ScheduleView.unknown("never"));
  }

  @Test
  void shouldListPendingTasksInDueOrderPageByPage() {
    // given: ten tasks, two of them due at the same time, scheduled out of order
    long[] offsets = {50, 10, 90, 30, 30, 70, 20, 60, 80, 40};
    for (int i = 0; i < offsets.length; i++) {
      delay.scheduleAt("task-" + i, START.plusSeconds(offsets[i]));
    }

    // when: pages of three, each after the previous page's last task
    List<PendingTask> all = new ArrayList<>();
    List<PendingTask> page = ScheduleStores.pending(tasks, 0, null, Long.MAX_VALUE, 3);
    while (!page.isEmpty()) {
      all.addAll(page);
      PendingTask last = page.get(page.size() - 1);
      page = ScheduleStores.pending(tasks, last.dueMs(), last.id(), Long.MAX_VALUE, 3);
    }

    // then
    assertThat(all)
        .extracting(PendingTask::id)
        .containsExactly(
            "task-1", "task-6", "task-3", "task-4", "task-9", "task-0", "task-7", "task-5",
            "task-8", "task-2");
    assertThat(all).isSortedAccordingTo(PendingTask.DUE_ORDER);
    assertThat(all.get(0).task().schedule().target().topic()).isEqualTo(TARGET);
  }

  @Test
  void shouldListOnlyTasksDueBeforeTheBoundAndNeitherPausedNorCancelled() {
    // given
    delay.scheduleAt("soon", START.plusSeconds(10));
    delay.scheduleAt("later", START.plusSeconds(100));
    delay.scheduleAt("cancelled", START.plusSeconds(5));
    delay.action("cancelled", "cancel");
    delay.cron("paused", "*/10 * * * * ?");
    delay.action("paused", "pause");

    // when
    List<PendingTask> due =
        ScheduleStores.pending(tasks, 0, null, START.plusSeconds(100).toEpochMilli(), 10);
    List<PendingTask> all = ScheduleStores.pending(tasks, 0, null, Long.MAX_VALUE, 10);

    // then: "later" is due exactly at the bound, which is exclusive
    assertThat(due).extracting(PendingTask::id).containsExactly("soon");
    assertThat(all).extracting(PendingTask::id).containsExactly("soon", "later");
  }

  @Test
  void shouldRejectANonPositiveLimit() {
    assertThatThrownBy(() -> ScheduleStores.pending(tasks, 0, null, Long.MAX_VALUE, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("limit");
  }
}

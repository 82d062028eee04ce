package dev.kdelay.topology;

import static dev.kdelay.topology.DelayDriver.header;
import static dev.kdelay.topology.MeteredDriver.START;
import static dev.kdelay.topology.MeteredDriver.TARGET;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.schemas.CronSpec;
import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.topology.ReadableSchedules.Listed;
import dev.kdelay.topology.ScheduleView.Status;
import dev.kdelay.topology.internals.store.ScheduleEntry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reading the stores for operators: one id's status, and pending tasks in due order. */
class ScheduleStoresTest {

  @TempDir Path stateDir;
  private MeteredDriver delay;
  private ReadableSchedules schedules;

  @BeforeEach
  void start() {
    delay = new MeteredDriver(stateDir, Map.of());
    schedules = StoredSchedules.of(delay.driver);
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
    ScheduleView view = schedules.view("order-42").value();

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
    ScheduleView view = schedules.view("tick").value();

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
    ScheduleView paused = schedules.view("paused").value();
    ScheduleView cancelled = schedules.view("cancelled").value();

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
    ScheduleView fired = schedules.view("once").value();

    // then: remembered for the fired retention (1 h by default) from the fire
    assertThat(delay.fired()).hasSize(1);
    assertThat(fired.status()).isEqualTo(Status.FIRED);
    assertThat(fired.forgottenAtMs().getAsLong())
        .isBetween(
            START.plusSeconds(1).plus(Duration.ofHours(1)).toEpochMilli(),
            START.plusSeconds(2).plus(Duration.ofHours(1)).toEpochMilli());
    assertThat(fired.nextDueMs()).isEmpty();
    assertThat(fired.task()).isEmpty();
    assertThat(schedules.view("never").value()).isEqualTo(ScheduleView.unknown("never"));
  }

  @Test
  void shouldListListedsInDueOrderPageByPage() {
    // given: ten tasks, two of them due at the same time, scheduled out of order
    long[] offsets = {50, 10, 90, 30, 30, 70, 20, 60, 80, 40};
    for (int i = 0; i < offsets.length; i++) {
      delay.scheduleAt("task-" + i, START.plusSeconds(offsets[i]));
    }

    // when: pages of three, each after the previous page's last task
    List<Listed> all = new ArrayList<>();
    List<Listed> page = schedules.pending(0, null, Long.MAX_VALUE, 3, Long.MAX_VALUE).tasks();
    while (!page.isEmpty()) {
      all.addAll(page);
      Listed last = page.get(page.size() - 1);
      page = schedules.pending(last.dueMs(), last.id(), Long.MAX_VALUE, 3, Long.MAX_VALUE).tasks();
    }

    // then
    assertThat(all)
        .extracting(Listed::id)
        .containsExactly(
            "task-1", "task-6", "task-3", "task-4", "task-9", "task-0", "task-7", "task-5",
            "task-8", "task-2");
    assertThat(all).isSortedAccordingTo(Listed.DUE_ORDER);
    assertThat(all.get(0).task().value().target().topic()).isEqualTo(TARGET);
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
    List<Listed> due =
        schedules
            .pending(0, null, START.plusSeconds(100).toEpochMilli(), 10, Long.MAX_VALUE)
            .tasks();
    List<Listed> all = schedules.pending(0, null, Long.MAX_VALUE, 10, Long.MAX_VALUE).tasks();

    // then: "later" is due exactly at the bound, which is exclusive
    assertThat(due).extracting(Listed::id).containsExactly("soon");
    assertThat(all).extracting(Listed::id).containsExactly("soon", "later");
  }

  @Test
  void shouldStopAShareAtItsByteBudgetAndWalkEveryLargeTaskOnceByCursor() {
    // given: 50 tasks with 500 KB payloads
    byte[] large = new byte[500 * 1024];
    for (int i = 0; i < 50; i++) {
      delay.request(
          String.format("big-%02d", i),
          new String(large, StandardCharsets.ISO_8859_1),
          header(DelayHeaders.TARGET_TOPIC, TARGET),
          header(DelayHeaders.FIRE_AT, Long.toString(START.plusSeconds(10 + i).toEpochMilli())));
    }
    long budget = 2L * 1024 * 1024;

    // when: pages of up to 100 tasks within 2 MiB, each after the previous page's last task
    List<Listed> all = new ArrayList<>();
    ReadableSchedules.Listing page = schedules.pending(0, null, Long.MAX_VALUE, 100, budget);
    int pages = 0;
    while (!page.tasks().isEmpty()) {
      pages++;
      // then: a page reads at most one task beyond its budget, and says it stopped there
      assertThat((page.tasks().size() - 1) * 500L * 1024).isLessThan(budget);
      assertThat(page.complete()).isEqualTo(all.size() + page.tasks().size() == 50);
      all.addAll(page.tasks());
      Listed last = page.tasks().get(page.tasks().size() - 1);
      page = schedules.pending(last.dueMs(), last.id(), Long.MAX_VALUE, 100, budget);
    }

    // and: every task once, in due order
    assertThat(pages).as("five tasks a page: the fifth crosses the budget").isEqualTo(10);
    assertThat(all).extracting(Listed::id).doesNotHaveDuplicates().hasSize(50);
    assertThat(all).isSortedAccordingTo(Listed.DUE_ORDER);
  }

  @Test
  void shouldListATaskThatCannotBeDecodedAsUnreadable() {
    // given: two tasks, one of them damaged in the store
    delay.scheduleAt("fine", START.plusSeconds(10));
    delay.scheduleAt("broken", START.plusSeconds(20));
    StoredSchedules.damage(
        delay.driver,
        "broken",
        new ScheduleEntry(
                ScheduleEntry.State.SCHEDULED,
                START.plusSeconds(20).toEpochMilli(),
                0,
                new byte[] {0x7f, 1, 2})
            .toBytes());

    // when
    List<Listed> listed = schedules.pending(0, null, Long.MAX_VALUE, 10, Long.MAX_VALUE).tasks();

    // then: both listed in due order, the damaged one as unreadable; its view is unreadable too
    assertThat(listed).extracting(Listed::id).containsExactly("fine", "broken");
    assertThat(listed.get(0).task().isReadable()).isTrue();
    assertThat(listed.get(1).task()).isInstanceOf(Decoded.Unreadable.class);
    assertThat(schedules.view("broken")).isInstanceOf(Decoded.Unreadable.class);
  }

  @Test
  void shouldRejectANonPositiveLimit() {
    assertThatThrownBy(() -> schedules.pending(0, null, Long.MAX_VALUE, 0, Long.MAX_VALUE))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("limit");
  }
}

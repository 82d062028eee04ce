package dev.kdelay.topology;

import static dev.kdelay.topology.DelayDriver.TARGET;
import static dev.kdelay.topology.DelayDriver.header;
import static dev.kdelay.topology.DelayDriver.headerText;
import static dev.kdelay.topology.DelayDriver.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The operator's manual actions, through the request topic: trigger now and reschedule, for
 * one-shot and recurring schedules, pending or paused.
 */
class ManualActionsTest {

  private static final String EVERY_10_SECONDS = "*/10 * * * * ?";
  private static final Header TO_TARGET = header(DelayHeaders.TARGET_TOPIC, TARGET);
  private static final Instant NOON = Instant.parse("2026-06-01T12:00:00Z");

  @TempDir Path stateDir;
  private CronDriver delay;

  @AfterEach
  void stop() {
    if (delay != null) {
      delay.close();
    }
  }

  @Test
  void shouldFireAPendingOneShotAtOnceWithItsUsualKeyAndNeverAgain() {
    // given: due in an hour
    delay = new CronDriver(stateDir, NOON);
    delay.request("order-1", "v", TO_TARGET, header(DelayHeaders.AFTER, "PT1H"));
    delay.advance(Duration.ofSeconds(1));

    // when
    delay.request("order-1", null, action("trigger"));
    delay.advance(Duration.ofSeconds(1));

    // then: fired now, as the occurrence due in an hour
    long dueMs = NOON.plus(Duration.ofHours(1)).toEpochMilli();
    List<TestRecord<byte[], byte[]>> fired = delay.fired();
    assertThat(fired).hasSize(1);
    TestRecord<byte[], byte[]> record = fired.get(0);
    assertThat(text(record.value())).isEqualTo("v");
    assertThat(headerText(record.headers(), DelayHeaders.IDEMPOTENCY_KEY))
        .isEqualTo("order-1@" + dueMs);
    assertThat(headerText(record.headers(), DelayHeaders.DUE_AT)).isEqualTo(Long.toString(dueMs));
    // stamped with the fire time: a broker refuses timestamps an hour ahead
    assertThat(record.timestamp()).isEqualTo(NOON.plusSeconds(1).toEpochMilli());
    assertThat(delay.view("order-1").status()).isEqualTo(ScheduleView.Status.FIRED);

    // when: its due time passes, and the same trigger arrives again
    delay.request("order-1", null, action("trigger"));
    delay.runUntil(NOON.plus(Duration.ofHours(1)).plusSeconds(5), Duration.ofMinutes(1));

    // then: nothing fires twice
    assertThat(delay.fired()).isEmpty();
    assertThat(delay.deadLetters())
        .extracting(ManualActionsTest::error)
        .containsExactly("NOT_APPLICABLE");
  }

  @Test
  void shouldNotFireTheOccurrenceATriggerFiredWhilePausedWhenPausedAgainAndResumed() {
    // given: every ten seconds, paused, and its next occurrence (12:00:10) triggered while paused
    delay = new CronDriver(stateDir, NOON.plusSeconds(1));
    delay.request("tick", "v", TO_TARGET, cron(EVERY_10_SECONDS));
    delay.request("tick", null, action("pause"));
    delay.request("tick", null, action("trigger"));
    assertThat(delay.fired())
        .extracting(r -> headerText(r.headers(), DelayHeaders.IDEMPOTENCY_KEY))
        .containsExactly("tick@" + NOON.plusSeconds(10).toEpochMilli());

    // when: paused again (it already is) and resumed before 12:00:10
    delay.request("tick", null, action("pause"));
    delay.request("tick", null, action("resume"));
    delay.runUntil(NOON.plusSeconds(25), Duration.ofSeconds(1));

    // then: 12:00:10 fired once, by the trigger; the schedule goes on from 12:00:20
    assertThat(delay.fired())
        .extracting(r -> headerText(r.headers(), DelayHeaders.IDEMPOTENCY_KEY))
        .containsExactly("tick@" + NOON.plusSeconds(20).toEpochMilli());
  }

  /**
   * "topology: sequences with crashes" (random seed, case 8,439 of 20,000), shrunk to: a cron every
   * second, trigger, pause, resume. The trigger fired the next occurrence ahead of its time; a
   * pause forgot it, and a resume before its due time fired it again, under the same idempotency
   * key.
   */
  @Test
  void shouldNotFireTheOccurrenceATriggerFiredAheadWhenPausedAndResumedBeforeItsTime() {
    // given: every ten seconds, running, its next occurrence (12:00:10) triggered at 12:00:01
    delay = new CronDriver(stateDir, NOON.plusSeconds(1));
    delay.request("tick", "v", TO_TARGET, cron(EVERY_10_SECONDS));
    delay.request("tick", null, action("trigger"));
    assertThat(delay.fired())
        .extracting(ManualActionsTest::idempotencyKey)
        .containsExactly(key("tick", NOON.plusSeconds(10)));

    // when: paused and resumed before 12:00:10
    delay.request("tick", null, action("pause"));
    delay.request("tick", null, action("resume"));
    delay.runUntil(NOON.plusSeconds(25), Duration.ofSeconds(1));

    // then: 12:00:10 fired once, by the trigger; the schedule goes on from 12:00:20
    assertThat(delay.fired())
        .extracting(ManualActionsTest::idempotencyKey)
        .containsExactly(key("tick", NOON.plusSeconds(20)));
  }

  @Test
  void shouldFireTheNextOccurrenceOfARecurringScheduleAndGoOnFromTheOneAfter() {
    // given: every ten seconds, 12:00:00 fired
    delay = new CronDriver(stateDir, NOON.minusSeconds(5));
    delay.request("tick", "v", TO_TARGET, cron(EVERY_10_SECONDS));
    delay.runUntil(NOON.plusSeconds(2), Duration.ofSeconds(1));
    assertThat(delay.fired())
        .extracting(ManualActionsTest::idempotencyKey)
        .containsExactly(key("tick", NOON));

    // when: triggered at 12:00:02
    delay.request("tick", null, action("trigger"));
    delay.advance(Duration.ofMillis(100));

    // then: 12:00:10 fires now, as occurrence 2
    List<TestRecord<byte[], byte[]>> triggered = delay.fired();
    assertThat(triggered)
        .extracting(ManualActionsTest::idempotencyKey)
        .containsExactly(key("tick", NOON.plusSeconds(10)));
    assertThat(triggered)
        .extracting(r -> headerText(r.headers(), DelayHeaders.OCCURRENCE))
        .containsExactly("2");

    // when: the clock runs to 12:00:25
    delay.runUntil(NOON.plusSeconds(25), Duration.ofSeconds(1));

    // then: 12:00:10 does not fire again; the schedule goes on at 12:00:20
    assertThat(delay.fired())
        .extracting(ManualActionsTest::idempotencyKey)
        .containsExactly(key("tick", NOON.plusSeconds(20)));
    assertThat(delay.deadLetters()).isEmpty();
  }

  @Test
  void shouldFireAPausedScheduleOnceAndKeepItPausedAndResumeAfterTheTriggeredOccurrence() {
    // given: every ten seconds, paused at 12:00:03 after 12:00:00 fired
    delay = new CronDriver(stateDir, NOON.minusSeconds(5));
    delay.request("tick", "v", TO_TARGET, cron(EVERY_10_SECONDS));
    delay.runUntil(NOON.plusSeconds(3), Duration.ofSeconds(1));
    delay.request("tick", null, action("pause"));
    assertThat(delay.fired()).hasSize(1);

    // when: triggered at 12:00:04
    delay.advance(Duration.ofSeconds(1));
    delay.request("tick", null, action("trigger"));
    delay.runUntil(NOON.plusSeconds(30), Duration.ofSeconds(1));

    // then: the occurrence a resume would start with (12:00:10) fired once, and nothing after
    assertThat(delay.fired())
        .extracting(ManualActionsTest::idempotencyKey)
        .containsExactly(key("tick", NOON.plusSeconds(10)));
    assertThat(delay.view("tick").status()).isEqualTo(ScheduleView.Status.PAUSED);

    // when: triggered again at 12:00:30, then resumed at 12:00:31
    delay.request("tick", null, action("trigger"));
    delay.advance(Duration.ofSeconds(1));
    delay.request("tick", null, action("resume"));
    delay.runUntil(NOON.plusSeconds(55), Duration.ofSeconds(1));

    // then: 12:00:30 once, by the trigger; the resumed schedule goes on at 12:00:40
    assertThat(delay.fired())
        .extracting(ManualActionsTest::idempotencyKey)
        .containsExactly(
            key("tick", NOON.plusSeconds(30)),
            key("tick", NOON.plusSeconds(40)),
            key("tick", NOON.plusSeconds(50)));
    assertThat(delay.deadLetters()).isEmpty();
  }

  @Test
  void shouldResumeAfterAnOccurrenceTriggeredWhilePausedEvenBeforeItsTime() {
    // given: every ten seconds, paused at 12:00:03
    delay = new CronDriver(stateDir, NOON.minusSeconds(5));
    delay.request("tick", "v", TO_TARGET, cron(EVERY_10_SECONDS));
    delay.runUntil(NOON.plusSeconds(3), Duration.ofSeconds(1));
    delay.request("tick", null, action("pause"));
    delay.fired();

    // when: triggered at 12:00:04 (fires 12:00:10 early), resumed at 12:00:05
    delay.advance(Duration.ofSeconds(1));
    delay.request("tick", null, action("trigger"));
    delay.advance(Duration.ofSeconds(1));
    delay.request("tick", null, action("resume"));
    delay.runUntil(NOON.plusSeconds(25), Duration.ofSeconds(1));

    // then: 12:00:10 fired once, by the trigger; the resumed schedule starts at 12:00:20
    assertThat(delay.fired())
        .extracting(ManualActionsTest::idempotencyKey)
        .containsExactly(key("tick", NOON.plusSeconds(10)), key("tick", NOON.plusSeconds(20)));
  }

  @Test
  void shouldEndARecurringScheduleWhoseLastFireATriggerTook() {
    delay = new CronDriver(stateDir, NOON.minusSeconds(5));
    delay.request(
        "twice", "v", TO_TARGET, cron(EVERY_10_SECONDS), header(DelayHeaders.MAX_FIRES, "2"));
    delay.runUntil(NOON.plusSeconds(1), Duration.ofSeconds(1));

    delay.request("twice", null, action("trigger"));
    delay.runUntil(NOON.plusSeconds(40), Duration.ofSeconds(1));

    assertThat(delay.fired())
        .extracting(ManualActionsTest::idempotencyKey)
        .containsExactly(key("twice", NOON), key("twice", NOON.plusSeconds(10)));
    assertThat(delay.view("twice").status()).isEqualTo(ScheduleView.Status.UNKNOWN);
  }

  /**
   * "topology: sequences with crashes" (the model's error, not kdelay's), shrunk to: a cron
   * schedule with max fires 1, paused, then triggered. The triggered occurrence was its last: the
   * schedule ends, paused or not.
   */
  @Test
  void shouldEndAPausedScheduleWhoseLastFireATriggerTook() {
    // given: every ten seconds, at most once, paused before its first occurrence
    delay = new CronDriver(stateDir, NOON.minusSeconds(5));
    delay.request(
        "once", "v", TO_TARGET, cron(EVERY_10_SECONDS), header(DelayHeaders.MAX_FIRES, "1"));
    delay.request("once", null, action("pause"));

    // when
    delay.request("once", null, action("trigger"));
    delay.request("once", null, action("resume"));
    delay.runUntil(NOON.plusSeconds(30), Duration.ofSeconds(1));

    // then: the occurrence a resume would start with fired, once, and the schedule is over
    assertThat(delay.fired())
        .extracting(ManualActionsTest::idempotencyKey)
        .containsExactly(key("once", NOON));
    assertThat(delay.view("once").status()).isEqualTo(ScheduleView.Status.UNKNOWN);
    assertThat(delay.deadLetters())
        .extracting(ManualActionsTest::error)
        .containsExactly("NOT_APPLICABLE"); // the resume: nothing is left to resume
  }

  @Test
  void shouldDeadLetterATriggerOfAnUnknownCancelledOrFiredId() {
    delay = new CronDriver(stateDir, NOON);
    delay.request("gone", "v", TO_TARGET, header(DelayHeaders.AFTER, "PT1S"));
    delay.request("cancelled", "v", TO_TARGET, header(DelayHeaders.AFTER, "PT1H"));
    delay.request("cancelled", null);
    delay.runUntil(NOON.plusSeconds(2), Duration.ofSeconds(1));
    assertThat(delay.fired()).hasSize(1);

    delay.request("nobody", null, action("trigger"));
    delay.request("cancelled", null, action("trigger"));
    delay.request("gone", null, action("trigger"));
    delay.advance(Duration.ofSeconds(1));

    assertThat(delay.fired()).isEmpty();
    assertThat(delay.deadLetters())
        .extracting(ManualActionsTest::error)
        .containsExactly("NOT_APPLICABLE", "NOT_APPLICABLE", "NOT_APPLICABLE");
  }

  @Test
  void shouldMoveAOneShotToANewTimeKeepingItsPayloadTargetAndHeaders() {
    // given: due in an hour, with a carried header
    delay = new CronDriver(stateDir, NOON);
    delay.request(
        "order-1", "v", TO_TARGET, header(DelayHeaders.AFTER, "PT1H"), header("trace", "t-1"));
    delay.advance(Duration.ofSeconds(1));

    // when: moved to 12:00:30, without a payload
    delay.request(
        "order-1",
        null,
        action("reschedule"),
        header(DelayHeaders.FIRE_AT, "2026-06-01T12:00:30Z"));
    delay.runUntil(NOON.plusSeconds(29), Duration.ofSeconds(1));
    assertThat(delay.fired()).isEmpty();
    delay.runUntil(NOON.plus(Duration.ofHours(2)), Duration.ofMinutes(1));

    // then: it fires once, at the new time, as it was
    List<TestRecord<byte[], byte[]>> fired = delay.fired();
    assertThat(fired).hasSize(1);
    assertThat(fired.get(0).timestamp()).isEqualTo(NOON.plusSeconds(30).toEpochMilli());
    assertThat(text(fired.get(0).value())).isEqualTo("v");
    assertThat(headerText(fired.get(0).headers(), "trace")).isEqualTo("t-1");
    assertThat(delay.deadLetters()).isEmpty();
  }

  @Test
  void shouldTurnAOneShotIntoARecurringScheduleAndBack() {
    delay = new CronDriver(stateDir, NOON.minusSeconds(5));
    delay.request("job", "v", TO_TARGET, header(DelayHeaders.AFTER, "PT1H"));

    delay.request("job", null, action("reschedule"), cron(EVERY_10_SECONDS));
    delay.runUntil(NOON.plusSeconds(15), Duration.ofSeconds(1));
    assertThat(delay.fired())
        .extracting(ManualActionsTest::idempotencyKey)
        .containsExactly(key("job", NOON), key("job", NOON.plusSeconds(10)));

    delay.request("job", null, action("reschedule"), header(DelayHeaders.AFTER, "PT30S"));
    delay.runUntil(NOON.plusSeconds(60), Duration.ofSeconds(1));
    assertThat(delay.fired())
        .extracting(ManualActionsTest::idempotencyKey)
        .containsExactly(key("job", NOON.plusSeconds(45)));
    assertThat(delay.deadLetters()).isEmpty();
  }

  @Test
  void shouldKeepAPausedScheduleRescheduledToACronExpressionPausedAndRefuseAOneShotTime() {
    delay = new CronDriver(stateDir, NOON.minusSeconds(5));
    delay.request("job", "v", TO_TARGET, cron(EVERY_10_SECONDS));
    delay.request("job", null, action("pause"));
    delay.advance(Duration.ofSeconds(1));

    delay.request("job", null, action("reschedule"), cron("0 * * * * ?"));
    delay.request("job", null, action("reschedule"), header(DelayHeaders.AFTER, "PT5S"));
    delay.runUntil(NOON.plusSeconds(70), Duration.ofSeconds(1));

    assertThat(delay.fired()).isEmpty();
    assertThat(delay.view("job").status()).isEqualTo(ScheduleView.Status.PAUSED);
    assertThat(delay.deadLetters())
        .extracting(ManualActionsTest::error)
        .containsExactly("NOT_APPLICABLE");

    delay.request("job", null, action("resume"));
    delay.runUntil(NOON.plusSeconds(125), Duration.ofSeconds(1));
    assertThat(delay.fired())
        .extracting(ManualActionsTest::idempotencyKey)
        .containsExactly(key("job", NOON.plusSeconds(120)));
  }

  @Test
  void shouldDeadLetterABadReschedule() {
    delay = new CronDriver(stateDir, NOON);
    delay.request("job", "v", TO_TARGET, header(DelayHeaders.AFTER, "PT1H"));

    delay.request("job", null, action("reschedule"));
    delay.request("job", null, action("reschedule"), TO_TARGET, header(DelayHeaders.AFTER, "PT1S"));
    delay.request("nobody", null, action("reschedule"), header(DelayHeaders.AFTER, "PT1S"));
    delay.runUntil(NOON.plusSeconds(5), Duration.ofSeconds(1));

    assertThat(delay.deadLetters())
        .extracting(ManualActionsTest::error)
        .containsExactly("MISSING_TIME", "BAD_HEADER", "NOT_APPLICABLE");
    assertThat(delay.fired()).isEmpty();
    assertThat(delay.view("job").nextDueMs())
        .hasValue(NOON.plus(Duration.ofHours(1)).toEpochMilli());
  }

  private static Header cron(String expression) {
    return header(DelayHeaders.CRON, expression);
  }

  private static Header action(String action) {
    return header(DelayHeaders.ACTION, action);
  }

  private static String key(String id, Instant due) {
    return id + "@" + due.toEpochMilli();
  }

  private static String idempotencyKey(TestRecord<byte[], byte[]> record) {
    return headerText(record.headers(), DelayHeaders.IDEMPOTENCY_KEY);
  }

  private static String error(TestRecord<byte[], byte[]> record) {
    return headerText(record.headers(), DelayHeaders.ERROR);
  }
}

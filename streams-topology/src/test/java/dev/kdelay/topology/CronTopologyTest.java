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
import java.util.stream.Stream;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Recurring schedules end to end: cadence, daylight-saving changes, bounds, misfire policies after
 * an outage, pause and resume, replace and cancel.
 *
 * <p>An outage is one large step of the wall clock: the driver punctuates once per step, so nothing
 * fires during it, as when every instance is down.
 */
class CronTopologyTest {

  private static final String EVERY_10_SECONDS = "*/10 * * * * ?";
  private static final String EVERY_10_MINUTES = "0 */10 * * * ?";
  private static final Header TO_TARGET = header(DelayHeaders.TARGET_TOPIC, TARGET);

  @TempDir Path stateDir;
  private CronDriver delay;

  @AfterEach
  void stop() {
    if (delay != null) {
      delay.close();
    }
  }

  @Test
  void shouldFireEachOccurrenceOnceWithItsOwnKeyWhenEveryTenSeconds() {
    // given
    delay = new CronDriver(stateDir, utc("2026-06-01T11:59:55Z"));
    delay.request("tick", "payload", TO_TARGET, cron(EVERY_10_SECONDS));

    // when
    delay.runUntil(utc("2026-06-01T12:00:35Z"), Duration.ofSeconds(1));

    // then
    List<TestRecord<byte[], byte[]>> fired = delay.fired();
    List<Instant> dues = tenSecondsFrom("2026-06-01T12:00:00Z", 4);
    assertThat(fired).extracting(CronTopologyTest::due).containsExactlyElementsOf(dues);
    assertThat(fired)
        .extracting(r -> headerText(r.headers(), DelayHeaders.IDEMPOTENCY_KEY))
        .containsExactlyElementsOf(dues.stream().map(d -> "tick@" + d.toEpochMilli()).toList());
    assertThat(fired).extracting(CronTopologyTest::occurrence).containsExactly(1L, 2L, 3L, 4L);
    assertThat(fired)
        .allSatisfy(
            r -> {
              assertThat(text(r.key())).isEqualTo("tick");
              assertThat(text(r.value())).isEqualTo("payload");
              assertThat(headerText(r.headers(), DelayHeaders.ID)).isEqualTo("tick");
              assertThat(headerText(r.headers(), DelayHeaders.DUE_AT))
                  .isEqualTo(Long.toString(r.timestamp()));
              assertThat(firedAt(r)).isBetween(r.timestamp(), r.timestamp() + 1_000);
              assertThat(r.headers().lastHeader(DelayHeaders.CRON)).isNull();
            });
    // only the next occurrence is stored
    assertThat(delay.entries()).isEqualTo(1);
    assertThat(delay.deadLetters()).isEmpty();
  }

  @Test
  void shouldFireOnWholeSecondsWhenAPerSecondScheduleIsCreatedBetweenSeconds() {
    // given
    delay = new CronDriver(stateDir, utc("2026-06-01T12:00:00.123Z"));
    delay.request("every-second", "v", TO_TARGET, cron("* * * * * ?"));

    // when
    delay.runUntil(utc("2026-06-01T12:00:03.500Z"), Duration.ofMillis(100));

    // then
    assertThat(delay.fired())
        .extracting(CronTopologyTest::due)
        .containsExactly(
            utc("2026-06-01T12:00:01Z"), utc("2026-06-01T12:00:02Z"), utc("2026-06-01T12:00:03Z"));
  }

  @Test
  void shouldFireTheDailyJobAtTheEndOfTheGapWhenNewYorkSpringsForward() {
    // given: 2026-03-08 02:00 EST -> 03:00 EDT; 02:30 does not exist that day
    delay = new CronDriver(stateDir, utc("2026-03-06T12:00:00Z"));
    delay.request("nightly", "v", TO_TARGET, cron("0 30 2 * * ?"), zone("America/New_York"));

    // when: the stream thread runs through four days
    delay.runUntil(utc("2026-03-10T12:00:00Z"), Duration.ofSeconds(30));

    // then: once a day, never skipped: 03:00 EDT on the day of the gap
    List<TestRecord<byte[], byte[]>> fired = delay.fired();
    assertThat(fired)
        .extracting(CronTopologyTest::due)
        .containsExactly(
            utc("2026-03-07T07:30:00Z"), // 02:30 EST
            utc("2026-03-08T07:00:00Z"), // 03:00 EDT, the first instant after the gap
            utc("2026-03-09T06:30:00Z"), // 02:30 EDT
            utc("2026-03-10T06:30:00Z"));
    assertThat(fired).extracting(CronTopologyTest::occurrence).containsExactly(1L, 2L, 3L, 4L);
    assertThat(fired)
        .extracting(r -> headerText(r.headers(), DelayHeaders.IDEMPOTENCY_KEY))
        .doesNotHaveDuplicates();
  }

  @Test
  void shouldFireOnceAtTheFirstAndKeepFifteenMinutesWhenNewYorkFallsBack() {
    // given: 2026-11-01 02:00 EDT -> 01:00 EST; 01:00-02:00 happens twice
    delay = new CronDriver(stateDir, utc("2026-10-31T12:00:00Z"));
    Header newYork = zone("America/New_York");
    delay.request("at-0230", "v", TO_TARGET, cron("0 30 2 * * ?"), newYork);
    delay.request("at-0130", "v", TO_TARGET, cron("0 30 1 * * ?"), newYork);
    delay.request(
        "quarterly",
        "v",
        TO_TARGET,
        cron("0 */15 * * * ?"),
        newYork,
        header(DelayHeaders.START_AT, "2026-11-01T04:45:00Z"), // 00:45 EDT
        header(DelayHeaders.END_AT, "2026-11-01T07:00:00Z")); // 02:00 EST

    // when
    delay.runUntil(utc("2026-11-02T12:00:00Z"), Duration.ofSeconds(30));

    // then
    List<TestRecord<byte[], byte[]>> fired = delay.fired();
    assertThat(dues(fired, "at-0230"))
        .containsExactly(utc("2026-11-01T07:30:00Z"), utc("2026-11-02T07:30:00Z"));
    // 01:30 EDT fires; 01:30 EST, an hour later, does not
    assertThat(dues(fired, "at-0130"))
        .containsExactly(utc("2026-11-01T05:30:00Z"), utc("2026-11-02T06:30:00Z"));
    // fifteen minutes apart in absolute time: the repeated hour fires twice
    assertThat(dues(fired, "quarterly"))
        .containsExactlyElementsOf(
            Stream.iterate(utc("2026-11-01T04:45:00Z"), i -> i.plus(Duration.ofMinutes(15)))
                .limit(10)
                .toList());
    assertThat(fired.stream().filter(r -> text(r.key()).equals("quarterly")))
        .extracting(CronTopologyTest::occurrence)
        .containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L);
    // the end bound stopped it
    assertThat(delay.entries()).isEqualTo(2);
  }

  @Test
  void shouldStopAfterMaxFires() {
    // given
    delay = new CronDriver(stateDir, utc("2026-06-01T11:59:55Z"));
    delay.request(
        "thrice", "v", TO_TARGET, cron(EVERY_10_SECONDS), header(DelayHeaders.MAX_FIRES, "3"));

    // when
    delay.runUntil(utc("2026-06-01T12:02:00Z"), Duration.ofSeconds(1));

    // then
    List<TestRecord<byte[], byte[]>> fired = delay.fired();
    assertThat(fired)
        .extracting(CronTopologyTest::due)
        .containsExactlyElementsOf(tenSecondsFrom("2026-06-01T12:00:00Z", 3));
    assertThat(fired).extracting(CronTopologyTest::occurrence).containsExactly(1L, 2L, 3L);
    assertThat(delay.entries()).isZero();
  }

  @Test
  void shouldStopAtTheEndBound() {
    // given: the end bound falls between two occurrences
    delay = new CronDriver(stateDir, utc("2026-06-01T11:59:55Z"));
    delay.request(
        "bounded",
        "v",
        TO_TARGET,
        cron(EVERY_10_SECONDS),
        header(DelayHeaders.END_AT, "2026-06-01T12:00:35Z"));

    // when
    delay.runUntil(utc("2026-06-01T12:02:00Z"), Duration.ofSeconds(1));

    // then
    assertThat(delay.fired())
        .extracting(CronTopologyTest::due)
        .containsExactlyElementsOf(tenSecondsFrom("2026-06-01T12:00:00Z", 4));
    assertThat(delay.entries()).isZero();
  }

  @Test
  void shouldFireNothingBeforeTheStartBound() {
    delay = new CronDriver(stateDir, utc("2026-06-01T11:59:55Z"));
    delay.request(
        "later",
        "v",
        TO_TARGET,
        cron(EVERY_10_SECONDS),
        header(DelayHeaders.START_AT, "2026-06-01T12:01:00Z"));

    delay.runUntil(utc("2026-06-01T12:01:15Z"), Duration.ofSeconds(1));

    assertThat(delay.fired())
        .extracting(CronTopologyTest::due)
        .containsExactlyElementsOf(tenSecondsFrom("2026-06-01T12:01:00Z", 2));
  }

  @Test
  void shouldFireTheMissedOccurrenceOnceAndResumeAfterNowWhenFireOnce() {
    // given: fired at 12:00, then down from 12:00 to 15:05
    outageOfEveryTenMinutes("fire-once", Duration.ofHours(3).plusMinutes(5));

    // when
    delay.runUntil(utc("2026-06-01T15:20:30Z"), Duration.ofSeconds(10));

    // then: 12:10 as the one catch-up (late), then the cadence from after now
    List<TestRecord<byte[], byte[]>> fired = delay.fired();
    assertThat(fired)
        .extracting(CronTopologyTest::due)
        .containsExactly(
            utc("2026-06-01T12:00:00Z"),
            utc("2026-06-01T12:10:00Z"),
            utc("2026-06-01T15:10:00Z"),
            utc("2026-06-01T15:20:00Z"));
    assertThat(fired).extracting(CronTopologyTest::occurrence).containsExactly(1L, 2L, 3L, 4L);
    assertThat(firedAt(fired.get(1))).isEqualTo(utc("2026-06-01T15:05:00Z").toEpochMilli());
  }

  @Test
  void shouldFireNoneOfTheMissedAndResumeAfterNowWhenSkip() {
    outageOfEveryTenMinutes("skip", Duration.ofHours(3).plusMinutes(5));

    delay.runUntil(utc("2026-06-01T15:20:30Z"), Duration.ofSeconds(10));

    List<TestRecord<byte[], byte[]>> fired = delay.fired();
    assertThat(fired)
        .extracting(CronTopologyTest::due)
        .containsExactly(
            utc("2026-06-01T12:00:00Z"), utc("2026-06-01T15:10:00Z"), utc("2026-06-01T15:20:00Z"));
    // the occurrence counts fires, so the skipped ones are not counted
    assertThat(fired).extracting(CronTopologyTest::occurrence).containsExactly(1L, 2L, 3L);
  }

  @Test
  void shouldFireEveryMissedOccurrenceInOrderWhenFireAllWithinTheWindow() {
    // given: down from 12:00 to 12:45, inside the one-hour catch-up window
    outageOfEveryTenMinutes("fire-all", Duration.ofMinutes(45));

    // when
    delay.catchUp();
    delay.runUntil(utc("2026-06-01T12:50:30Z"), Duration.ofSeconds(10));

    // then
    List<TestRecord<byte[], byte[]>> fired = delay.fired();
    assertThat(fired)
        .extracting(CronTopologyTest::due)
        .containsExactlyElementsOf(tenMinutesFrom("2026-06-01T12:00:00Z", 6));
    assertThat(fired)
        .extracting(CronTopologyTest::occurrence)
        .containsExactly(1L, 2L, 3L, 4L, 5L, 6L);
    assertThat(fired)
        .extracting(r -> headerText(r.headers(), DelayHeaders.IDEMPOTENCY_KEY))
        .doesNotHaveDuplicates();
  }

  @Test
  void shouldCatchUpOnlyTheWindowWhenFireAllAfterALongOutage() {
    // given: down from 12:00 to 15:05; the one-hour window reaches back to 14:05
    outageOfEveryTenMinutes("fire-all", Duration.ofHours(3).plusMinutes(5));

    // when
    delay.catchUp();
    delay.runUntil(utc("2026-06-01T15:10:30Z"), Duration.ofSeconds(10));

    // then: every occurrence of the window in order, nothing between 12:10 and the window
    List<Instant> dues = delay.fired().stream().map(CronTopologyTest::due).toList();
    assertThat(dues)
        .containsSubsequence(tenMinutesFrom("2026-06-01T14:10:00Z", 7))
        .doesNotContainAnyElementsOf(tenMinutesFrom("2026-06-01T12:20:00Z", 11))
        .isSorted();
    assertThat(dues.get(dues.size() - 1)).isEqualTo(utc("2026-06-01T15:10:00Z"));
  }

  @Test
  void shouldFireNothingOlderThanTheWindowWhenFireAllAfterALongOutage() {
    // given: down from 12:00 to 15:05; the one-hour window reaches back to 14:05
    outageOfEveryTenMinutes("fire-all", Duration.ofHours(3).plusMinutes(5));

    // when
    delay.catchUp();
    delay.runUntil(utc("2026-06-01T15:10:30Z"), Duration.ofSeconds(10));

    // then: 12:00 (on time), then 14:10 to 15:00 (the window), then 15:10
    List<Instant> expected =
        Stream.concat(
                Stream.of(utc("2026-06-01T12:00:00Z")),
                tenMinutesFrom("2026-06-01T14:10:00Z", 7).stream())
            .toList();
    assertThat(delay.fired()).extracting(CronTopologyTest::due).containsExactlyElementsOf(expected);
  }

  @Test
  void shouldFireNothingWhilePausedAndContinueAfterNowWhenResumed() {
    // given: a running schedule that fired 12:00:00 and 12:00:10
    delay = new CronDriver(stateDir, utc("2026-06-01T11:59:55Z"));
    delay.request("pausable", "v", TO_TARGET, cron(EVERY_10_SECONDS));
    delay.runUntil(utc("2026-06-01T12:00:15Z"), Duration.ofSeconds(1));
    assertThat(delay.fired()).hasSize(2);

    // when: paused for five minutes
    delay.request("pausable", null, action("pause"));
    delay.runUntil(utc("2026-06-01T12:05:15Z"), Duration.ofSeconds(1));

    // then: nothing fires while paused
    assertThat(delay.fired()).isEmpty();

    // when: resumed at 12:05:15
    delay.request("pausable", null, action("resume"));
    delay.runUntil(utc("2026-06-01T12:05:35Z"), Duration.ofSeconds(1));

    // then: the first occurrence after the resume, and the count goes on
    List<TestRecord<byte[], byte[]>> fired = delay.fired();
    assertThat(fired)
        .extracting(CronTopologyTest::due)
        .containsExactlyElementsOf(tenSecondsFrom("2026-06-01T12:05:20Z", 2));
    assertThat(fired).extracting(CronTopologyTest::occurrence).containsExactly(3L, 4L);
    assertThat(delay.deadLetters()).isEmpty();
  }

  @Test
  void shouldNotCatchUpThePauseWhenResumedEvenWithFireAll() {
    // given: fire-all would catch up an outage
    outageOfEveryTenMinutes("fire-all", Duration.ZERO);
    delay.request("outage", null, action("pause"));

    // when: paused for three hours (one step), then resumed at 15:05
    delay.advance(Duration.ofHours(3).plusMinutes(5));
    delay.request("outage", null, action("resume"));
    delay.catchUp();
    delay.runUntil(utc("2026-06-01T15:10:30Z"), Duration.ofSeconds(10));

    // then
    assertThat(delay.fired())
        .extracting(CronTopologyTest::due)
        .containsExactly(utc("2026-06-01T12:00:00Z"), utc("2026-06-01T15:10:00Z"));
  }

  @Test
  void shouldReplaceTheRunningScheduleWhenTheSameIdIsSentAgain() {
    // given: a running every-ten-seconds schedule
    delay = new CronDriver(stateDir, utc("2026-06-01T11:59:55Z"));
    delay.request("job", "old", TO_TARGET, cron(EVERY_10_SECONDS));
    delay.runUntil(utc("2026-06-01T12:00:15Z"), Duration.ofSeconds(1));
    assertThat(delay.fired()).extracting(r -> text(r.value())).containsExactly("old", "old");

    // when: the same id with a new expression and payload
    delay.request("job", "new", TO_TARGET, cron("0 * * * * ?"));
    delay.runUntil(utc("2026-06-01T12:02:05Z"), Duration.ofSeconds(1));

    // then: only the new schedule fires
    List<TestRecord<byte[], byte[]>> fired = delay.fired();
    assertThat(fired)
        .extracting(CronTopologyTest::due)
        .containsExactly(utc("2026-06-01T12:01:00Z"), utc("2026-06-01T12:02:00Z"));
    assertThat(fired).extracting(r -> text(r.value())).containsOnly("new");
    assertThat(delay.entries()).isEqualTo(1);
    assertThat(delay.deadLetters()).isEmpty();
  }

  @Test
  void shouldStopFiringWhenARunningScheduleIsCancelled() {
    // given
    delay = new CronDriver(stateDir, utc("2026-06-01T11:59:55Z"));
    delay.request("job", "v", TO_TARGET, cron(EVERY_10_SECONDS));
    delay.runUntil(utc("2026-06-01T12:00:15Z"), Duration.ofSeconds(1));
    assertThat(delay.fired()).hasSize(2);

    // when
    delay.request("job", null);
    delay.runUntil(utc("2026-06-01T12:05:00Z"), Duration.ofSeconds(1));

    // then
    assertThat(delay.fired()).isEmpty();
    assertThat(delay.deadLetters()).isEmpty();
  }

  @Test
  void shouldCancelAPausedSchedule() {
    delay = new CronDriver(stateDir, utc("2026-06-01T11:59:55Z"));
    delay.request("job", "v", TO_TARGET, cron(EVERY_10_SECONDS));
    delay.runUntil(utc("2026-06-01T12:00:05Z"), Duration.ofSeconds(1));
    delay.request("job", null, action("pause"));
    delay.advance(Duration.ofSeconds(1));
    delay.request("job", null, action("cancel"));
    delay.advance(Duration.ofSeconds(1));

    // a resume after the cancel has nothing to resume
    delay.request("job", null, action("resume"));
    delay.runUntil(utc("2026-06-01T12:01:00Z"), Duration.ofSeconds(1));

    assertThat(delay.fired())
        .extracting(CronTopologyTest::due)
        .containsExactly(utc("2026-06-01T12:00:00Z"));
    assertThat(delay.deadLetters())
        .extracting(CronTopologyTest::error)
        .containsExactly("NOT_APPLICABLE");
    assertThat(delay.entries()).as("only the cancel marker").isEqualTo(1);
  }

  @Test
  void shouldDeadLetterAPauseOfAOneShotAndStillFireIt() {
    // given: a pending one-shot delay
    delay = new CronDriver(stateDir, utc("2026-06-01T12:00:00Z"));
    delay.request("one-shot", "v", TO_TARGET, header(DelayHeaders.AFTER, "PT30S"));

    // when
    delay.advance(Duration.ofSeconds(1));
    delay.request("one-shot", null, action("pause"));
    delay.runUntil(utc("2026-06-01T12:00:31Z"), Duration.ofSeconds(1));

    // then
    List<TestRecord<byte[], byte[]>> dead = delay.deadLetters();
    assertThat(dead).extracting(CronTopologyTest::error).containsExactly("NOT_APPLICABLE");
    assertThat(text(dead.get(0).key())).isEqualTo("one-shot");
    assertThat(headerText(dead.get(0).headers(), DelayHeaders.ACTION)).isEqualTo("pause");
    assertThat(headerText(dead.get(0).headers(), DelayHeaders.ERROR_MESSAGE)).isNotBlank();
    assertThat(delay.fired()).extracting(r -> text(r.key())).containsExactly("one-shot");
  }

  @Test
  void shouldDeadLetterAPauseOrResumeOfAnUnknownId() {
    delay = new CronDriver(stateDir, utc("2026-06-01T12:00:00Z"));

    delay.request("nobody", null, action("pause"));
    delay.request("nobody", null, action("resume"));

    assertThat(delay.deadLetters())
        .extracting(CronTopologyTest::error)
        .containsExactly("NOT_APPLICABLE", "NOT_APPLICABLE");
  }

  @Test
  void shouldDeadLetterAResumeOfAOneShot() {
    delay = new CronDriver(stateDir, utc("2026-06-01T12:00:00Z"));
    delay.request("one-shot", "v", TO_TARGET, header(DelayHeaders.AFTER, "PT30S"));

    delay.advance(Duration.ofSeconds(1));
    delay.request("one-shot", null, action("resume"));

    assertThat(delay.deadLetters())
        .extracting(CronTopologyTest::error)
        .containsExactly("NOT_APPLICABLE");
  }

  /**
   * An every-ten-minutes schedule with a misfire policy that fires 12:00 on time, followed by an
   * outage of the given length: one step of the clock, so no punctuation runs during it. The
   * records fired so far are left to read.
   */
  private void outageOfEveryTenMinutes(String misfire, Duration outage) {
    delay = new CronDriver(stateDir, utc("2026-06-01T11:59:00Z"));
    delay.request(
        "outage", "v", TO_TARGET, cron(EVERY_10_MINUTES), header(DelayHeaders.MISFIRE, misfire));
    delay.advance(Duration.ofMinutes(1)); // fires 12:00 on time
    delay.advance(outage);
  }

  private static Header cron(String expression) {
    return header(DelayHeaders.CRON, expression);
  }

  private static Header zone(String zone) {
    return header(DelayHeaders.ZONE, zone);
  }

  private static Header action(String action) {
    return header(DelayHeaders.ACTION, action);
  }

  private static Instant due(TestRecord<byte[], byte[]> record) {
    return Instant.ofEpochMilli(record.timestamp());
  }

  private static long occurrence(TestRecord<byte[], byte[]> record) {
    return Long.parseLong(headerText(record.headers(), DelayHeaders.OCCURRENCE));
  }

  private static long firedAt(TestRecord<byte[], byte[]> record) {
    return Long.parseLong(headerText(record.headers(), DelayHeaders.FIRED_AT));
  }

  private static String error(TestRecord<byte[], byte[]> record) {
    return headerText(record.headers(), DelayHeaders.ERROR);
  }

  private static List<Instant> dues(List<TestRecord<byte[], byte[]>> fired, String id) {
    return fired.stream().filter(r -> text(r.key()).equals(id)).map(CronTopologyTest::due).toList();
  }

  private static List<Instant> tenSecondsFrom(String first, int count) {
    return Stream.iterate(utc(first), i -> i.plusSeconds(10)).limit(count).toList();
  }

  private static List<Instant> tenMinutesFrom(String first, int count) {
    return Stream.iterate(utc(first), i -> i.plus(Duration.ofMinutes(10))).limit(count).toList();
  }

  private static Instant utc(String instant) {
    return Instant.parse(instant);
  }
}

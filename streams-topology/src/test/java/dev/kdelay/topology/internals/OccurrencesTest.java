package dev.kdelay.topology.internals;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.CronExpressions;
import dev.kdelay.schemas.CronFlavor;
import dev.kdelay.schemas.CronSpec;
import dev.kdelay.schemas.Misfire;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The occurrences of cron schedules as instants, with kdelay's daylight-saving rules: a schedule
 * tied to hours of the day fires a non-existent local time at the end of the gap and a repeated one
 * once, at the first; a schedule that runs every hour or more often keeps its cadence in absolute
 * time.
 */
class OccurrencesTest {

  private static final ZoneId NEW_YORK = ZoneId.of("America/New_York");
  private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");
  private static final ZoneId LORD_HOWE = ZoneId.of("Australia/Lord_Howe");
  private static final ZoneId UTC = ZoneId.of("UTC");

  private static final String DAILY_0230 = "0 30 2 * * ?";
  private static final String EVERY_15_MINUTES = "0 */15 * * * ?";
  private static final long TEN_YEARS = Duration.ofDays(3653).toMillis();

  private final Occurrences occurrences = new Occurrences(TEN_YEARS);

  @Nested
  class NewYork {

    @Test
    void shouldFireAtTheEndOfTheGapWhenTheDailyTimeDoesNotExist() {
      // given: 2026-03-08 02:00 EST -> 03:00 EDT, so 02:30 does not exist that day
      CronSpec daily = quartz(DAILY_0230, NEW_YORK);

      // when
      List<Instant> fires = occurrencesFrom(daily, "2026-03-06T12:00:00Z", 4);

      // then: never skipped; on the day of the gap it fires at 03:00 EDT, the gap's end
      assertThat(fires)
          .containsExactly(
              utc("2026-03-07T07:30:00Z"), // 02:30 EST
              utc("2026-03-08T07:00:00Z"), // 03:00 EDT, first instant after the gap
              utc("2026-03-09T06:30:00Z"), // 02:30 EDT
              utc("2026-03-10T06:30:00Z"));
      assertThat(localTimes(fires, NEW_YORK))
          .containsExactly(
              LocalTime.of(2, 30), LocalTime.of(3, 0), LocalTime.of(2, 30), LocalTime.of(2, 30));
    }

    @Test
    void shouldFireOnceAtTheFirstWhenTheDailyTimeExistsTwice() {
      // given: 2026-11-01 02:00 EDT -> 01:00 EST, so 01:30 happens twice that day
      CronSpec daily = quartz("0 30 1 * * ?", NEW_YORK);

      // when
      List<Instant> fires = occurrencesFrom(daily, "2026-10-30T12:00:00Z", 3);

      // then: 01:30 EDT fires, 01:30 EST (06:30Z) does not
      assertThat(fires)
          .containsExactly(
              utc("2026-10-31T05:30:00Z"), // 01:30 EDT
              utc("2026-11-01T05:30:00Z"), // 01:30 EDT, the first of the two
              utc("2026-11-02T06:30:00Z")); // 01:30 EST
    }

    @Test
    void shouldKeepTheDailyTimeWhenItIsOutsideTheRepeatedHour() {
      // given: 02:30 exists once on 2026-11-01 (the repeated hour is 01:00-02:00)
      CronSpec daily = quartz(DAILY_0230, NEW_YORK);

      // when
      List<Instant> fires = occurrencesFrom(daily, "2026-10-30T12:00:00Z", 3);

      // then
      assertThat(fires)
          .containsExactly(
              utc("2026-10-31T06:30:00Z"), // 02:30 EDT
              utc("2026-11-01T07:30:00Z"), // 02:30 EST
              utc("2026-11-02T07:30:00Z"));
    }

    @Test
    void shouldStartTheDailyJobAtTheEndOfTheGapWhenCreatedJustBeforeIt() {
      // given: created at 01:59 EST on the day of the gap
      CronSpec daily = quartz(DAILY_0230, NEW_YORK);

      // when
      OptionalLong first = occurrences.first(daily, ms("2026-03-08T06:59:00Z"));

      // then
      assertThat(first).hasValue(ms("2026-03-08T07:00:00Z"));
    }

    @Test
    void shouldMoveEachHourInTheGapToItsEndWhenTheHourFieldIsAStep() {
      // given: every two hours (tied to hours of the day: 00, 02, 04, ...)
      CronSpec everyTwoHours = quartz("0 0 */2 * * ?", NEW_YORK);

      // when
      List<Instant> fires = occurrencesFrom(everyTwoHours, "2026-03-08T04:30:00Z", 3);

      // then: 02:00 does not exist and fires at 03:00 EDT
      assertThat(fires)
          .containsExactly(
              utc("2026-03-08T05:00:00Z"), // 00:00 EST
              utc("2026-03-08T07:00:00Z"), // 03:00 EDT for 02:00
              utc("2026-03-08T08:00:00Z")); // 04:00 EDT
    }

    @Test
    void shouldKeepFifteenMinutesInUtcWhenTheClockSpringsForward() {
      // given
      CronSpec every15 = quartz(EVERY_15_MINUTES, NEW_YORK);

      // when
      List<Instant> fires = occurrencesFrom(every15, "2026-03-08T06:15:00Z", 5);

      // then: 01:15, 01:30, 01:45 EST, then 03:00, 03:15 EDT; the skipped hour has nothing
      assertThat(fires).containsExactlyElementsOf(cadence("2026-03-08T06:15:00Z", 15, 5));
      assertThat(localTimes(fires, NEW_YORK))
          .containsExactly(
              LocalTime.of(1, 15),
              LocalTime.of(1, 30),
              LocalTime.of(1, 45),
              LocalTime.of(3, 0),
              LocalTime.of(3, 15));
    }

    @Test
    void shouldFireTheRepeatedHourTwiceWhenTheClockFallsBack() {
      // given
      CronSpec every15 = quartz(EVERY_15_MINUTES, NEW_YORK);

      // when: from 00:45 EDT to 02:00 EST
      List<Instant> fires = occurrencesFrom(every15, "2026-11-01T04:45:00Z", 10);

      // then: fifteen minutes apart in UTC, the 01:xx wall-clock times twice
      assertThat(fires).containsExactlyElementsOf(cadence("2026-11-01T04:45:00Z", 15, 10));
      assertThat(localTimes(fires, NEW_YORK))
          .containsExactly(
              LocalTime.of(0, 45),
              LocalTime.of(1, 0),
              LocalTime.of(1, 15),
              LocalTime.of(1, 30),
              LocalTime.of(1, 45),
              LocalTime.of(1, 0),
              LocalTime.of(1, 15),
              LocalTime.of(1, 30),
              LocalTime.of(1, 45),
              LocalTime.of(2, 0));
    }

    @Test
    void shouldFindTheRepeatedHourWhenAskedFromItsFirstPass() {
      // given: the last quarter of the first pass of 01:xx has fired (01:45 EDT)
      CronSpec every15 = quartz(EVERY_15_MINUTES, NEW_YORK);

      // when
      OptionalLong next =
          occurrences.after(every15, ms("2026-11-01T05:45:00Z"), ms("2026-11-01T05:45:00Z"));

      // then: 01:00 EST, not 02:00 EST
      assertThat(next).hasValue(ms("2026-11-01T06:00:00Z"));
    }
  }

  @Nested
  class Berlin {

    @Test
    void shouldFireAtTheEndOfTheGapWhenTheDailyTimeDoesNotExist() {
      // given: 2026-03-29 02:00 CET -> 03:00 CEST
      CronSpec daily = quartz(DAILY_0230, BERLIN);

      // when
      List<Instant> fires = occurrencesFrom(daily, "2026-03-27T12:00:00Z", 3);

      // then
      assertThat(fires)
          .containsExactly(
              utc("2026-03-28T01:30:00Z"), // 02:30 CET
              utc("2026-03-29T01:00:00Z"), // 03:00 CEST, first instant after the gap
              utc("2026-03-30T00:30:00Z")); // 02:30 CEST
    }

    @Test
    void shouldFireOnceAtTheFirstWhenTheDailyTimeExistsTwice() {
      // given: 2026-10-25 03:00 CEST -> 02:00 CET, so 02:30 happens twice that day
      CronSpec daily = quartz(DAILY_0230, BERLIN);

      // when
      List<Instant> fires = occurrencesFrom(daily, "2026-10-23T12:00:00Z", 3);

      // then: 02:30 CEST (00:30Z) fires, 02:30 CET (01:30Z) does not
      assertThat(fires)
          .containsExactly(
              utc("2026-10-24T00:30:00Z"),
              utc("2026-10-25T00:30:00Z"),
              utc("2026-10-26T01:30:00Z"));
    }

    @Test
    void shouldNotFireTheSecondPassWhenCreatedBetweenTheTwo() {
      // given: created at 02:10 CET, after 02:30 CEST has passed and before 02:30 CET
      CronSpec daily = quartz(DAILY_0230, BERLIN);

      // when
      OptionalLong first = occurrences.first(daily, ms("2026-10-25T01:10:00Z"));

      // then: 02:30 happened today already (at its first); the next is tomorrow's
      assertThat(first).hasValue(ms("2026-10-26T01:30:00Z"));
    }

    @Test
    void shouldKeepFifteenMinutesInUtcWhenTheClockSpringsForward() {
      CronSpec every15 = quartz(EVERY_15_MINUTES, BERLIN);

      List<Instant> fires = occurrencesFrom(every15, "2026-03-29T00:30:00Z", 4);

      assertThat(fires).containsExactlyElementsOf(cadence("2026-03-29T00:30:00Z", 15, 4));
      assertThat(localTimes(fires, BERLIN))
          .containsExactly(
              LocalTime.of(1, 30), LocalTime.of(1, 45), LocalTime.of(3, 0), LocalTime.of(3, 15));
    }

    @Test
    void shouldFireTheRepeatedHourTwiceWhenTheClockFallsBack() {
      CronSpec every15 = quartz(EVERY_15_MINUTES, BERLIN);

      // from 02:45 CEST to 03:00 CET
      List<Instant> fires = occurrencesFrom(every15, "2026-10-25T00:45:00Z", 6);

      assertThat(fires).containsExactlyElementsOf(cadence("2026-10-25T00:45:00Z", 15, 6));
      assertThat(localTimes(fires, BERLIN))
          .containsExactly(
              LocalTime.of(2, 45),
              LocalTime.of(2, 0),
              LocalTime.of(2, 15),
              LocalTime.of(2, 30),
              LocalTime.of(2, 45),
              LocalTime.of(3, 0));
    }
  }

  /** Lord Howe Island shifts by 30 minutes: +10:30 in winter, +11:00 in summer. */
  @Nested
  class LordHowe {

    private final ZoneRules rules = LORD_HOWE.getRules();
    // In 2026 the island falls back in April (02:00 -> 01:30) and springs forward in October
    // (02:00 -> 02:30); read from the JDK's time-zone data rather than hard-coded.
    private final ZoneOffsetTransition fallBack =
        rules.nextTransition(Instant.parse("2026-01-01T00:00:00Z"));
    private final ZoneOffsetTransition springForward = rules.nextTransition(fallBack.getInstant());

    @Test
    void shouldShiftByThirtyMinutesIn2026() {
      assertThat(fallBack.isOverlap()).isTrue();
      assertThat(fallBack.getDuration()).isEqualTo(Duration.ofMinutes(-30));
      assertThat(fallBack.getDateTimeBefore()).isEqualTo(LocalDateTime.of(2026, 4, 5, 2, 0));
      assertThat(springForward.isGap()).isTrue();
      assertThat(springForward.getDuration()).isEqualTo(Duration.ofMinutes(30));
      assertThat(springForward.getDateTimeBefore()).isEqualTo(LocalDateTime.of(2026, 10, 4, 2, 0));
    }

    @Test
    void shouldFireAtTheEndOfTheGapWhenTheDailyTimeDoesNotExist() {
      // given: 02:15 lies in the 02:00-02:30 gap
      CronSpec daily = quartz("0 15 2 * * ?", LORD_HOWE);
      LocalDate day = springForward.getDateTimeBefore().toLocalDate();

      // when
      List<Instant> fires = occurrencesFrom(daily, noonTwoDaysBefore(springForward), 3);

      // then
      assertThat(fires)
          .containsExactly(
              at(day.minusDays(1), 2, 15, springForward.getOffsetBefore()),
              springForward.getInstant(), // 02:30 +11:00, first instant after the gap
              at(day.plusDays(1), 2, 15, springForward.getOffsetAfter()));
      assertThat(localTimes(fires, LORD_HOWE))
          .containsExactly(LocalTime.of(2, 15), LocalTime.of(2, 30), LocalTime.of(2, 15));
    }

    @Test
    void shouldFireOnceAtTheFirstWhenTheDailyTimeExistsTwice() {
      // given: 01:45 lies in the 01:30-02:00 overlap
      CronSpec daily = quartz("0 45 1 * * ?", LORD_HOWE);
      LocalDate day = fallBack.getDateTimeBefore().toLocalDate();

      // when
      List<Instant> fires = occurrencesFrom(daily, noonTwoDaysBefore(fallBack), 3);

      // then: 01:45 +11:00 fires, 01:45 +10:30 does not
      assertThat(fires)
          .containsExactly(
              at(day.minusDays(1), 1, 45, fallBack.getOffsetBefore()),
              at(day, 1, 45, fallBack.getOffsetBefore()),
              at(day.plusDays(1), 1, 45, fallBack.getOffsetAfter()));
    }

    @Test
    void shouldKeepFifteenMinutesInUtcWhenTheClockSpringsForward() {
      CronSpec every15 = quartz(EVERY_15_MINUTES, LORD_HOWE);
      Instant from = springForward.getInstant().minus(Duration.ofMinutes(30));

      List<Instant> fires = occurrencesFrom(every15, from.toString(), 4);

      // 01:30, 01:45 +10:30, then 02:30, 02:45 +11:00: 02:00 and 02:15 do not exist
      assertThat(fires).containsExactlyElementsOf(cadence(from.toString(), 15, 4));
      assertThat(localTimes(fires, LORD_HOWE))
          .containsExactly(
              LocalTime.of(1, 30), LocalTime.of(1, 45), LocalTime.of(2, 30), LocalTime.of(2, 45));
    }

    @Test
    void shouldFireTheRepeatedHalfHourTwiceWhenTheClockFallsBack() {
      CronSpec every15 = quartz(EVERY_15_MINUTES, LORD_HOWE);
      Instant from = fallBack.getInstant().minus(Duration.ofMinutes(30));

      List<Instant> fires = occurrencesFrom(every15, from.toString(), 6);

      // 01:30, 01:45 +11:00, then 01:30, 01:45, 02:00, 02:15 +10:30
      assertThat(fires).containsExactlyElementsOf(cadence(from.toString(), 15, 6));
      assertThat(localTimes(fires, LORD_HOWE))
          .containsExactly(
              LocalTime.of(1, 30),
              LocalTime.of(1, 45),
              LocalTime.of(1, 30),
              LocalTime.of(1, 45),
              LocalTime.of(2, 0),
              LocalTime.of(2, 15));
    }

    private String noonTwoDaysBefore(ZoneOffsetTransition transition) {
      LocalDate day = transition.getDateTimeBefore().toLocalDate().minusDays(2);
      return at(day, 12, 0, transition.getOffsetBefore()).toString();
    }

    private Instant at(LocalDate day, int hour, int minute, ZoneOffset offset) {
      return day.atTime(hour, minute).toInstant(offset);
    }
  }

  @Nested
  class Flavours {

    @Test
    void shouldFireEveryTenSecondsWhenQuartzHasASecondsField() {
      CronSpec spec = spec("*/10 * * * * ?", CronFlavor.QUARTZ, ZoneId.of("Asia/Tokyo"));

      List<Instant> fires = occurrencesFrom(spec, "2026-06-01T00:00:05Z", 3);

      assertThat(fires)
          .containsExactly(
              utc("2026-06-01T00:00:10Z"),
              utc("2026-06-01T00:00:20Z"),
              utc("2026-06-01T00:00:30Z"));
    }

    @Test
    void shouldKeepTenSecondsInUtcWhenTheClockSpringsForward() {
      CronSpec spec = spec("*/10 * * * * ?", CronFlavor.QUARTZ, NEW_YORK);

      List<Instant> fires = occurrencesFrom(spec, "2026-03-08T06:59:40Z", 4);

      // 01:59:40, 01:59:50 EST, then 03:00:00, 03:00:10 EDT
      assertThat(fires)
          .containsExactly(
              utc("2026-03-08T06:59:40Z"),
              utc("2026-03-08T06:59:50Z"),
              utc("2026-03-08T07:00:00Z"),
              utc("2026-03-08T07:00:10Z"));
    }

    @Test
    void shouldFireEveryTenSecondsThroughTheRepeatedHourWhenTheClockFallsBack() {
      CronSpec spec = spec("*/10 * * * * ?", CronFlavor.QUARTZ, NEW_YORK);

      // the whole repeated hour and a bit: 01:59:30 EDT to 02:00:00 EST
      List<Instant> fires = occurrencesFrom(spec, "2026-11-01T05:59:30Z", 4 + 360);

      assertThat(fires)
          .containsExactlyElementsOf(
              Stream.iterate(utc("2026-11-01T05:59:30Z"), i -> i.plusSeconds(10))
                  .limit(364)
                  .toList());
      assertThat(fires.get(fires.size() - 1)).isEqualTo(utc("2026-11-01T07:00:00Z"));
    }

    @Test
    void shouldFireEveryFiveMinutesWhenUnixHasFiveFields() {
      CronSpec spec = spec("*/5 * * * *", CronFlavor.UNIX, ZoneId.of("Asia/Kolkata"));

      List<Instant> fires = occurrencesFrom(spec, "2026-06-01T00:01:30Z", 3);

      assertThat(fires)
          .containsExactly(
              utc("2026-06-01T00:05:00Z"),
              utc("2026-06-01T00:10:00Z"),
              utc("2026-06-01T00:15:00Z"));
    }

    @Test
    void shouldKeepFiveMinutesInUtcWhenUnixCrossesTheRepeatedHour() {
      CronSpec spec = spec("*/5 * * * *", CronFlavor.UNIX, BERLIN);

      // 02:55 CEST, then 02:00 CET
      List<Instant> fires = occurrencesFrom(spec, "2026-10-25T00:55:00Z", 3);

      assertThat(fires).containsExactlyElementsOf(cadence("2026-10-25T00:55:00Z", 5, 3));
    }

    @Test
    void shouldFireOnWeekdaysInTheZoneWhenSpringNamesDaysOfTheWeek() {
      // given: 09:00 on weekdays in Berlin; Sunday 2026-03-29 is the spring-forward day
      CronSpec spec = spec("0 0 9 * * MON-FRI", CronFlavor.SPRING, BERLIN);

      // when: from Friday 2026-03-27
      List<Instant> fires = occurrencesFrom(spec, "2026-03-27T00:00:00Z", 3);

      // then: Friday 09:00 CET, then Monday and Tuesday 09:00 CEST
      assertThat(fires)
          .containsExactly(
              utc("2026-03-27T08:00:00Z"),
              utc("2026-03-30T07:00:00Z"),
              utc("2026-03-31T07:00:00Z"));
    }

    @Test
    void shouldFireOnWholeSecondsWhenCreatedBetweenSecondsWithASecondsStep() {
      CronSpec tenSeconds = spec("*/10 * * * * ?", CronFlavor.QUARTZ, UTC);
      CronSpec atSecondFive = spec("5 * * * * ?", CronFlavor.QUARTZ, UTC);

      assertThat(occurrencesFrom(tenSeconds, "2026-06-01T12:00:00.123Z", 2))
          .containsExactly(utc("2026-06-01T12:00:10Z"), utc("2026-06-01T12:00:20Z"));
      assertThat(occurrencesFrom(atSecondFive, "2026-06-01T12:00:00.123Z", 2))
          .containsExactly(utc("2026-06-01T12:00:05Z"), utc("2026-06-01T12:01:05Z"));
    }

    @Test
    void shouldFireOnWholeSecondsWhenCreatedBetweenSecondsWithEverySecond() {
      // given: created 123 ms into a second
      CronSpec everySecond = spec("* * * * * ?", CronFlavor.QUARTZ, UTC);
      CronSpec firstHalfMinute = spec("0-30 * * * * ?", CronFlavor.QUARTZ, NEW_YORK);

      // then: the instants the expression names, on whole seconds
      assertThat(occurrencesFrom(everySecond, "2026-06-01T12:00:00.123Z", 3))
          .containsExactly(
              utc("2026-06-01T12:00:01Z"),
              utc("2026-06-01T12:00:02Z"),
              utc("2026-06-01T12:00:03Z"));
      assertThat(occurrencesFrom(firstHalfMinute, "2026-06-01T12:00:29.999Z", 2))
          .containsExactly(utc("2026-06-01T12:00:30Z"), utc("2026-06-01T12:01:00Z"));
      assertThat(
              occurrences.after(
                  everySecond, ms("2026-06-01T12:00:00.999Z"), ms("2026-06-01T12:00:00.999Z")))
          .hasValue(ms("2026-06-01T12:00:01Z"));
    }

    @Test
    void shouldEvaluateInUtcWhenTheZoneIsUtc() {
      CronSpec spec = spec("0 0 9 * * MON-FRI", CronFlavor.SPRING, UTC);

      List<Instant> fires = occurrencesFrom(spec, "2026-03-27T00:00:00Z", 2);

      assertThat(fires).containsExactly(utc("2026-03-27T09:00:00Z"), utc("2026-03-30T09:00:00Z"));
    }
  }

  @Nested
  class Bounds {

    private static final String DAILY_NOON = "0 0 12 * * ?";

    @Test
    void shouldStartAtTheStartBoundWhenItIsLaterThanNow() {
      CronSpec spec = bounded(DAILY_NOON, ms("2026-06-10T00:00:00Z"), CronSpec.NO_END);

      OptionalLong first = occurrences.first(spec, ms("2026-06-01T00:00:00Z"));

      assertThat(first).hasValue(ms("2026-06-10T12:00:00Z"));
    }

    @Test
    void shouldIncludeAnOccurrenceAtTheStartBound() {
      CronSpec spec = bounded(DAILY_NOON, ms("2026-06-10T12:00:00Z"), CronSpec.NO_END);

      OptionalLong first = occurrences.first(spec, ms("2026-06-01T00:00:00Z"));

      assertThat(first).hasValue(ms("2026-06-10T12:00:00Z"));
    }

    @Test
    void shouldIgnoreAStartBoundInThePast() {
      CronSpec spec = bounded(DAILY_NOON, ms("2026-01-01T00:00:00Z"), CronSpec.NO_END);

      OptionalLong first = occurrences.first(spec, ms("2026-06-01T13:00:00Z"));

      assertThat(first).hasValue(ms("2026-06-02T12:00:00Z"));
    }

    @Test
    void shouldIncludeAnOccurrenceAtTheEndBoundAndNothingAfterIt() {
      CronSpec spec = bounded(DAILY_NOON, CronSpec.NO_START, ms("2026-06-03T12:00:00Z"));

      List<Instant> fires = occurrencesFrom(spec, "2026-06-01T00:00:00Z", 10);

      assertThat(fires)
          .containsExactly(
              utc("2026-06-01T12:00:00Z"),
              utc("2026-06-02T12:00:00Z"),
              utc("2026-06-03T12:00:00Z"));
    }

    @Test
    void shouldStopBeforeTheEndBoundWhenTheNextOccurrenceIsAfterIt() {
      CronSpec spec = bounded(DAILY_NOON, CronSpec.NO_START, ms("2026-06-03T11:59:59.999Z"));

      List<Instant> fires = occurrencesFrom(spec, "2026-06-01T00:00:00Z", 10);

      assertThat(fires).containsExactly(utc("2026-06-01T12:00:00Z"), utc("2026-06-02T12:00:00Z"));
    }

    @Test
    void shouldStopAtTheEndBoundWhenTheCadenceIsAbsolute() {
      CronSpec spec = bounded(EVERY_15_MINUTES, CronSpec.NO_START, ms("2026-06-01T00:40:00Z"));

      List<Instant> fires = occurrencesFrom(spec, "2026-06-01T00:00:00Z", 10);

      assertThat(fires).containsExactlyElementsOf(cadence("2026-06-01T00:00:00Z", 15, 3));
    }

    @Test
    void shouldHaveNoOccurrenceWhenTheEndBoundHasPassed() {
      CronSpec spec = bounded(DAILY_NOON, CronSpec.NO_START, ms("2026-06-01T00:00:00Z"));

      assertThat(occurrences.first(spec, ms("2026-06-01T00:00:01Z"))).isEmpty();
    }

    @Test
    void shouldHaveNoOccurrenceBeyondTheHorizon() {
      // given: a horizon of one day and a yearly schedule
      Occurrences oneDay = new Occurrences(Duration.ofDays(1).toMillis());
      CronSpec yearly = quartz("0 0 0 1 1 ?", UTC);
      CronSpec daily = quartz(DAILY_NOON, UTC);
      long now = ms("2026-06-01T12:00:00.001Z");

      // then
      assertThat(oneDay.first(yearly, now)).isEmpty();
      assertThat(oneDay.first(daily, now)).hasValue(ms("2026-06-02T12:00:00Z"));
    }

    @Test
    void shouldIncludeAnOccurrenceExactlyAtTheHorizon() {
      Occurrences oneDay = new Occurrences(Duration.ofDays(1).toMillis());
      CronSpec daily = quartz(DAILY_NOON, UTC);
      long now = ms("2026-06-01T12:00:00Z");

      // the one after today's noon is exactly one horizon ahead
      assertThat(oneDay.after(daily, now, now)).hasValue(ms("2026-06-02T12:00:00Z"));
      assertThat(oneDay.after(daily, now, now - 1)).isEmpty();
    }

    @Test
    void shouldIncludeAnOccurrenceAtNowWhenAskedForTheFirst() {
      CronSpec daily = quartz(DAILY_NOON, UTC);

      assertThat(occurrences.first(daily, ms("2026-06-01T12:00:00Z")))
          .hasValue(ms("2026-06-01T12:00:00Z"));
      assertThat(occurrences.first(daily, ms("2026-06-01T12:00:00.001Z")))
          .hasValue(ms("2026-06-02T12:00:00Z"));
    }

    private CronSpec bounded(String expression, long startAtMs, long endAtMs) {
      return new CronSpec(
          expression,
          CronFlavor.QUARTZ,
          UTC,
          startAtMs,
          endAtMs,
          CronSpec.UNLIMITED,
          Misfire.FIRE_ONCE);
    }
  }

  @Test
  void shouldTellAbsoluteCadenceFromHoursOfTheDayByTheHourField() {
    assertThat(everyHour("0 */15 * * * ?")).isTrue();
    assertThat(everyHour("*/10 * * * * ?")).isTrue();
    assertThat(everyHour("0 0 * * * ?")).isTrue();
    assertThat(everyHour(DAILY_0230)).isFalse();
    assertThat(everyHour("0 0 */2 * * ?")).isFalse();
    assertThat(everyHour("0 0 9 ? * MON-FRI")).isFalse();
  }

  private static boolean everyHour(String quartz) {
    return Occurrences.everyHour(CronExpressions.parse(quartz, CronFlavor.QUARTZ));
  }

  /** The first {@code count} occurrences at or after {@code from}, each after the one before. */
  private List<Instant> occurrencesFrom(CronSpec spec, String from, int count) {
    long now = ms(from);
    List<Instant> fires = new ArrayList<>();
    OptionalLong next = occurrences.first(spec, now);
    while (next.isPresent() && fires.size() < count) {
      fires.add(Instant.ofEpochMilli(next.getAsLong()));
      next = occurrences.after(spec, next.getAsLong(), now);
    }
    return fires;
  }

  private static List<Instant> cadence(String first, int minutes, int count) {
    return Stream.iterate(utc(first), i -> i.plus(Duration.ofMinutes(minutes)))
        .limit(count)
        .toList();
  }

  private static List<LocalTime> localTimes(List<Instant> instants, ZoneId zone) {
    return instants.stream().map(i -> i.atZone(zone).toLocalTime()).toList();
  }

  private static CronSpec quartz(String expression, ZoneId zone) {
    return spec(expression, CronFlavor.QUARTZ, zone);
  }

  private static CronSpec spec(String expression, CronFlavor flavor, ZoneId zone) {
    return new CronSpec(
        expression,
        flavor,
        zone,
        CronSpec.NO_START,
        CronSpec.NO_END,
        CronSpec.UNLIMITED,
        Misfire.FIRE_ONCE);
  }

  private static Instant utc(String instant) {
    return Instant.parse(instant);
  }

  private static long ms(String instant) {
    return Instant.parse(instant).toEpochMilli();
  }
}

package dev.kdelay.topology.internals;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.CronFlavor;
import dev.kdelay.schemas.CronSpec;
import dev.kdelay.schemas.Misfire;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * What a recurring schedule does when an occurrence comes due: on time it fires and continues in
 * its cadence; missed (more than the threshold late, after an outage) its misfire policy decides.
 */
class RecurrenceTest {

  private static final long THRESHOLD_MS = Duration.ofSeconds(60).toMillis();
  private static final long WINDOW_MS = Duration.ofHours(1).toMillis();
  private static final String EVERY_10_MINUTES = "0 */10 * * * ?";
  private static final String EVERY_SECOND = "* * * * * ?";

  private final Recurrence recurrence =
      new Recurrence(new Occurrences(Duration.ofDays(3653).toMillis()), THRESHOLD_MS, WINDOW_MS);

  @Test
  void shouldFireAndContinueInCadenceWhenOnTime() {
    CronSpec spec = every10Minutes(Misfire.SKIP);

    Recurrence.Step step = recurrence.onDue(spec, ms("12:10:00"), 0, ms("12:10:00.005"));

    assertThat(step.fire()).isTrue();
    assertThat(step.next()).hasValue(ms("12:20:00"));
  }

  @Test
  void shouldNotCountAsMissedWhenLateByNoMoreThanTheThreshold() {
    // given: skip would drop a missed occurrence
    CronSpec spec = every10Minutes(Misfire.SKIP);

    // when: exactly the threshold late
    Recurrence.Step step = recurrence.onDue(spec, ms("12:10:00"), 0, ms("12:11:00"));

    // then: on time; the next in the cadence
    assertThat(step.fire()).isTrue();
    assertThat(step.next()).hasValue(ms("12:20:00"));
  }

  @Test
  void shouldFireTheMissedOccurrenceOnceAndResumeAfterNowWhenFireOnce() {
    // given: due 12:10, the service was down until 15:05
    CronSpec spec = every10Minutes(Misfire.FIRE_ONCE);

    // when
    Recurrence.Step step = recurrence.onDue(spec, ms("12:10:00"), 1, ms("15:05:00"));

    // then: one catch-up, then the first occurrence after now
    assertThat(step.fire()).isTrue();
    assertThat(step.next()).hasValue(ms("15:10:00"));
  }

  @Test
  void shouldFireNoneOfTheMissedAndResumeAfterNowWhenSkip() {
    CronSpec spec = every10Minutes(Misfire.SKIP);

    Recurrence.Step step = recurrence.onDue(spec, ms("12:10:00"), 1, ms("15:05:00"));

    assertThat(step.fire()).isFalse();
    assertThat(step.next()).hasValue(ms("15:10:00"));
  }

  @Test
  void shouldFireEveryMissedOccurrenceInOrderWhenFireAllWithinTheWindow() {
    // given: due 12:10, the service was down until 12:45, inside the one-hour window
    CronSpec spec = every10Minutes(Misfire.FIRE_ALL);

    // when
    CatchUp catchUp = catchUp(spec, ms("12:10:00"), ms("12:45:00"));

    // then: each missed occurrence in order, then the cadence goes on
    assertThat(catchUp.fired)
        .containsExactly(at("12:10:00"), at("12:20:00"), at("12:30:00"), at("12:40:00"));
    assertThat(catchUp.next).isEqualTo(at("12:50:00"));
  }

  @Test
  void shouldResumeAtTheStartOfTheCatchUpWindowWhenFireAllMissedMoreThanTheWindow() {
    // given: due 12:10, down until 15:05; the window reaches back to 14:05
    CronSpec spec = every10Minutes(Misfire.FIRE_ALL);

    // when
    Recurrence.Step step = recurrence.onDue(spec, ms("12:10:00"), 1, ms("15:05:00"));

    // then: the next occurrence to catch up is the first one inside the window
    assertThat(step.next()).hasValue(ms("14:10:00"));
  }

  @Test
  void shouldNotFireTheStoredOccurrenceWhenFireAllMissedItLongerAgoThanTheWindow() {
    // given: due 12:10, down until 15:05; the window reaches back to 14:05
    CronSpec spec = every10Minutes(Misfire.FIRE_ALL);

    // when
    Recurrence.Step step = recurrence.onDue(spec, ms("12:10:00"), 1, ms("15:05:00"));

    // then: 12:10 is older than the window and must not fire
    assertThat(step.fire()).as("fires an occurrence 2h55m old, window 1h").isFalse();
    assertThat(step.next()).hasValue(ms("14:10:00"));
  }

  @Test
  void shouldFireEverySecondOfTheWindowInOrderWhenFireAllCatchesUpAPerSecondSchedule() {
    // given: a per-second schedule whose stored occurrence is at the start of the window
    CronSpec spec = spec(EVERY_SECOND, Misfire.FIRE_ALL);

    // when
    CatchUp catchUp = catchUp(spec, ms("21:00:00"), ms("22:00:00"));

    // then: one fire per second of the window, in order, none twice
    assertThat(catchUp.fired)
        .containsExactlyElementsOf(
            Stream.iterate(at("21:00:00"), i -> i.plusSeconds(1)).limit(3601).toList());
    assertThat(catchUp.next).isEqualTo(at("22:00:01"));
  }

  @Test
  void shouldFireNothingOlderThanTheCatchUpWindowWhenFireAllCatchesUpALongOutage() {
    // given: a per-second schedule, last stored occurrence 12:00:00, down until 22:00:00
    CronSpec spec = spec(EVERY_SECOND, Misfire.FIRE_ALL);

    // when
    CatchUp catchUp = catchUp(spec, ms("12:00:00"), ms("22:00:00"));

    // then: only the last hour, 21:00:00 to 22:00:00, one fire per second
    assertThat(catchUp.fired.get(0)).isEqualTo(at("21:00:00"));
    assertThat(catchUp.fired.get(catchUp.fired.size() - 1)).isEqualTo(at("22:00:00"));
    assertThat(catchUp.fired.size()).isEqualTo(3601);
  }

  @Test
  void shouldBoundTheCatchUpOfALongOutageWhenFireAll() {
    // given: a per-second schedule, down for ten hours (36,000 occurrences missed)
    CronSpec spec = spec(EVERY_SECOND, Misfire.FIRE_ALL);

    // when
    CatchUp catchUp = catchUp(spec, ms("12:00:00"), ms("22:00:00"));

    // then: no flood: at most the window's worth (plus the stored occurrence, see the BUG above)
    assertThat(catchUp.fired).hasSizeLessThanOrEqualTo(3602);
    assertThat(catchUp.fired).isSorted().doesNotHaveDuplicates();
    assertThat(catchUp.fired.get(1)).isBetween(at("21:00:00"), at("21:00:01"));
    assertThat(catchUp.next).isAfter(at("22:00:00"));
  }

  @Test
  void shouldResumeOnAWholeSecondAtTheStartOfTheWindowWhenFireAllCatchesUpAPerSecondSchedule() {
    // given: a per-second schedule, last stored occurrence 12:00:00, down until 22:00:00
    CronSpec spec = spec(EVERY_SECOND, Misfire.FIRE_ALL);

    // when
    Recurrence.Step step = recurrence.onDue(spec, ms("12:00:00"), 1, ms("22:00:00"));

    // then: the window starts at 21:00:00, an occurrence of the schedule
    assertThat(step.next()).hasValue(ms("21:00:00"));
  }

  @Test
  void shouldResumeOnAWholeSecondWhenFireOnceResumesAPerSecondScheduleAfterNow() {
    CronSpec spec = spec(EVERY_SECOND, Misfire.FIRE_ONCE);

    Recurrence.Step step = recurrence.onDue(spec, ms("12:00:00"), 1, ms("15:05:00.500"));

    assertThat(step.fire()).isTrue();
    assertThat(step.next()).hasValue(ms("15:05:01"));
  }

  @Test
  void shouldStopAfterTheLastFireWhenMaxFiresIsReached() {
    CronSpec spec = limited(3, Misfire.FIRE_ONCE);

    Recurrence.Step second = recurrence.onDue(spec, ms("12:10:00"), 1, ms("12:10:00"));
    Recurrence.Step third = recurrence.onDue(spec, ms("12:20:00"), 2, ms("12:20:00"));

    assertThat(second.fire()).isTrue();
    assertThat(second.next()).hasValue(ms("12:20:00"));
    assertThat(third.fire()).isTrue();
    assertThat(third.next()).isEmpty();
  }

  @Test
  void shouldStopAfterTheCatchUpWhenMaxFiresIsReachedByIt() {
    CronSpec spec = limited(3, Misfire.FIRE_ONCE);

    Recurrence.Step step = recurrence.onDue(spec, ms("12:20:00"), 2, ms("15:05:00"));

    assertThat(step.fire()).isTrue();
    assertThat(step.next()).isEmpty();
  }

  @Test
  void shouldNotCountASkippedOccurrenceTowardsMaxFires() {
    // given: two of three fired; the third comes due during an outage
    CronSpec spec = limited(3, Misfire.SKIP);

    // when
    Recurrence.Step step = recurrence.onDue(spec, ms("12:20:00"), 2, ms("15:05:00"));

    // then: skipped, so the third fire is still to come
    assertThat(step.fire()).isFalse();
    assertThat(step.next()).hasValue(ms("15:10:00"));
  }

  @Test
  void shouldStopWhenTheNextOccurrenceIsAfterTheEndBound() {
    CronSpec spec =
        new CronSpec(
            EVERY_10_MINUTES,
            CronFlavor.QUARTZ,
            ZoneId.of("UTC"),
            CronSpec.NO_START,
            ms("12:15:00"),
            CronSpec.UNLIMITED,
            Misfire.FIRE_ONCE);

    Recurrence.Step step = recurrence.onDue(spec, ms("12:10:00"), 0, ms("12:10:00"));

    assertThat(step.fire()).isTrue();
    assertThat(step.next()).isEmpty();
  }

  @Test
  void shouldSkipWhatFellInThePauseWhenResumed() {
    // given: fire-all would catch up an outage, but a pause is not an outage
    CronSpec spec = every10Minutes(Misfire.FIRE_ALL);

    assertThat(recurrence.onResume(spec, ms("15:05:00"))).hasValue(ms("15:10:00"));
  }

  /** Feeds each next occurrence back in, as punctuations at {@code nowMs} would. */
  private CatchUp catchUp(CronSpec spec, long dueMs, long nowMs) {
    List<Instant> fired = new ArrayList<>();
    long due = dueMs;
    long fires = 0;
    while (due <= nowMs) {
      Recurrence.Step step = recurrence.onDue(spec, due, fires, nowMs);
      if (step.fire()) {
        fired.add(Instant.ofEpochMilli(due));
        fires++;
      }
      assertThat(step.next()).as("next after %s", Instant.ofEpochMilli(due)).isPresent();
      assertThat(step.next().getAsLong()).isGreaterThan(due);
      due = step.next().getAsLong();
    }
    return new CatchUp(fired, Instant.ofEpochMilli(due));
  }

  private record CatchUp(List<Instant> fired, Instant next) {}

  private static CronSpec every10Minutes(Misfire misfire) {
    return spec(EVERY_10_MINUTES, misfire);
  }

  private static CronSpec limited(long maxFires, Misfire misfire) {
    return new CronSpec(
        EVERY_10_MINUTES,
        CronFlavor.QUARTZ,
        ZoneId.of("UTC"),
        CronSpec.NO_START,
        CronSpec.NO_END,
        maxFires,
        misfire);
  }

  private static CronSpec spec(String expression, Misfire misfire) {
    return new CronSpec(
        expression,
        CronFlavor.QUARTZ,
        ZoneId.of("UTC"),
        CronSpec.NO_START,
        CronSpec.NO_END,
        CronSpec.UNLIMITED,
        misfire);
  }

  /** A time of day on 2026-06-01, UTC. */
  private static Instant at(String time) {
    return Instant.parse("2026-06-01T" + time + "Z");
  }

  private static long ms(String time) {
    return at(time).toEpochMilli();
  }
}

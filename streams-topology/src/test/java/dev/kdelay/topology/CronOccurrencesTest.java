package dev.kdelay.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.schemas.CronFlavor;
import dev.kdelay.schemas.CronSpec;
import dev.kdelay.schemas.Misfire;
import dev.kdelay.topology.CronOccurrences.Occurrence;
import dev.kdelay.topology.CronOccurrences.Transition;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Next occurrences as people see them, around Berlin's daylight-saving changes of 2026. */
class CronOccurrencesTest {

  private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");
  private static final long HORIZON = Duration.ofDays(3650).toMillis();

  @Test
  void shouldMoveADailyTimeTheSpringForwardSkipsToTheEndOfTheGapAndSaySo() {
    // when: a daily 02:30 from two days before the clocks go from 02:00 to 03:00 (29 March)
    List<Occurrence> next = next("0 30 2 * * ?", "2026-03-27T12:00:00Z", 3);

    // then
    assertThat(next)
        .extracting(o -> Instant.ofEpochMilli(o.atMs()).toString())
        .containsExactly("2026-03-28T01:30:00Z", "2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z");
    assertThat(next)
        .extracting(o -> o.local().toString() + o.offset())
        .containsExactly(
            "2026-03-28T02:30+01:00", "2026-03-29T03:00+02:00", "2026-03-30T02:30+02:00");
    assertThat(next)
        .extracting(Occurrence::transition)
        .containsExactly(Optional.empty(), Optional.of(Transition.IN_GAP), Optional.empty());
  }

  @Test
  void shouldNotCallAnOccurrenceAskedForAtTheEndOfTheGapMoved() {
    List<Occurrence> next = next("0 0 3 * * ?", "2026-03-28T12:00:00Z", 1);

    assertThat(next.get(0).local().toString()).isEqualTo("2026-03-29T03:00");
    assertThat(next.get(0).transition()).contains(Transition.AFTER_SPRING_FORWARD);
  }

  @Test
  void shouldFireADailyTimeOnceInTheRepeatedHourOfTheFallBack() {
    // when: a daily 02:30 around 25 October, when 02:00-03:00 happens twice
    List<Occurrence> next = next("0 30 2 * * ?", "2026-10-24T12:00:00Z", 2);

    // then: the first 02:30 only, and the next day's marked as after the change
    assertThat(next)
        .extracting(o -> o.local().toString() + o.offset())
        .containsExactly("2026-10-25T02:30+02:00", "2026-10-26T02:30+01:00");
    assertThat(next)
        .extracting(Occurrence::transition)
        .containsExactly(
            Optional.of(Transition.IN_OVERLAP_FIRST), Optional.of(Transition.AFTER_FALL_BACK));
  }

  @Test
  void shouldKeepAHalfHourlyCadenceThroughTheRepeatedHour() {
    List<Occurrence> next = next("0 0/30 * * * ?", "2026-10-25T00:00:00Z", 4);

    assertThat(next)
        .extracting(o -> o.local().toString() + o.offset())
        .containsExactly(
            "2026-10-25T02:30+02:00",
            "2026-10-25T02:00+01:00",
            "2026-10-25T02:30+01:00",
            "2026-10-25T03:00+01:00");
    assertThat(next)
        .extracting(Occurrence::transition)
        .containsExactly(
            Optional.of(Transition.IN_OVERLAP_FIRST),
            Optional.of(Transition.IN_OVERLAP_SECOND),
            Optional.of(Transition.IN_OVERLAP_SECOND),
            Optional.empty());
  }

  @Test
  void shouldStopAtTheEndBoundAndRejectABadExpression() {
    CronSpec bounded =
        new CronSpec(
            "0 0 12 * * ?",
            CronFlavor.QUARTZ,
            BERLIN,
            CronSpec.NO_START,
            Instant.parse("2026-01-03T00:00:00Z").toEpochMilli(),
            CronSpec.UNLIMITED,
            Misfire.FIRE_ONCE);

    assertThat(
            CronOccurrences.next(
                bounded, Instant.parse("2026-01-01T00:00:00Z").toEpochMilli(), 10, HORIZON))
        .hasSize(2);
    assertThatThrownBy(() -> next("not cron", "2026-01-01T00:00:00Z", 1))
        .isInstanceOf(IllegalArgumentException.class);
  }

  private static List<Occurrence> next(String cron, String after, int count) {
    CronSpec spec =
        new CronSpec(
            cron,
            CronFlavor.QUARTZ,
            BERLIN,
            CronSpec.NO_START,
            CronSpec.NO_END,
            CronSpec.UNLIMITED,
            Misfire.FIRE_ONCE);
    return CronOccurrences.next(spec, Instant.parse(after).toEpochMilli(), count, HORIZON);
  }
}

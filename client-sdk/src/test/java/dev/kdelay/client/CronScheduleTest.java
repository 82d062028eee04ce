package dev.kdelay.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.schemas.CronFlavor;
import dev.kdelay.schemas.Misfire;
import java.time.Instant;
import java.time.ZoneId;
import org.junit.jupiter.api.Test;

class CronScheduleTest {

  private static final Instant START = Instant.parse("2026-01-01T00:00:00Z");
  private static final Instant END = Instant.parse("2026-12-31T00:00:00Z");

  @Test
  void shouldUseContractDefaultsWhenOnlyExpressionIsGiven() {
    CronSchedule cron = CronSchedule.of("0 15 2 * * ?");

    assertThat(cron.expression()).isEqualTo("0 15 2 * * ?");
    assertThat(cron.type()).isEqualTo(CronFlavor.QUARTZ);
    assertThat(cron.zone()).isEqualTo(ZoneId.of("UTC"));
    assertThat(cron.startAt()).isEmpty();
    assertThat(cron.endAt()).isEmpty();
    assertThat(cron.maxFires()).isEmpty();
    assertThat(cron.misfire()).isEqualTo(Misfire.FIRE_ONCE);
  }

  @Test
  void shouldReturnChangedCopyWhenOptionIsSet() {
    CronSchedule base = CronSchedule.of("0 15 2 * * ?");

    CronSchedule changed =
        base.type(CronFlavor.SPRING)
            .zone(ZoneId.of("Europe/Berlin"))
            .startAt(START)
            .endAt(END)
            .maxFires(3)
            .misfire(Misfire.SKIP);

    assertThat(base).isEqualTo(CronSchedule.of("0 15 2 * * ?"));
    assertThat(changed.type()).isEqualTo(CronFlavor.SPRING);
    assertThat(changed.zone()).isEqualTo(ZoneId.of("Europe/Berlin"));
    assertThat(changed.startAt()).contains(START);
    assertThat(changed.endAt()).contains(END);
    assertThat(changed.maxFires()).hasValue(3);
    assertThat(changed.misfire()).isEqualTo(Misfire.SKIP);
  }

  @Test
  void shouldBeEqualWhenBuiltWithSameOptions() {
    assertThat(CronSchedule.of("0 0 * * * ?").maxFires(2))
        .isEqualTo(CronSchedule.of("0 0 * * * ?").maxFires(2))
        .hasSameHashCodeAs(CronSchedule.of("0 0 * * * ?").maxFires(2))
        .isNotEqualTo(CronSchedule.of("0 0 * * * ?").maxFires(3));
  }

  @Test
  void shouldNameWireValuesWhenAskedForThem() {
    assertThat(CronFlavor.values())
        .extracting(CronFlavor::wireName)
        .containsExactly("quartz", "unix", "spring");
    assertThat(Misfire.values())
        .extracting(Misfire::wireName)
        .containsExactly("fire-once", "fire-all", "skip");
  }

  @Test
  void shouldRejectExpressionWhenNullOrBlank() {
    assertThatThrownBy(() -> CronSchedule.of(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("expression cannot be null");
    assertThatThrownBy(() -> CronSchedule.of("  "))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("expression must be a cron expression, got '  '");
  }

  @Test
  void shouldRejectBoundsWhenEndIsBeforeStart() {
    assertThatThrownBy(() -> CronSchedule.of("0 0 * * * ?").startAt(END).endAt(START))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("endAt must not be before startAt, got startAt " + END + " and endAt " + START);
    assertThatThrownBy(() -> CronSchedule.of("0 0 * * * ?").endAt(START).startAt(END))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void shouldRejectMaxFiresWhenLessThanOne() {
    assertThatThrownBy(() -> CronSchedule.of("0 0 * * * ?").maxFires(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxFires must be at least 1, got 0");
  }

  @Test
  void shouldRejectOptionsWhenNull() {
    CronSchedule cron = CronSchedule.of("0 0 * * * ?");

    assertThatThrownBy(() -> cron.type(null)).hasMessage("type cannot be null");
    assertThatThrownBy(() -> cron.zone(null)).hasMessage("zone cannot be null");
    assertThatThrownBy(() -> cron.startAt(null)).hasMessage("startAt cannot be null");
    assertThatThrownBy(() -> cron.endAt(null)).hasMessage("endAt cannot be null");
    assertThatThrownBy(() -> cron.misfire(null)).hasMessage("misfire cannot be null");
  }
}

package dev.kdelay.schemas;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.ZoneId;
import org.junit.jupiter.api.Test;

class CronOptionsTest {

  @Test
  void shouldGiveTheDefaultsWhenOptionsAreAbsent() {
    assertThat(CronOptions.flavor("cronType", null)).isEqualTo(CronFlavor.QUARTZ);
    assertThat(CronOptions.zone("zone", null)).isEqualTo(ZoneId.of("UTC"));
    assertThat(CronOptions.maxFires("maxFires", null)).isEqualTo(CronSpec.UNLIMITED);
    assertThat(CronOptions.misfire("misfire", null)).isEqualTo(Misfire.FIRE_ONCE);
  }

  @Test
  void shouldReadOptionsWhenGivenByWireName() {
    assertThat(CronOptions.flavor("cronType", "unix")).isEqualTo(CronFlavor.UNIX);
    assertThat(CronOptions.zone("zone", "Europe/Berlin")).isEqualTo(ZoneId.of("Europe/Berlin"));
    assertThat(CronOptions.maxFires("maxFires", "3")).isEqualTo(3);
    assertThat(CronOptions.misfire("misfire", "skip")).isEqualTo(Misfire.SKIP);
  }

  @Test
  void shouldNameTheOptionAndCodeWhenAnOptionIsBad() {
    assertRejected(
        () -> CronOptions.flavor("cronType", "cronie"),
        RejectionReason.BAD_CRON,
        "cronType is 'cronie'; expected quartz, unix or spring");
    assertRejected(
        () -> CronOptions.zone(DelayHeaders.ZONE, "Mars/Olympus"),
        RejectionReason.BAD_ZONE,
        "delay-zone is 'Mars/Olympus'; expected an IANA time zone such as Europe/Berlin");
    assertRejected(
        () -> CronOptions.maxFires(DelayHeaders.MAX_FIRES, "0"),
        RejectionReason.BAD_HEADER,
        "delay-max-fires is '0'; expected a positive integer");
    assertRejected(
        () -> CronOptions.misfire("misfire", "later"),
        RejectionReason.BAD_HEADER,
        "misfire is 'later'; expected fire-once, fire-all or skip");
  }

  @Test
  void shouldLeaveBoundsAndLimitOpenWhenUnbounded() {
    CronSpec spec = CronOptions.unbounded("0 0 * * * ?", CronFlavor.QUARTZ, ZoneId.of("UTC"));
    assertThat(spec.startAtMs()).isEqualTo(CronSpec.NO_START);
    assertThat(spec.endAtMs()).isEqualTo(CronSpec.NO_END);
    assertThat(spec.maxFires()).isEqualTo(CronSpec.UNLIMITED);
    assertThat(spec.misfire()).isEqualTo(CronOptions.DEFAULT_MISFIRE);
  }

  private static void assertRejected(Runnable read, RejectionReason reason, String message) {
    assertThatThrownBy(read::run)
        .isInstanceOfSatisfying(
            RejectionException.class, e -> assertThat(e.reason()).isEqualTo(reason))
        .hasMessage(message);
  }
}

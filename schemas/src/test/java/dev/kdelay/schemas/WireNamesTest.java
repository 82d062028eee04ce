package dev.kdelay.schemas;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The textual values of {@code delay-action}, {@code delay-cron-type} and {@code delay-misfire}.
 */
class WireNamesTest {

  @Test
  void shouldUseTheContractNamesWhenNamingActions() {
    assertThat(Action.values())
        .extracting(Action::wireName)
        .containsExactly("schedule", "cancel", "pause", "resume", "trigger", "reschedule");
    for (Action action : Action.values()) {
      assertThat(Action.fromWireName(action.wireName())).hasValue(action);
    }
  }

  @Test
  void shouldUseTheContractNamesWhenNamingCronFlavors() {
    assertThat(CronFlavor.values())
        .extracting(CronFlavor::wireName)
        .containsExactly("quartz", "unix", "spring");
    for (CronFlavor flavor : CronFlavor.values()) {
      assertThat(CronFlavor.fromWireName(flavor.wireName())).hasValue(flavor);
    }
  }

  @Test
  void shouldUseTheContractNamesWhenNamingMisfirePolicies() {
    assertThat(Misfire.values())
        .extracting(Misfire::wireName)
        .containsExactly("fire-once", "fire-all", "skip");
    for (Misfire misfire : Misfire.values()) {
      assertThat(Misfire.fromWireName(misfire.wireName())).hasValue(misfire);
    }
  }

  @Test
  void shouldFindNothingWhenNameDiffersInCaseOrIsNull() {
    assertThat(Action.fromWireName("Schedule")).isEmpty();
    assertThat(Action.fromWireName("SCHEDULE")).isEmpty();
    assertThat(Action.fromWireName(null)).isEmpty();
    assertThat(CronFlavor.fromWireName("QUARTZ")).isEmpty();
    assertThat(CronFlavor.fromWireName(null)).isEmpty();
    assertThat(Misfire.fromWireName("FIRE_ONCE")).isEmpty();
    assertThat(Misfire.fromWireName(null)).isEmpty();
  }

  @Test
  void shouldKeepOrdinalsWhenTheStoredTaskCodecDependsOnThem() {
    // StoredTaskCodec v1 writes CronFlavor and Misfire ordinals: reordering breaks stored data.
    assertThat(CronFlavor.QUARTZ.ordinal()).isZero();
    assertThat(CronFlavor.UNIX.ordinal()).isEqualTo(1);
    assertThat(CronFlavor.SPRING.ordinal()).isEqualTo(2);
    assertThat(Misfire.FIRE_ONCE.ordinal()).isZero();
    assertThat(Misfire.FIRE_ALL.ordinal()).isEqualTo(1);
    assertThat(Misfire.SKIP.ordinal()).isEqualTo(2);
  }
}

package dev.kdelay.topology;

import static dev.kdelay.topology.DelayDriver.TARGET;
import static dev.kdelay.topology.DelayDriver.bytes;
import static dev.kdelay.topology.DelayDriver.header;
import static dev.kdelay.topology.DelayDriver.headerText;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A producer whose clock runs ahead cannot pin a schedule id: a request stamped further ahead than
 * {@code delay.max.clock.skew.ms} counts as stamped when kdelay reads it.
 */
class ClockSkewTest {

  @TempDir Path stateDir;

  @Test
  void shouldApplyANormalCancelAfterAScheduleStampedYearsAhead() {
    try (DelayDriver delay = new DelayDriver(stateDir)) {
      // given: a schedule from a client whose clock is two years ahead
      Instant due = delay.now().plus(Duration.ofMinutes(10));
      futureSchedule(delay, due);

      // when: a correct client cancels it a moment later
      delay.advance(Duration.ofSeconds(1));
      delay.request("pinned", null);
      delay.advanceTo(due.plusSeconds(1));

      // then: the cancel applied
      assertThat(delay.fired()).isEmpty();
      assertThat(delay.deadLetters()).isEmpty();
    }
  }

  @Test
  void shouldCountDelayAfterFromWhenKdelayReadTheRequestWhenStampedTooFarAhead() {
    try (DelayDriver delay = new DelayDriver(stateDir)) {
      delay.request(
          bytes("after"),
          bytes("v"),
          delay.now().plus(Duration.ofDays(730)),
          header(DelayHeaders.TARGET_TOPIC, TARGET),
          header(DelayHeaders.AFTER, "PT5S"));

      delay.advanceTo(delay.now().plusSeconds(6));

      assertThat(delay.fired()).hasSize(1);
    }
  }

  @Test
  void shouldBelieveATimestampWithinTheAllowedSkew() {
    // given: a skew allowance of three years, the future-stamped schedule orders after the cancel
    try (DelayDriver delay =
        new DelayDriver(
            stateDir,
            Map.of(DelayConfig.MAX_CLOCK_SKEW_CONFIG, Duration.ofDays(3 * 365).toMillis()))) {
      Instant due = delay.now().plus(Duration.ofMinutes(10));
      futureSchedule(delay, due);

      delay.advance(Duration.ofSeconds(1));
      delay.request("pinned", null);
      delay.advanceTo(due.plusSeconds(1));

      // then: the cancel is older than the schedule's stamp, so it is superseded and the task fires
      assertThat(delay.deadLetters())
          .extracting(r -> headerText(r.headers(), DelayHeaders.ERROR))
          .containsExactly("SUPERSEDED");
      assertThat(delay.fired()).hasSize(1);
    }
  }

  private static void futureSchedule(DelayDriver delay, Instant due) {
    delay.request(
        bytes("pinned"),
        bytes("v"),
        delay.now().plus(Duration.ofDays(730)),
        header(DelayHeaders.TARGET_TOPIC, TARGET),
        header(DelayHeaders.FIRE_AT, Long.toString(due.toEpochMilli())));
  }
}

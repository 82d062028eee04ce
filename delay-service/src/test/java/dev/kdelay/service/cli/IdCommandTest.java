package dev.kdelay.service.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.schemas.Action;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class IdCommandTest {

  @Test
  void shouldReadTheIdAloneWhenTriggered() {
    assertThat(parse(Action.TRIGGER, "--id", "nightly"))
        .isEqualTo(new IdCommand(Action.TRIGGER, "nightly", Optional.empty()));
  }

  @Test
  void shouldReadTheNewTimeWhenRescheduled() {
    IdCommand after = parse(Action.RESCHEDULE, "--id", "order-42", "--after", "30m");
    IdCommand at = parse(Action.RESCHEDULE, "--id", "order-42", "--at", "2030-01-01T09:00:00Z");
    IdCommand cron =
        parse(
            Action.RESCHEDULE, "--id", "nightly", "--cron", "0 15 2 * * ?", "--zone", "Asia/Tokyo");

    assertThat(after.time().orElseThrow().after()).contains(Duration.ofMinutes(30));
    assertThat(at.time().orElseThrow().at()).contains(Instant.parse("2030-01-01T09:00:00Z"));
    assertThat(cron.time().orElseThrow().cron().orElseThrow().zone())
        .isEqualTo(ZoneId.of("Asia/Tokyo"));
  }

  @Test
  void shouldRefuseARescheduleWithoutExactlyOneTime() {
    assertThatThrownBy(() -> parse(Action.RESCHEDULE, "--id", "r"))
        .isInstanceOf(UsageException.class)
        .hasMessageContaining("exactly one of");
    assertThatThrownBy(() -> parse(Action.RESCHEDULE, "--id", "r", "--after", "1s", "--at", "0"))
        .isInstanceOf(UsageException.class)
        .hasMessageContaining("exactly one of");
  }

  @Test
  void shouldRefuseATimeOnAnActionThatTakesNone() {
    assertThatThrownBy(() -> parse(Action.TRIGGER, "--id", "r", "--after", "1s"))
        .isInstanceOf(UsageException.class)
        .hasMessageContaining("schedule and reschedule only");
  }

  private static IdCommand parse(Action action, String... args) {
    return IdCommand.parse(action, CommandLine.parse(List.of(args), IdCommand.OPTIONS, Set.of()));
  }
}

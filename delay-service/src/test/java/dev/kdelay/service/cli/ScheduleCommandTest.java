package dev.kdelay.service.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.client.CronSchedule;
import dev.kdelay.schemas.CronFlavor;
import dev.kdelay.schemas.Misfire;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ScheduleCommandTest {

  @Test
  void shouldReadAllArgumentsWhenScheduledAfterADelay() {
    ScheduleCommand command =
        parse("--id", "order-42", "--target", "timeouts", "--after", "30s", "--key", "k", "{}");

    assertThat(command)
        .isEqualTo(
            new ScheduleCommand(
                "order-42",
                "timeouts",
                new TimeOptions(
                    java.util.Optional.of(Duration.ofSeconds(30)),
                    java.util.Optional.empty(),
                    java.util.Optional.empty()),
                java.util.Optional.of("k"),
                "{}"));
  }

  @Test
  void shouldReadEveryCronOptionWhenScheduledWithCron() {
    ScheduleCommand command =
        parse(
            "--id",
            "nightly",
            "--target",
            "reports",
            "--cron",
            "15 2 * * *",
            "--cron-type",
            "unix",
            "--zone",
            "Europe/Berlin",
            "--start-at",
            "2030-01-01T00:00:00Z",
            "--end-at",
            "2031-01-01T00:00:00Z",
            "--max-fires",
            "10",
            "--misfire",
            "skip",
            "run");

    CronSchedule cron = command.time().cron().orElseThrow();
    assertThat(cron.expression()).isEqualTo("15 2 * * *");
    assertThat(cron.type()).isEqualTo(CronFlavor.UNIX);
    assertThat(cron.zone()).isEqualTo(ZoneId.of("Europe/Berlin"));
    assertThat(cron.startAt()).contains(Instant.parse("2030-01-01T00:00:00Z"));
    assertThat(cron.endAt()).contains(Instant.parse("2031-01-01T00:00:00Z"));
    assertThat(cron.maxFires()).hasValue(10);
    assertThat(cron.misfire()).isEqualTo(Misfire.SKIP);
    assertThat(command.message().cron()).contains(cron);
  }

  @Test
  void shouldFailWhenACronOptionComesWithoutCron() {
    assertThatThrownBy(
            () -> parse("--id", "r", "--target", "t", "--after", "5s", "--zone", "UTC", "value"))
        .isInstanceOf(UsageException.class)
        .hasMessageContaining("need --cron");
  }

  @Test
  void shouldRefuseACronExpressionThatIsNotValidInItsType() {
    // five fields are a unix expression; the default type, quartz, has six or seven
    assertThatThrownBy(() -> parse("--id", "r", "--target", "t", "--cron", "*/5 * * * *", "v"))
        .isInstanceOf(UsageException.class)
        .hasMessageStartingWith("--cron: ");
    assertThat(
            parse("--id", "r", "--target", "t", "--cron", "*/5 * * * *", "--cron-type", "unix", "v")
                .time()
                .cron())
        .isPresent();
  }

  @Test
  void shouldNameTheOptionWhenTheZoneIsUnknown() {
    assertThatThrownBy(
            () ->
                parse(
                    "--id",
                    "r",
                    "--target",
                    "t",
                    "--cron",
                    "* * * * *",
                    "--zone",
                    "Mars/Base",
                    "v"))
        .isInstanceOf(UsageException.class)
        .hasMessageStartingWith("--zone");
  }

  @Test
  void shouldReadTheDueTimeWhenScheduledAtAnInstant() {
    ScheduleCommand command =
        parse("--id", "r", "--target", "t", "--at", "2030-01-01T09:00:00Z", "hello");

    assertThat(command.time().at()).contains(Instant.parse("2030-01-01T09:00:00Z"));
    assertThat(command.time().after()).isEmpty();
    assertThat(command.targetKey()).isEmpty();
    assertThat(command.value()).isEqualTo("hello");
  }

  @Test
  void shouldFailWhenBothAfterAndAtAreGiven() {
    assertThatThrownBy(
            () -> parse("--id", "r", "--target", "t", "--after", "5s", "--at", "0", "value"))
        .isInstanceOf(UsageException.class)
        .hasMessage("give exactly one of --after DURATION, --at INSTANT and --cron EXPR");
  }

  @Test
  void shouldFailWhenNeitherAfterNorAtIsGiven() {
    assertThatThrownBy(() -> parse("--id", "r", "--target", "t", "value"))
        .isInstanceOf(UsageException.class)
        .hasMessage("give exactly one of --after DURATION, --at INSTANT and --cron EXPR");
  }

  @Test
  void shouldNameTheOptionWhenADurationIsMalformed() {
    assertThatThrownBy(() -> parse("--id", "r", "--target", "t", "--after", "soon", "value"))
        .isInstanceOf(UsageException.class)
        .hasMessageStartingWith("--after: not a duration: 'soon'");
  }

  @Test
  void shouldNameTheOptionWhenAnInstantIsMalformed() {
    assertThatThrownBy(() -> parse("--id", "r", "--target", "t", "--at", "tomorrow", "value"))
        .isInstanceOf(UsageException.class)
        .hasMessageStartingWith("--at: not an instant: 'tomorrow'");
  }

  @Test
  void shouldFailWhenTheValueIsMissing() {
    assertThatThrownBy(() -> parse("--id", "r", "--target", "t", "--after", "5s"))
        .isInstanceOf(UsageException.class)
        .hasMessageContaining("expected exactly one VALUE");
  }

  @Test
  void shouldFailWhenTheTargetIsMissing() {
    assertThatThrownBy(() -> parse("--id", "r", "--after", "5s", "value"))
        .isInstanceOf(UsageException.class)
        .hasMessage("option --target is required");
  }

  @Test
  void shouldAcceptClientOptionsWhenGiven() {
    CommandLine line =
        CommandLine.parse(
            List.of(
                "--bootstrap-servers",
                "kafka:9092",
                "--requests-topic",
                "req",
                "--id",
                "r",
                "--target",
                "t",
                "--after",
                "1s",
                "v"),
            ScheduleCommand.OPTIONS,
            Set.of());

    assertThat(line.option("--bootstrap-servers")).contains("kafka:9092");
    assertThat(ScheduleCommand.parse(line).id()).isEqualTo("r");
  }

  private static ScheduleCommand parse(String... args) {
    return ScheduleCommand.parse(
        CommandLine.parse(List.of(args), ScheduleCommand.OPTIONS, Set.of()));
  }
}

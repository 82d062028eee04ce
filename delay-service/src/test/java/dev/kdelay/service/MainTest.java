package dev.kdelay.service;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.service.cli.CommandLine;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MainTest {

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  @Test
  void shouldPrintUsageAndSucceedWhenHelpIsAsked() {
    int code = main(Map.of(), "--help");

    assertThat(code).isEqualTo(CommandLine.OK);
    assertThat(text(out)).contains("Usage: kdelay");
  }

  @Test
  void shouldExitWithTwoAndPrintUsageWhenTheCommandIsUnknown() {
    int code = main(Map.of(), "postpone", "--id", "x");

    assertThat(code).isEqualTo(CommandLine.USAGE);
    assertThat(text(err)).contains("unknown command 'postpone'").contains("Usage: kdelay");
  }

  @Test
  void shouldExitWithTwoWhenARescheduleHasNoTime() {
    int code = main(Map.of(), "reschedule", "--id", "x");

    assertThat(code).isEqualTo(CommandLine.USAGE);
    assertThat(text(err)).contains("kdelay reschedule: give exactly one of --after");
  }

  @Test
  void shouldExitWithTwoWhenScheduleArgumentsAreBad() {
    int code = main(Map.of(), "schedule", "--id", "x", "--target", "t", "--after", "later", "v");

    assertThat(code).isEqualTo(CommandLine.USAGE);
    assertThat(text(err)).contains("kdelay schedule: --after: not a duration: 'later'");
  }

  @Test
  void shouldExitWithTwoWhenCancelHasNoId() {
    assertThat(main(Map.of(), "cancel")).isEqualTo(CommandLine.USAGE);
    assertThat(text(err)).contains("option --id is required");
  }

  @Test
  void shouldExitWithTwoWhenPauseOrResumeHasNoId() {
    assertThat(main(Map.of(), "pause")).isEqualTo(CommandLine.USAGE);
    assertThat(main(Map.of(), "resume", "extra")).isEqualTo(CommandLine.USAGE);
    assertThat(text(err)).contains("kdelay pause:").contains("kdelay resume:");
  }

  @Test
  void shouldExitWithTwoWhenWatchHasNoTopic() {
    assertThat(main(Map.of(), "watch", "--from-beginning")).isEqualTo(CommandLine.USAGE);
    assertThat(text(err)).contains("expected exactly one TOPIC");
  }

  @Test
  void shouldExitWithTwoWhenRunGetsAnUnknownOption() {
    assertThat(main(Map.of(), "--port", "1")).isEqualTo(CommandLine.USAGE);
    assertThat(text(err)).contains("kdelay run: unknown option --port");
  }

  @Test
  void shouldExitWithOneAndNameTheKeyWhenTheConfigurationIsBad() {
    int code = main(Map.of("DELAY_TOPIC_PARTITIONS", "0"), "run");

    assertThat(code).isEqualTo(CommandLine.FAILED);
    assertThat(text(err))
        .contains("delay.topic.partitions=0")
        .contains("environment variable DELAY_TOPIC_PARTITIONS")
        .contains("Value must be at least 1");
  }

  @Test
  void shouldExitWithOneWhenACliCommandMeetsABadConfiguration() {
    int code = main(Map.of("DELAY_REQUESTS_TOPIC", ""), "cancel", "--id", "x");

    assertThat(code).isEqualTo(CommandLine.FAILED);
    assertThat(text(err)).contains("delay.requests.topic=");
  }

  @Test
  void shouldNameTheVariableButPrintNoSecretWhenAMisspeltVariableCarriesOne() {
    String jaas =
        "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"kdelay\""
            + " password=\"s3cr3t-pa55\";";

    for (String command : List.of("run", "schedule", "watch")) {
      List<String> args =
          switch (command) {
            case "schedule" ->
                List.of("schedule", "--id", "a", "--target", "t", "--after", "1s", "v");
            case "watch" -> List.of("watch", "t");
            default -> List.of(command);
          };
      int code = main(Map.of("DELAY_SASL_JAAS_CONFIGG", jaas), args.toArray(String[]::new));

      assertThat(code).as(command).isEqualTo(CommandLine.FAILED);
      assertThat(text(err)).contains("DELAY_SASL_JAAS_CONFIGG");
      assertThat(text(out) + text(err)).doesNotContain("s3cr3t-pa55");
    }
  }

  private int main(Map<String, String> environment, String... args) {
    return new Main(
            environment,
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8))
        .execute(List.of(args));
  }

  private static String text(ByteArrayOutputStream stream) {
    return stream.toString(StandardCharsets.UTF_8);
  }
}

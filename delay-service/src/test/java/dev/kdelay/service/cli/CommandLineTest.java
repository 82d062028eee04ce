package dev.kdelay.service.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class CommandLineTest {

  private static final Set<String> OPTIONS = Set.of("--id", "--key");
  private static final Set<String> FLAGS = Set.of("--from-beginning");

  @Test
  void shouldReadOptionsFlagsAndPositionalsWhenMixed() {
    CommandLine line =
        CommandLine.parse(
            List.of("--id", "a", "value", "--key=k=1", "--from-beginning"), OPTIONS, FLAGS);

    assertThat(line.option("--id")).contains("a");
    assertThat(line.option("--key")).contains("k=1");
    assertThat(line.flag("--from-beginning")).isTrue();
    assertThat(line.positionals()).containsExactly("value");
  }

  @Test
  void shouldTreatEverythingAsPositionalWhenAfterDoubleDash() {
    CommandLine line = CommandLine.parse(List.of("--id", "a", "--", "--key"), OPTIONS, FLAGS);

    assertThat(line.singlePositional("VALUE")).isEqualTo("--key");
    assertThat(line.option("--key")).isEmpty();
  }

  @Test
  void shouldTakeTheNextArgumentAsValueWhenItLooksLikeANegativeNumber() {
    CommandLine line = CommandLine.parse(List.of("--key", "-1"), OPTIONS, FLAGS);

    assertThat(line.option("--key")).contains("-1");
  }

  @Test
  void shouldFailWhenAnOptionIsUnknown() {
    assertThatThrownBy(() -> CommandLine.parse(List.of("--colour", "red"), OPTIONS, FLAGS))
        .isInstanceOf(UsageException.class)
        .hasMessage("unknown option --colour");
  }

  @Test
  void shouldFailWhenAValueIsMissing() {
    assertThatThrownBy(() -> CommandLine.parse(List.of("--id"), OPTIONS, FLAGS))
        .isInstanceOf(UsageException.class)
        .hasMessage("option --id needs a value");
  }

  @Test
  void shouldFailWhenAnOptionIsRepeated() {
    assertThatThrownBy(() -> CommandLine.parse(List.of("--id", "a", "--id=b"), OPTIONS, FLAGS))
        .isInstanceOf(UsageException.class)
        .hasMessage("option --id is given twice");
  }

  @Test
  void shouldFailWhenAFlagHasAValue() {
    assertThatThrownBy(() -> CommandLine.parse(List.of("--from-beginning=yes"), OPTIONS, FLAGS))
        .isInstanceOf(UsageException.class)
        .hasMessage("option --from-beginning takes no value");
  }

  @Test
  void shouldFailWhenARequiredOptionIsMissing() {
    CommandLine line = CommandLine.parse(List.of(), OPTIONS, FLAGS);

    assertThatThrownBy(() -> line.required("--id"))
        .isInstanceOf(UsageException.class)
        .hasMessage("option --id is required");
  }
}

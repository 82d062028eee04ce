package dev.kdelay.service.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.service.move.DeploymentMove;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class MoveCommandTest {

  @Test
  void shouldReadTheTargetTopicWithTheDefaultsWhenNothingElseIsGiven() {
    assertThat(parse("--to", "delay-requests-48"))
        .isEqualTo(
            new MoveCommand(
                "delay-requests-48", null, DeploymentMove.DEFAULT_BATCH, Duration.ofMinutes(2)));
  }

  @Test
  void shouldReadTheApplicationIdBatchAndWaitWhenGiven() {
    assertThat(parse("--to", "t", "--application-id", "kdelay-6", "--batch", "50", "--wait", "30s"))
        .isEqualTo(new MoveCommand("t", "kdelay-6", 50, Duration.ofSeconds(30)));
  }

  @Test
  void shouldRefuseAMoveWithoutATargetOrWithABadBatchOrWait() {
    assertThatThrownBy(() -> parse("--application-id", "kdelay"))
        .isInstanceOf(UsageException.class)
        .hasMessageContaining("--to is required");
    assertThatThrownBy(() -> parse("--to", "t", "--batch", "0"))
        .isInstanceOf(UsageException.class)
        .hasMessageContaining("--batch must be at least 1");
    assertThatThrownBy(() -> parse("--to", "t", "--batch", "many"))
        .isInstanceOf(UsageException.class)
        .hasMessageContaining("--batch must be a number");
    assertThatThrownBy(() -> parse("--to", "t", "--wait", "soon"))
        .isInstanceOf(UsageException.class)
        .hasMessageContaining("--wait");
    assertThatThrownBy(() -> parse("--to", "t", "extra"))
        .isInstanceOf(UsageException.class)
        .hasMessageContaining("unexpected arguments");
  }

  private static MoveCommand parse(String... args) {
    return MoveCommand.parse(CommandLine.parse(List.of(args), MoveCommand.OPTIONS, Set.of()));
  }
}

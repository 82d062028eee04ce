package dev.kdelay.schemas;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class RejectionTest {

  @Test
  void shouldKeepAMessageWhole() {
    String message = "x".repeat(Rejection.MAX_MESSAGE_CHARS);

    assertThat(new Rejection(RejectionReason.BAD_TIME, message).message()).isEqualTo(message);
  }

  @Test
  void shouldCutAnEchoedValueAndSayHowMuchWasLeftOut() {
    // given: a 600 KB garbage delay-fire-at, echoed by the parser
    String garbage = "9".repeat(600_000);

    // when
    String message = "delay-fire-at '" + garbage + "' is not a time";
    Rejection rejection = new Rejection(RejectionReason.BAD_TIME, message);

    // then
    assertThat(rejection.message())
        .hasSizeLessThanOrEqualTo(Rejection.MAX_MESSAGE_CHARS)
        .startsWith("delay-fire-at '999")
        .endsWith("... (" + (message.length() - 360) + " more characters)");
  }

  @Test
  void shouldNotSplitASurrogatePairWhenCutting() {
    // given: an emoji (two chars) straddling the cut
    String message = "a".repeat(Rejection.MAX_MESSAGE_CHARS - 41) + "😀" + "b".repeat(500);

    String cut = new Rejection(RejectionReason.BAD_HEADER, message).message();

    assertThat(new String(cut.getBytes(UTF_8), UTF_8)).isEqualTo(cut);
    assertThat(cut).doesNotContain("?").startsWith("a".repeat(Rejection.MAX_MESSAGE_CHARS - 41));
  }
}

package dev.kdelay.topology.internals;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

/**
 * The order in which the copies of an id that wait for their topic's look-up go on: the first one
 * written first, whatever order they come back in, and each at the latest when the look-up timed
 * out.
 */
class TopicWaitsTest {

  private static final long TIMEOUT = 500;

  private final TopicWaits waits = new TopicWaits(TIMEOUT);

  @Test
  void shouldLetAnIdsCopiesGoOnOnlyInTheOrderTheyStartedWaiting() {
    waits.started("x", "a");
    waits.started("x", "b");
    TopicWaits.Copy a = new TopicWaits.Copy("a", 0);
    TopicWaits.Copy b = new TopicWaits.Copy("b", 0);

    assertThat(waits.mayGoOn("x", b, true, 10)).isFalse();
    assertThat(waits.mayGoOn("x", a, false, 10)).isFalse(); // its topic is still looked up
    assertThat(waits.mayGoOn("x", a, true, 20)).isTrue();
    waits.done("x", "a");
    assertThat(waits.hasWaiting("x")).isTrue();
    assertThat(waits.mayGoOn("x", b, true, 30)).isTrue();
    waits.done("x", "b");
    assertThat(waits.hasWaiting("x")).isFalse();
  }

  @Test
  void shouldLetTheFirstGoOnUncheckedWhenTheLookUpTimedOut() {
    waits.started("x", "a");
    TopicWaits.Copy a = new TopicWaits.Copy("a", 1_000);

    assertThat(waits.mayGoOn("x", a, false, 1_000 + TIMEOUT - 1)).isFalse();
    assertThat(waits.mayGoOn("x", a, false, 1_000 + TIMEOUT)).isTrue();
    assertThat(waits.timedOut(a, 1_000 + TIMEOUT)).isTrue();
  }

  @Test
  void shouldAdoptCopiesInTheOrderTheyComeBackWhenNothingIsKnownOfThem() {
    TopicWaits.Copy a = new TopicWaits.Copy("a", 0);
    TopicWaits.Copy b = new TopicWaits.Copy("b", 0);

    assertThat(waits.mayGoOn("x", a, false, 10)).isFalse(); // adopted, waits again
    assertThat(waits.mayGoOn("x", b, true, 11)).isFalse(); // adopted behind a
    assertThat(waits.mayGoOn("x", a, true, 12)).isTrue();
  }

  @Test
  void shouldStopKeepingAPlaceBehindACopyThatNeverCameBack() {
    waits.started("x", "lost");
    TopicWaits.Copy late = new TopicWaits.Copy("late", 0);

    assertThat(waits.mayGoOn("x", late, true, TIMEOUT)).isFalse();
    assertThat(waits.mayGoOn("x", late, true, TIMEOUT + 30_000)).isTrue();
  }

  @Test
  void shouldReadOnlyTheHeaderOfACopyReadFromTheRerouteTopic() {
    RecordHeaders headers = new RecordHeaders();
    headers.add(TopicWaits.HEADER, TopicWaits.header(1234, "delay-requests-0@7"));

    assertThat(TopicWaits.copyOf(headers, true))
        .isEqualTo(new TopicWaits.Copy("delay-requests-0@7", 1234));
    assertThat(TopicWaits.copyOf(headers, false)).isNull();
    RecordHeaders garbled = new RecordHeaders();
    garbled.add(TopicWaits.HEADER, "no-time".getBytes(StandardCharsets.UTF_8));
    assertThat(TopicWaits.copyOf(garbled, true)).isNull();
  }
}

package dev.kdelay.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class LatenessSectionTest {

  @Test
  void shouldCallKdelayNoLaterWhenItsP50AndP99AreAtMostTheTextbooksAtEveryRate() {
    List<Runs.LatenessRun> kdelay = List.of(run(1_000, 4, 10, 0), run(5_000, 6, 30, 0));
    List<Runs.LatenessRun> textbook = List.of(run(1_000, 4, 10, 0), run(5_000, 50, 90, 0));

    assertThat(LatenessSection.noLaterThanTextbook(kdelay, textbook)).isTrue();
  }

  @Test
  void shouldNotCallKdelayNoLaterWhenItsP99IsAboveTheTextbooksAtOneRate() {
    List<Runs.LatenessRun> kdelay = List.of(run(1_000, 4, 10, 0), run(5_000, 6, 91, 0));
    List<Runs.LatenessRun> textbook = List.of(run(1_000, 5, 20, 0), run(5_000, 50, 90, 0));

    assertThat(LatenessSection.noLaterThanTextbook(kdelay, textbook)).isFalse();
  }

  @Test
  void shouldNotCallKdelayNoLaterWhenItMissedTasks() {
    List<Runs.LatenessRun> kdelay = List.of(run(1_000, 4, 10, 1));
    List<Runs.LatenessRun> textbook = List.of(run(1_000, 50, 90, 0));

    assertThat(LatenessSection.noLaterThanTextbook(kdelay, textbook)).isFalse();
  }

  @Test
  void shouldCallKdelayNoLaterWhenTheTextbookFiredNothing() {
    List<Runs.LatenessRun> kdelay = List.of(run(1_000, 400, 900, 0));
    List<Runs.LatenessRun> textbook = List.of(run(1_000, 0, 0, 100));

    assertThat(LatenessSection.noLaterThanTextbook(kdelay, textbook)).isTrue();
  }

  /**
   * A run of 100 tasks due 1 ms apart: 98 {@code p50Ms} late, 2 {@code p99Ms} late, the last {@code
   * missing} of them never fired.
   */
  private static Runs.LatenessRun run(int rate, long p50Ms, long p99Ms, int missing) {
    int fired = 100 - missing;
    long[] due = new long[fired];
    long[] visible = new long[fired];
    for (int i = 0; i < fired; i++) {
      due[i] = 1_000 + i;
      visible[i] = due[i] + (i < 98 ? p50Ms : p99Ms);
    }
    Lateness lateness = Lateness.of(due, visible);
    return new Runs.LatenessRun(
        rate, lateness, lateness, 0, 100, 0, 0.1, 2, Duration.ofSeconds(1), 10, 1, 0, false);
  }
}

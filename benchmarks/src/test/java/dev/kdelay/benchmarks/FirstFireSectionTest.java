package dev.kdelay.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class FirstFireSectionTest {

  @Test
  void shouldSetKdelaysFirstSecondBesideThePlainProducersRunForRun() {
    // given: two rounds; kdelay's first second 80 and 60 ms late at p99, the plain producer's 50
    // and 70
    List<Runs.LatenessRun> kdelay = List.of(run(80, 30, 0), run(60, 30, 0));
    List<Runs.LatenessRun> plain = List.of(run(50, 10, 0), run(70, 10, 0));

    // when
    String line = FirstFireSection.againstPlain(kdelay, plain);

    // then: the pairs, and the most kdelay added in a round
    assertThat(line)
        .endsWith(
            "kdelay | plain producer, run for run: 80 | 50, 60 | 70; kdelay adds at most 30 ms");
    assertThat(FirstFireSection.firstSecond("plain, new 1", plain.get(0))).doesNotContain("JIT");
  }

  @Test
  void shouldSplitTheFirstSecondFromTheRestAndSayHowLongTheJitWorked() {
    // given four seconds of due times, 10 tasks a second: the first second's fired 30 ms late and
    // visible 80 ms late, the rest fired 5 ms late and visible 20 ms late; the JIT at work 1,234 ms

    // when
    String line = FirstFireSection.firstSecond("new topic 1", run(80, 30, 1_234));

    // then
    assertThat(line)
        .contains(
            "first second: p99 80, max 80 ms (fired: max 30); the rest: p99 20, max 20 ms"
                + " (fired: max 5); JIT at work 1,234 ms in the run");
  }

  /**
   * Four seconds of due times, 10 tasks a second: the first second's visible {@code firstVisible}
   * ms and fired {@code firstFired} ms after due, the rest 20 and 5.
   */
  private static Runs.LatenessRun run(long firstVisible, long firstFired, long compileMs) {
    int tasks = 40;
    long[] due = new long[tasks];
    long[] fired = new long[tasks];
    long[] visible = new long[tasks];
    for (int i = 0; i < tasks; i++) {
      due[i] = 10_000 + i * 100L;
      boolean first = i < 10;
      fired[i] = due[i] + (first ? firstFired : 5);
      visible[i] = due[i] + (first ? firstVisible : 20);
    }
    return new Runs.LatenessRun(
        10,
        Lateness.of(due, visible),
        Lateness.of(due, fired),
        0,
        tasks,
        0,
        0.1,
        4,
        Duration.ofSeconds(4),
        10,
        2,
        compileMs,
        false);
  }
}

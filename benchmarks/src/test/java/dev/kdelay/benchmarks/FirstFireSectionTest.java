package dev.kdelay.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class FirstFireSectionTest {

  @Test
  void shouldSplitTheFirstSecondFromTheRestAndSayHowLongTheJitWorked() {
    // given four seconds of due times, 10 tasks a second: the first second's fired 30 ms late and
    // visible 80 ms late, the rest fired 5 ms late and visible 20 ms late
    int tasks = 40;
    long[] due = new long[tasks];
    long[] fired = new long[tasks];
    long[] visible = new long[tasks];
    for (int i = 0; i < tasks; i++) {
      due[i] = 10_000 + i * 100L;
      boolean first = i < 10;
      fired[i] = due[i] + (first ? 30 : 5);
      visible[i] = due[i] + (first ? 80 : 20);
    }
    Runs.LatenessRun run =
        new Runs.LatenessRun(
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
            1_234,
            false);

    // when
    String line = FirstFireSection.firstSecond("new topic 1", run);

    // then
    assertThat(line)
        .contains(
            "first second: p99 80, max 80 ms (fired: max 30); the rest: p99 20, max 20 ms"
                + " (fired: max 5); JIT at work 1,234 ms in the run");
  }
}

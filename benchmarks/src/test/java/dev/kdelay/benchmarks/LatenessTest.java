package dev.kdelay.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LatenessTest {

  @Test
  void shouldSplitRunIntoWindowsByDueTime() {
    // given 100 tasks due 10 ms apart, the later half 40 ms later to become visible than the first
    long[] due = new long[100];
    long[] visible = new long[100];
    for (int i = 0; i < 100; i++) {
      due[i] = 1_000 + i * 10L;
      visible[i] = due[i] + (i < 50 ? 5 : 45);
    }

    // when
    Lateness lateness = Lateness.of(due, visible);
    Samples[] windows = lateness.windows(2);

    // then
    assertThat(windows).hasSize(2);
    assertThat(windows[0].percentile(50)).isEqualTo(5);
    assertThat(windows[1].percentile(50)).isEqualTo(45);
    assertThat(lateness.acrossWindows(50, 2)).isEqualTo(new Spread(25, 5, 45, 2));
    assertThat(lateness.percentile(99)).isEqualTo(45);
  }

  @Test
  void shouldCountRecordsVisibleBeforeTheirDueTimeAsEarly() {
    Lateness lateness = Lateness.of(new long[] {100, 100, 100}, new long[] {99, 100, 120});

    assertThat(lateness.early()).isEqualTo(1);
    assertThat(lateness.max()).isEqualTo(20);
  }

  @Test
  void shouldKeepOneWindowWhenAllAreDueInTheSameMillisecond() {
    Lateness lateness = Lateness.of(new long[] {7, 7, 7}, new long[] {8, 9, 10});

    assertThat(lateness.windows(4)).hasSize(1);
  }
}

package dev.kdelay.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SamplesTest {

  @Test
  void shouldUseNearestRankWhenTakingPercentiles() {
    // given 1..100 in shuffled order
    Samples samples = new Samples();
    for (int i = 0; i < 100; i++) {
      samples.add((i * 37) % 100 + 1);
    }

    // then every percentile is a measured value, the smallest covering that share
    assertThat(samples.percentile(50)).isEqualTo(50);
    assertThat(samples.percentile(99)).isEqualTo(99);
    assertThat(samples.percentile(99.9)).isEqualTo(100);
    assertThat(samples.percentile(100)).isEqualTo(100);
    assertThat(samples.percentile(0.1)).isEqualTo(1);
    assertThat(samples.min()).isEqualTo(1);
    assertThat(samples.max()).isEqualTo(100);
  }

  @Test
  void shouldReturnTheOnlySampleForEveryPercentile() {
    Samples samples = new Samples();
    samples.add(7);

    assertThat(samples.percentile(50)).isEqualTo(7);
    assertThat(samples.percentile(99.9)).isEqualTo(7);
  }

  @Test
  void shouldKeepSortingWhenSamplesAreAddedAfterAPercentile() {
    Samples samples = new Samples();
    samples.add(10);
    samples.add(20);
    assertThat(samples.max()).isEqualTo(20);

    samples.add(5);

    assertThat(samples.min()).isEqualTo(5);
    assertThat(samples.percentile(50)).isEqualTo(10);
  }

  @Test
  void shouldGrowBeyondItsInitialCapacity() {
    Samples samples = new Samples();
    for (int i = 10_000; i > 0; i--) {
      samples.add(i);
    }

    assertThat(samples.size()).isEqualTo(10_000);
    assertThat(samples.percentile(99.9)).isEqualTo(9_990);
  }

  @Test
  void shouldCountSamplesBelowABound() {
    Samples samples = new Samples();
    for (long value : new long[] {-3, -1, 0, 0, 4}) {
      samples.add(value);
    }

    assertThat(samples.countBelow(0)).isEqualTo(2);
  }

  @Test
  void shouldRejectPercentilesOutOfRangeAndEmptySamples() {
    Samples samples = new Samples();
    assertThatThrownBy(() -> samples.percentile(50)).isInstanceOf(IllegalStateException.class);
    samples.add(1);
    assertThatThrownBy(() -> samples.percentile(0)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> samples.percentile(100.5))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void shouldHoldBothSetsWhenOneIsAddedToAnother() {
    Samples a = new Samples();
    a.add(5);
    Samples b = new Samples();
    b.add(1);
    b.add(9);

    a.addAll(b);

    assertThat(a.size()).isEqualTo(3);
    assertThat(a.min()).isEqualTo(1);
    assertThat(a.max()).isEqualTo(9);
  }
}

package dev.kdelay.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SettingsTest {

  private final Settings quick = Settings.quick();

  @Test
  void shouldKeepTheCeilingsRecordCountWhenKdelayIsFastEnough() {
    assertThat(quick.kdelayRecords(50_000)).isEqualTo(quick.throughputRecords());
  }

  @Test
  void shouldShortenKdelayRunsToTheBudgetWhenKdelayIsSlow() {
    // 500/s for the 10 s budget
    assertThat(quick.kdelayRecords(700)).isEqualTo(7_000);
    assertThat(quick.kdelayRecords(1)).isEqualTo(500);
  }

  @Test
  void shouldDropTheDelayWhenKdelayRunsAreCutShort() {
    assertThat(quick.kdelayDelayMs(quick.throughputRecords())).isEqualTo(2_000);
    assertThat(quick.kdelayDelayMs(500)).isZero();
  }

  @Test
  void shouldSendForTheFullDurationWhenTheRateIsWithinHalfTheThroughput() {
    Duration full = Duration.ofSeconds(20);

    assertThat(quick.latenessDuration(full, 5_000, 12_000)).isEqualTo(full);
  }

  @Test
  void shouldShortenARunWhoseBacklogWouldNotDrainWithinTheBudget() {
    // half of 2,000/s drains; 4,000/s piles up 3,000/s: 10 s x 1,000 / 3,000 = 3.3 s
    assertThat(quick.latenessDuration(Duration.ofSeconds(20), 4_000, 2_000))
        .isEqualTo(Duration.ofMillis(3_333));
    assertThat(quick.latenessDuration(Duration.ofSeconds(20), 100_000, 100))
        .isEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void shouldSizeFillsByTheirBudget() {
    assertThat(quick.capacityTasks(1_000)).isEqualTo(30_000);
    assertThat(Settings.full().capacityTasks(100_000)).isEqualTo(10_000_000);
  }

  @Test
  void shouldRunOnlyTheChosenParts() {
    Settings some = quick.withParts(Set.of("burst"));

    assertThat(some.runs("burst")).isTrue();
    assertThat(some.runs("throughput")).isFalse();
  }

  @Test
  void shouldKeepEveryOverrideWhenAnotherIsGiven() {
    Settings changed =
        quick
            .withBurstTasks(20_000)
            .withRuns(1)
            .withCapacityTasks(5_000)
            .withParts(Set.of("burst"));
    assertThat(changed.burstTasks()).isEqualTo(20_000);
    assertThat(changed.runs()).isEqualTo(1);
    assertThat(changed.capacityTasks()).isEqualTo(5_000);
    assertThat(changed.parts()).containsExactly("burst");
    assertThat(changed.throughputRecords()).isEqualTo(quick.throughputRecords());
  }

  @Test
  void shouldRoundRatesDownToTwoSignificantDigits() {
    assertThat(Benchmark.roundRate(13_579)).isEqualTo(13_000);
    assertThat(Benchmark.roundRate(435.6)).isEqualTo(430);
    assertThat(Benchmark.roundRate(99)).isEqualTo(99);
    assertThat(Benchmark.roundRate(3)).isEqualTo(10);
  }

  @Test
  void shouldSkipTheCalibrationWhenOnlyTheFirstFiresRun() {
    assertThat(quick.withParts(Set.of("first-fire")).sizesByThroughput()).isFalse();
    assertThat(quick.withParts(Set.of("first-fire", "burst")).sizesByThroughput()).isTrue();
  }
}

package dev.kdelay.service.warmup;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.topology.DelayConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FirePathWarmupTest {

  @TempDir Path stateDir;

  @Test
  void shouldFireEverySyntheticTaskThroughTheTopologyAndLeaveNoStateBehind() throws Exception {
    FirePathWarmup.Result result =
        FirePathWarmup.run(
            // the service's request topic has six partitions by default
            config(DelayConfig.REQUESTS_PARTITIONS_CONFIG, 6), 5_000);

    assertThat(result.fired()).isEqualTo(5_000);
    assertThat(result.rerouted()).as("requests taken in twice, through the reroute topic").isZero();
    assertThat(result.produced())
        .as("records the Kafka producer sent: each task's fired record and changelog records")
        .isGreaterThanOrEqualTo(2 * 5_000);
    System.out.printf(
        "warm-up of 5,000 tasks took %,d ms, produced %,d records%n",
        result.took().toMillis(), result.produced());
    try (Stream<Path> left = Files.list(stateDir)) {
      assertThat(left).as("what the warm-up left in the state directory").isEmpty();
    }
  }

  @Test
  void shouldWarmInTwoPassesTheSecondOfAtLeastOnePunctuationsWorth() throws Exception {
    FirePathWarmup.Warmed warmed =
        FirePathWarmup.warm(config(DelayConfig.MAX_FIRES_PER_PUNCTUATION_CONFIG, 500), 1_000);

    assertThat(warmed.first().fired()).isEqualTo(1_000);
    assertThat(warmed.second().fired())
        .as("a quarter of the first pass, but at least one punctuation's worth")
        .isEqualTo(500);
    assertThat(warmed.fired()).isEqualTo(1_500);
    assertThat(warmed.took()).isGreaterThanOrEqualTo(warmed.waited());
    try (Stream<Path> left = Files.list(stateDir)) {
      assertThat(left).as("what the warm-up left in the state directory").isEmpty();
    }
  }

  /** The service's settings for a warm-up in this test's state directory, with one more. */
  private DelayConfig config(String key, Object value) {
    return new DelayConfig(
        Map.of(
            DelayConfig.APPLICATION_ID_CONFIG,
            "kdelay-service",
            DelayConfig.BOOTSTRAP_SERVERS_CONFIG,
            "unused:9092",
            DelayConfig.STATE_DIR_CONFIG,
            stateDir.toString(),
            key,
            value));
  }
}

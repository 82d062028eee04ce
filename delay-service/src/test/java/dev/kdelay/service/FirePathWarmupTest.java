package dev.kdelay.service;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.topology.DelayConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class FirePathWarmupTest {

  @Test
  void shouldFireEverySyntheticTaskThroughTheTopologyAndLeaveNoStateBehind() throws Exception {
    Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
    long before = warmupDirs(tmp);

    FirePathWarmup.Result result =
        FirePathWarmup.run(
            new DelayConfig(
                Map.of(
                    DelayConfig.APPLICATION_ID_CONFIG, "kdelay-service",
                    DelayConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092")),
            5_000);

    assertThat(result.fired()).isEqualTo(5_000);
    System.out.printf("warm-up of 5,000 tasks took %,d ms%n", result.took().toMillis());
    assertThat(warmupDirs(tmp)).isEqualTo(before);
  }

  private static long warmupDirs(Path tmp) throws Exception {
    try (Stream<Path> entries = Files.list(tmp)) {
      return entries.filter(p -> p.getFileName().toString().startsWith("kdelay-warmup")).count();
    }
  }
}

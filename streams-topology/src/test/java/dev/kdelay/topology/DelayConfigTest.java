package dev.kdelay.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;

class DelayConfigTest {

  private static final String LINGER =
      StreamsConfig.producerPrefix(ProducerConfig.LINGER_MS_CONFIG);

  @Test
  void shouldLingerOnlyUnderExactlyOnceWhereTheCommitFlushesAnyway() {
    assertThat(streams(Map.of()).get(LINGER)).isEqualTo(100);
    assertThat(
            streams(Map.of(DelayConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE))
                .get(LINGER))
        .isEqualTo(0);
  }

  @Test
  void shouldLetAPassThroughPropertyWinOverKdelaysOwn() {
    assertThat(streams(Map.of(LINGER, "7")).get(LINGER)).isEqualTo("7");
  }

  private static Properties streams(Map<String, Object> overrides) {
    Map<String, Object> settings = new HashMap<>();
    settings.put(DelayConfig.APPLICATION_ID_CONFIG, "kdelay-test");
    settings.put(DelayConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
    settings.putAll(overrides);
    return new DelayConfig(settings).streamsProperties();
  }
}

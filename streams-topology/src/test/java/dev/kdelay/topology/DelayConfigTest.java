package dev.kdelay.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;

class DelayConfigTest {

  @Test
  void shouldAcceptARetiredKeyButNotDefineIt() {
    DelayConfig config = new DelayConfig(Map.of("delay.bucket.width.ms", "60000"));

    assertThat(DelayConfig.RETIRED_KEYS).containsKey("delay.bucket.width.ms");
    assertThat(DelayConfig.configDef().names()).doesNotContain("delay.bucket.width.ms");
    assertThat(config.values()).doesNotContainKey("delay.bucket.width.ms");
  }

  @Test
  void shouldRefuseAnUnknownKeyWithoutItsValue() {
    assertThatThrownBy(() -> new DelayConfig(Map.of("delay.bucket.width", "secret-ish")))
        .isInstanceOf(ConfigException.class)
        .hasMessage("delay.bucket.width: unknown kdelay configuration key");
  }
}

package dev.kdelay.service.topics;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.junit.jupiter.api.Test;

class DeadLetterRetentionTest {

  private static final long THIRTY_DAYS_MS = 2_592_000_000L;

  @Test
  void shouldWarnNamingBothValuesWhenTheDeadLetterTopicKeepsLessThanConfigured() {
    Config sevenDays = retention("604800000");

    assertThat(DeadLetterRetention.warning("delay-dlq", sevenDays, THIRTY_DAYS_MS))
        .hasValueSatisfying(
            warning ->
                assertThat(warning)
                    .contains("topic=delay-dlq")
                    .contains("retention.ms=604800000")
                    .contains("delay.dlq.retention.ms=2592000000"));
  }

  @Test
  void shouldNotWarnWhenTheDeadLetterTopicKeepsAtLeastAsLong() {
    assertThat(DeadLetterRetention.warning("d", retention("2592000000"), THIRTY_DAYS_MS)).isEmpty();
    assertThat(DeadLetterRetention.warning("d", retention("-1"), THIRTY_DAYS_MS)).isEmpty();
  }

  @Test
  void shouldCountMinusOneAsForeverWhenComparingRetentions() {
    assertThat(DeadLetterRetention.isShorter(-1, -1)).isFalse();
    assertThat(DeadLetterRetention.isShorter(-1, 5)).isFalse();
    assertThat(DeadLetterRetention.isShorter(5, -1)).isTrue();
    assertThat(DeadLetterRetention.isShorter(4, 5)).isTrue();
    assertThat(DeadLetterRetention.isShorter(5, 5)).isFalse();
  }

  private static Config retention(String value) {
    return new Config(List.of(new ConfigEntry("retention.ms", value)));
  }
}

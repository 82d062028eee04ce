package dev.kdelay.service.limits;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.topology.FireRateLimits.Limit;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

class LimitsTopicTest {

  private final Map<String, Optional<Limit>> overrides = new HashMap<>();

  @Test
  void shouldSetLiftAndClearATopicsLimitWhenReadingItsRecords() {
    assertThat(apply("orders", "250/500")).isTrue();
    assertThat(overrides).containsEntry("orders", Optional.of(new Limit(250, 500)));

    assertThat(apply("orders", "250/500")).as("the same limit again").isFalse();
    assertThat(apply("orders", " None ")).isTrue();
    assertThat(overrides).containsEntry("orders", Optional.empty());

    assertThat(apply("orders", null)).as("a tombstone").isTrue();
    assertThat(overrides).isEmpty();
    assertThat(apply("orders", null)).as("nothing left to clear").isFalse();
  }

  @Test
  void shouldChangeNothingWhenARecordCannotBeRead() {
    apply("orders", "250");

    assertThat(LimitsTopic.read(record(null, "10")))
        .isInstanceOfSatisfying(
            LimitsTopic.Unreadable.class,
            unreadable -> assertThat(unreadable.problem()).startsWith("no key"));
    assertThat(LimitsTopic.read(record("orders", "fast")))
        .isInstanceOfSatisfying(
            LimitsTopic.Unreadable.class,
            unreadable -> {
              assertThat(unreadable.target()).isEqualTo("orders");
              assertThat(unreadable.value()).isEqualTo("fast");
            });
    assertThat(apply("orders", "fast")).isFalse();
    assertThat(overrides).containsEntry("orders", Optional.of(new Limit(250, 250)));
  }

  private boolean apply(String target, String value) {
    return LimitsTopic.read(record(target, value)).applyTo(overrides);
  }

  private static ConsumerRecord<byte[], byte[]> record(String key, String value) {
    return new ConsumerRecord<>(
        "delay-requests-limits",
        0,
        0L,
        key == null ? null : key.getBytes(UTF_8),
        value == null ? null : value.getBytes(UTF_8));
  }
}

package dev.kdelay.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.Optional;
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

  @Test
  void shouldReadFireRateLimitsWithAndWithoutABurst() {
    DelayConfig config =
        new DelayConfig(
            Map.of(
                DelayConfig.FIRE_RATE_LIMITS_CONFIG, " orders.reminders=1000 , billing_x=2.5/10"));

    assertThat(config.fireRateLimits().of("orders.reminders"))
        .hasValue(new FireRateLimits.Limit(1000, 1000));
    assertThat(config.fireRateLimits().of("billing_x")).hasValue(new FireRateLimits.Limit(2.5, 10));
    assertThat(config.fireRateLimits().of("other")).isEmpty();
    assertThat(new DelayConfig(Map.of()).fireRateLimits().isEmpty()).isTrue();
    // a burst below the partition count still lets each partition fire one at a time
    assertThat(new FireRateLimits.Limit(2.5, 10).share(12))
        .isEqualTo(new FireRateLimits.Limit(2.5 / 12, 1));
    // a rate below one a second has a burst of one
    assertThat(FireRateLimits.parse("t=0.25").of("t")).hasValue(new FireRateLimits.Limit(0.25, 1));
    // a tenant's limit, over all its fires
    assertThat(FireRateLimits.parse("tenant:billing=50/100").of(FireRateLimits.tenant("billing")))
        .hasValue(new FireRateLimits.Limit(50, 100));
  }

  @Test
  void shouldRefuseAFireRateLimitItCannotRead() {
    for (String bad :
        new String[] {
          "orders",
          "orders=",
          "=5",
          "orders=0",
          "orders=-1",
          "orders=NaN",
          "orders=Infinity",
          "orders=0.0000001",
          "orders=1e10",
          "orders=fast",
          "orders=5/0",
          "orders=5/x",
          "or ders=5",
          "orders=5,orders=6",
          "orders=5,",
          "tenant:=5",
          "tenant:Billing=5",
          "tenant:billing:x=5"
        }) {
      assertThatThrownBy(
              () -> new DelayConfig(Map.of(DelayConfig.FIRE_RATE_LIMITS_CONFIG, bad)), bad)
          .isInstanceOf(ConfigException.class)
          .hasMessageContaining(DelayConfig.FIRE_RATE_LIMITS_CONFIG)
          .hasMessageContaining("cannot be read as a limit");
    }
  }

  @Test
  void shouldOverlayLimitsSetAtRunTimeTopicByTopic() {
    FireRateLimits configured = FireRateLimits.parse("a=10,b=20/5");

    FireRateLimits effective =
        configured.overriddenBy(
            Map.of(
                "b", Optional.of(new FireRateLimits.Limit(1, 1)),
                "a", Optional.empty(),
                "c", Optional.of(new FireRateLimits.Limit(3.5, 7))));

    assertThat(effective.of("a")).isEmpty();
    assertThat(effective.of("b")).hasValue(new FireRateLimits.Limit(1, 1));
    assertThat(effective.of("c")).hasValue(new FireRateLimits.Limit(3.5, 7));
    assertThat(configured.overriddenBy(Map.of())).isSameAs(configured);
    // a limit reads back as it prints
    for (String spec : new String[] {"1000/1000", "2.5/10", "0.25/1"}) {
      assertThat(FireRateLimits.Limit.parse(spec)).hasToString(spec);
    }
  }
}

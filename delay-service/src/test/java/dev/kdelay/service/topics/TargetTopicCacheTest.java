package dev.kdelay.service.topics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.service.SettableClock;
import dev.kdelay.topology.TargetTopic;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TargetTopicCacheTest {

  private final SettableClock clock = new SettableClock();
  private final TargetTopicCache cache = new TargetTopicCache(2, Duration.ofSeconds(5), clock);

  @Test
  void shouldForgetTheLeastRecentlyUsedTopicWhenFull() {
    // given
    cache.remember("a", TargetTopic.present(1));
    cache.remember("b", TargetTopic.present(1));
    cache.get("a");

    // when
    cache.remember("c", TargetTopic.present(1));

    // then
    assertThat(cache.topics()).containsExactlyInAnyOrder("a", "c");
  }

  @Test
  void shouldNotCountARefreshAsAUseWhenEvicting() {
    // given
    cache.remember("a", TargetTopic.present(1));
    cache.remember("b", TargetTopic.present(1));

    // when: a refresh touches the eldest
    cache.refreshed(Map.of("a", TargetTopic.present(2)));
    cache.remember("c", TargetTopic.present(1));

    // then: it is still the eldest
    assertThat(cache.topics()).containsExactlyInAnyOrder("b", "c");
  }

  @Test
  void shouldExpireAnAbsenceWhenTheRetentionHasPassed() {
    cache.remember("gone", TargetTopic.ABSENT);
    cache.remember("here", TargetTopic.present(3));

    clock.advance(Duration.ofMillis(4_999));
    assertThat(cache.get("gone").orElseThrow().expired()).isFalse();

    clock.advance(Duration.ofMillis(1));
    assertThat(cache.get("gone").orElseThrow())
        .isEqualTo(new TargetTopicCache.Entry(TargetTopic.ABSENT, true));
    assertThat(cache.get("here").orElseThrow().expired()).isFalse();
  }

  @Test
  void shouldRestartTheRetentionWhenARefreshFindsTheTopicStillAbsent() {
    cache.remember("gone", TargetTopic.ABSENT);
    clock.advance(Duration.ofSeconds(4));

    cache.refreshed(Map.of("gone", TargetTopic.ABSENT));
    clock.advance(Duration.ofSeconds(4));

    assertThat(cache.get("gone").orElseThrow().expired()).isFalse();
  }

  @Test
  void shouldReportOnlyChangedTopicsWhenRefreshed() {
    cache.remember("same", TargetTopic.present(3));
    cache.remember("grown", TargetTopic.present(3));

    var changes =
        cache.refreshed(
            Map.of(
                "same", TargetTopic.present(3),
                "grown", TargetTopic.present(6),
                "unknown-here", TargetTopic.present(1)));

    assertThat(changes)
        .containsExactly(
            new TargetTopicCache.Change("grown", TargetTopic.present(3), TargetTopic.present(6)));
    assertThat(cache.topics()).containsExactlyInAnyOrder("same", "grown");
  }

  @Test
  void shouldListOnlyExistingTopicsAsPresent() {
    cache.remember("gone", TargetTopic.ABSENT);
    cache.remember("here", TargetTopic.present(3));

    assertThat(cache.present()).containsExactly("here");
  }
}

package dev.kdelay.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.service.ServiceMetrics;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The fire rate and lateness percentiles the console charts, from real meters. */
class FireHistoryTest {

  private final MutableClock clock = new MutableClock();
  private final ServiceMetrics metrics = new ServiceMetrics(clock, () -> 0);
  private final FireHistory history = new FireHistory(metrics::fireCounts, clock);

  @Test
  void shouldReportTheRateAndTheLatenessBucketsOfEachInterval() {
    // given: 100 fires in the first five seconds, 98 of them 3 ms late and 2 of them 40 ms
    history.sample();
    for (int i = 0; i < 98; i++) {
      metrics.taskFired(3);
    }
    metrics.taskFired(40);
    metrics.taskFired(40);
    // and 10 deferred by a fire-rate limit
    for (int i = 0; i < 10; i++) {
      metrics.fireDeferred(200);
    }
    clock.advance(5_000);
    history.sample();
    // and no fire in the next five
    clock.advance(5_000);
    history.sample();

    List<Map<String, Object>> points = history.points();

    assertThat(points).hasSize(2);
    assertThat(points.get(0))
        .containsEntry("firesPerSecond", 20.0)
        .containsEntry("deferredPerSecond", 2.0)
        .containsEntry("latenessP50Ms", 3.0)
        .containsEntry("latenessP99Ms", 50.0);
    assertThat(points.get(1))
        .containsEntry("firesPerSecond", 0.0)
        .containsEntry("deferredPerSecond", 0.0);
    assertThat(points.get(1).get("latenessP50Ms")).isNull();
  }

  @Test
  void shouldKeepOnlyTheLastMinutes() {
    for (int i = 0; i < FireHistory.POINTS + 10; i++) {
      history.sample();
      clock.advance(FireHistory.INTERVAL.toMillis());
    }

    assertThat(history.points()).hasSize(FireHistory.POINTS);
  }

  /** A clock tests move. */
  private static final class MutableClock extends Clock {
    private long millis = 1_700_000_000_000L;

    void advance(long by) {
      millis += by;
    }

    @Override
    public long millis() {
      return millis;
    }

    @Override
    public Instant instant() {
      return Instant.ofEpochMilli(millis);
    }

    @Override
    public ZoneOffset getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(java.time.ZoneId zone) {
      return this;
    }
  }
}

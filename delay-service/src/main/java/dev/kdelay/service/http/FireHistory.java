package dev.kdelay.service.http;

import static java.util.Objects.requireNonNull;

import dev.kdelay.service.ServiceMetrics.FireCounts;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.common.utils.ThreadUtils;

/**
 * The last minutes of this instance's fire rate and lateness, for the console's charts: the fire
 * counter, the lateness histogram and the count of fires deferred by fire-rate limits are sampled
 * every {@link #INTERVAL}, and each interval between two samples becomes a point.
 *
 * <p>Percentiles are read from the histogram's buckets, so a point's p50 and p99 are the upper
 * bound of the bucket the percentile falls in (1, 2, 3, 5, 7, 10, 15, 20, 30, 50 ms and coarser
 * beyond): what Prometheus' {@code histogram_quantile} would say, without its interpolation.
 *
 * <p>Thread-safe: sampled on a thread of its own, read by HTTP threads.
 */
public final class FireHistory implements AutoCloseable {

  static final Duration INTERVAL = Duration.ofSeconds(5);

  /** Six minutes of points. */
  static final int POINTS = 72;

  private final Supplier<FireCounts> counts;
  private final Clock clock;
  private final Deque<Sample> samples = new ArrayDeque<>();
  private ScheduledExecutorService sampler;

  private record Sample(long atMs, FireCounts counts) {}

  /**
   * A history, empty until {@link #start()}ed or {@link #sample()}d.
   *
   * @param counts reads the cumulative fire counts
   * @param clock the clock samples are stamped with
   */
  public FireHistory(Supplier<FireCounts> counts, Clock clock) {
    this.counts = requireNonNull(counts, "counts cannot be null");
    this.clock = requireNonNull(clock, "clock cannot be null");
  }

  /** Samples now and then every {@link #INTERVAL} on a daemon thread, until closed. */
  public synchronized void start() {
    if (sampler != null) {
      return;
    }
    sampler =
        Executors.newSingleThreadScheduledExecutor(
            ThreadUtils.createThreadFactory("kdelay-fire-history", true));
    sampler.scheduleAtFixedRate(this::sample, 0, INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** Takes one sample; the oldest goes once there are more than {@link #POINTS} intervals. */
  synchronized void sample() {
    samples.addLast(new Sample(clock.millis(), counts.get()));
    while (samples.size() > POINTS + 1) {
      samples.removeFirst();
    }
  }

  /**
   * The points, oldest first: {@code {"at", "atMs", "firesPerSecond", "deferredPerSecond",
   * "latenessP50Ms", "latenessP99Ms"}}, the percentiles null for an interval without fires; {@code
   * deferredPerSecond} counts the tasks fire-rate limits deferred to a later slot.
   */
  synchronized List<Map<String, Object>> points() {
    List<Map<String, Object>> points = new ArrayList<>();
    Sample previous = null;
    for (Sample sample : samples) {
      if (previous != null) {
        points.add(point(previous, sample));
      }
      previous = sample;
    }
    return points;
  }

  private static Map<String, Object> point(Sample from, Sample to) {
    double seconds = Math.max(1, to.atMs() - from.atMs()) / 1000.0;
    long fired = to.counts().fired() - from.counts().fired();
    Map<String, Object> point = new LinkedHashMap<>();
    point.put("at", Instant.ofEpochMilli(to.atMs()).toString());
    point.put("atMs", to.atMs());
    long deferred = to.counts().deferred() - from.counts().deferred();
    point.put("firesPerSecond", Math.round(fired / seconds * 100) / 100.0);
    point.put("deferredPerSecond", Math.round(deferred / seconds * 100) / 100.0);
    point.put("latenessP50Ms", percentile(from.counts(), to.counts(), 0.50));
    point.put("latenessP99Ms", percentile(from.counts(), to.counts(), 0.99));
    return point;
  }

  /** The bound of the bucket the percentile of the interval's fires falls in; null if none. */
  static Double percentile(FireCounts from, FireCounts to, double quantile) {
    double[] bounds = to.boundsMs();
    if (bounds.length == 0 || from.counts().length != bounds.length) {
      return null;
    }
    double total = to.fired() - from.fired();
    if (total <= 0) {
      return null;
    }
    for (int i = 0; i < bounds.length; i++) {
      if (to.counts()[i] - from.counts()[i] >= quantile * total) {
        return bounds[i];
      }
    }
    // Later than the largest bucket: say at least that.
    return bounds[bounds.length - 1];
  }

  @Override
  public synchronized void close() {
    if (sampler != null) {
      sampler.shutdownNow();
    }
  }
}

package dev.kdelay.service.topics;

import dev.kdelay.schemas.LogValues;
import dev.kdelay.topology.DelayConfig;
import dev.kdelay.topology.TargetTopic;
import dev.kdelay.topology.TargetTopics;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.utils.ThreadUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Target-topic metadata from an Admin client, cached ({@link TargetTopicCache}).
 *
 * <p>A topic never seen is read in the background; {@link #lookUp} (the admin API) waits for it at
 * most the look-up timeout, {@link #known} (intake) and {@link #cached} (fire path) never wait. At
 * most one read per topic is in flight. Every refresh interval, one batched read ({@link
 * TopicLimitsReader}) re-checks every known topic, so a deleted topic or a changed limit is noticed
 * within one interval, and logged. Every topic found to exist is handed to the {@link
 * TopicMetadataWarmer}, so that the producers have its metadata before its first fire.
 *
 * <p>A topic first read as absent is read once more, {@link #ABSENCE_CONFIRMATION} later, before
 * the absence is believed: for tens of milliseconds after a topic is created, a broker that has not
 * applied the controller's record yet answers that it does not exist (on a three-broker cluster, 48
 * of 100 describes made right after the creation), and a schedule to it would be dead-lettered
 * {@code UNKNOWN_TOPIC}. Until the second answer the topic is being looked up: intake keeps its
 * requests aside, as for any topic not known yet.
 */
public final class AdminTargetTopics implements TargetTopics, AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(AdminTargetTopics.class);

  /** Reads what the cluster says of topics ({@link TopicLimitsReader} in the service). */
  @FunctionalInterface
  interface Reader {
    /**
     * Reads topics, in one batch.
     *
     * @return one description per topic, {@link TargetTopic#UNKNOWN} where the cluster did not tell
     */
    CompletableFuture<Map<String, TargetTopic>> read(Collection<String> topics);
  }

  /**
   * How long after a topic's first "absent" it is read again before the absence is believed: past
   * the brokers' lag behind the controller (up to about 140 ms seen on a loaded two-core machine),
   * and with both reads well within the default look-up timeout (500 ms), so that a request to a
   * missing topic is still dead-lettered at intake, not taken unchecked.
   */
  static final Duration ABSENCE_CONFIRMATION = Duration.ofMillis(200);

  private final Reader reader;
  private final TargetTopicCache cache;
  private final Duration lookupTimeout;
  private final Duration refreshInterval;
  private final TopicMetadataWarmer warmer;
  private final Executor confirmations;
  private final Map<String, CompletableFuture<TargetTopic>> inFlight = new ConcurrentHashMap<>();
  private final ScheduledExecutorService refresher;

  /**
   * @param reader reads topics from the cluster
   * @param cache what is known
   * @param lookupTimeout how long {@link #lookUp} waits for a topic not known yet
   * @param refreshInterval how often every known topic is read again
   * @param warmer told of every topic found to exist, and of all of them at each refresh
   */
  AdminTargetTopics(
      Reader reader,
      TargetTopicCache cache,
      Duration lookupTimeout,
      Duration refreshInterval,
      TopicMetadataWarmer warmer) {
    this(reader, cache, lookupTimeout, refreshInterval, warmer, ABSENCE_CONFIRMATION);
  }

  /**
   * As above, with the wait before a first absence is read again ({@link #ABSENCE_CONFIRMATION}).
   */
  AdminTargetTopics(
      Reader reader,
      TargetTopicCache cache,
      Duration lookupTimeout,
      Duration refreshInterval,
      TopicMetadataWarmer warmer,
      Duration absenceConfirmation) {
    this.reader = reader;
    this.confirmations =
        CompletableFuture.delayedExecutor(absenceConfirmation.toMillis(), TimeUnit.MILLISECONDS);
    this.cache = cache;
    this.lookupTimeout = lookupTimeout;
    this.refreshInterval = refreshInterval;
    this.warmer = warmer;
    this.refresher =
        Executors.newSingleThreadScheduledExecutor(
            ThreadUtils.createThreadFactory("kdelay-target-topics", true));
    long period = refreshInterval.toMillis();
    refresher.scheduleWithFixedDelay(this::refresh, period, period, TimeUnit.MILLISECONDS);
  }

  /** The service's instance, configured from {@code delay.target.topics.*}. */
  public static AdminTargetTopics create(
      Admin admin, DelayConfig config, TopicMetadataWarmer warmer) {
    // A read gives up by the time the next refresh would ask again anyway.
    Duration readTimeout = max(config.targetTopicsRefresh(), config.targetTopicsLookupTimeout());
    return new AdminTargetTopics(
        new TopicLimitsReader(admin, readTimeout)::read,
        new TargetTopicCache(
            config.targetTopicsMax(), config.targetTopicsAbsentRetention(), Clock.systemUTC()),
        config.targetTopicsLookupTimeout(),
        config.targetTopicsRefresh(),
        warmer);
  }

  /**
   * An instance that asks no cluster: every topic exists, with the given partitions. It is the
   * service's kind all the same, for a run that should take the service's path without a cluster
   * (the fire path's warm-up); it keeps a few topics and warms nothing.
   */
  public static AdminTargetTopics everyTopicPresent(int partitions) {
    return new AdminTargetTopics(
        topics ->
            CompletableFuture.completedFuture(
                topics.stream()
                    .collect(
                        Collectors.toMap(
                            topic -> topic, topic -> TargetTopic.present(partitions)))),
        new TargetTopicCache(16, Duration.ofMinutes(1), Clock.systemUTC()),
        Duration.ofSeconds(1),
        Duration.ofHours(1),
        TopicMetadataWarmer.NONE);
  }

  @Override
  public TargetTopic lookUp(String topic) {
    Optional<TargetTopicCache.Entry> known = cache.get(topic);
    if (known.isPresent() && !known.get().expired()) {
      return known.get().topic();
    }
    try {
      return read(topic).get(lookupTimeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      // The read goes on and fills the cache; the request is taken without the check.
      log.info(
          "event=target-topic-lookup-slow topic={} waited_ms={}",
          LogValues.quote(topic),
          lookupTimeout.toMillis());
      return TargetTopic.UNKNOWN;
    } catch (ExecutionException e) {
      return TargetTopic.UNKNOWN;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return TargetTopic.UNKNOWN;
    }
  }

  @Override
  public Optional<TargetTopic> known(String topic) {
    Optional<TargetTopicCache.Entry> known = cache.get(topic);
    if (known.isPresent() && !known.get().expired()) {
      return Optional.of(known.get().topic());
    }
    CompletableFuture<TargetTopic> reading = read(topic);
    // A read that completed between the two looks answers now; an unanswered one says UNKNOWN.
    return reading.isDone() ? Optional.of(reading.getNow(TargetTopic.UNKNOWN)) : Optional.empty();
  }

  @Override
  public TargetTopic cached(String topic) {
    Optional<TargetTopicCache.Entry> known = cache.get(topic);
    if (known.isEmpty() || known.get().expired()) {
      read(topic);
    }
    // An expired absence still answers: a topic deleted under its tasks stays deleted until a
    // read says otherwise.
    return known.map(TargetTopicCache.Entry::topic).orElse(TargetTopic.UNKNOWN);
  }

  /** Reads a topic in the background, unless a read of it is in flight already: joins that one. */
  private CompletableFuture<TargetTopic> read(String topic) {
    CompletableFuture<TargetTopic> started = new CompletableFuture<>();
    CompletableFuture<TargetTopic> running = inFlight.putIfAbsent(topic, started);
    if (running != null) {
      return running;
    }
    readOnce(topic)
        .thenCompose(
            described ->
                described.status() == TargetTopic.Status.ABSENT && !knownAbsent(topic)
                    ? CompletableFuture.supplyAsync(() -> topic, confirmations)
                        .thenCompose(this::readOnce)
                    : CompletableFuture.completedFuture(described))
        .whenComplete(
            (described, error) -> {
              TargetTopic answer = error == null ? described : TargetTopic.UNKNOWN;
              learn(topic, answer);
              // Removed only after the cache holds the answer: a caller in between finds one.
              inFlight.remove(topic, started);
              started.complete(answer);
            });
    return started;
  }

  /** One read of one topic: what the cluster said, UNKNOWN if the read failed. */
  private CompletableFuture<TargetTopic> readOnce(String topic) {
    CompletableFuture<Map<String, TargetTopic>> reading;
    try {
      reading = reader.read(List.of(topic));
    } catch (RuntimeException e) {
      reading = CompletableFuture.failedFuture(e); // a closed Admin client, say
    }
    return reading.handle((found, error) -> error == null ? found.get(topic) : TargetTopic.UNKNOWN);
  }

  /** Whether the cache already holds an absence for the topic, however old: no need to confirm. */
  private boolean knownAbsent(String topic) {
    return cache
        .get(topic)
        .map(entry -> entry.topic().status() == TargetTopic.Status.ABSENT)
        .orElse(false);
  }

  private void learn(String topic, TargetTopic described) {
    if (described.equals(TargetTopic.UNKNOWN)) {
      return; // the cluster did not answer: ask again next time
    }
    cache.remember(topic, described);
    if (described.status() == TargetTopic.Status.PRESENT) {
      warmer.warm(List.of(topic));
    }
  }

  /** Re-reads every known topic in one batch; runs on the refresher thread only. */
  void refresh() {
    try {
      List<String> topics = cache.topics();
      if (topics.isEmpty()) {
        return;
      }
      Map<String, TargetTopic> found =
          reader
              .read(topics)
              .get(refreshInterval.toMillis() + lookupTimeout.toMillis(), TimeUnit.MILLISECONDS)
              .entrySet()
              .stream()
              .filter(entry -> !entry.getValue().equals(TargetTopic.UNKNOWN))
              .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
      for (TargetTopicCache.Change change : cache.refreshed(found)) {
        log.info(
            "event=target-topic-changed topic={} status={} partitions={} max_message_bytes={}"
                + " writable={} max_timestamp_age_ms={} was={}",
            LogValues.quote(change.topic()),
            change.now().status(),
            change.now().partitions(),
            change.now().maxMessageBytes(),
            change.now().writable(),
            change.now().maxTimestampAgeMs(),
            LogValues.quote(change.was().toString()));
      }
      warmer.warm(cache.present());
    } catch (TimeoutException | ExecutionException e) {
      log.warn("event=target-topics-refresh-failed error={}", LogValues.quote(e));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      // A scheduled task that throws is never run again: keep refreshing.
      log.warn("event=target-topics-refresh-failed error={}", LogValues.quote(e));
    }
  }

  private static Duration max(Duration a, Duration b) {
    return a.compareTo(b) >= 0 ? a : b;
  }

  @Override
  public void close() {
    refresher.shutdownNow();
  }
}

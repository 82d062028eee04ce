package dev.kdelay.service;

import dev.kdelay.topology.LogValues;
import dev.kdelay.topology.TargetTopic;
import dev.kdelay.topology.TargetTopics;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Target-topic metadata from an Admin client, cached. A stream thread blocks only on the first
 * look-up of a topic (bounded by a short timeout); afterwards a background refresh keeps every
 * known topic current, so a deleted topic is noticed within one refresh interval and a created one
 * as soon as a request names it again after the negative entry expires.
 */
final class AdminTargetTopics implements TargetTopics, AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(AdminTargetTopics.class);

  private static final int ABSENT = 0;
  private static final int UNKNOWN = -1;

  private final Admin admin;
  private final Duration lookupTimeout;
  private final Duration absentRetention;
  private final Map<String, Entry> topics = new ConcurrentHashMap<>();
  private final ScheduledExecutorService refresher;

  private record Entry(int partitions, long checkedAtMs) {}

  AdminTargetTopics(Admin admin, Duration refreshInterval) {
    this(admin, refreshInterval, Duration.ofSeconds(2), Duration.ofSeconds(5));
  }

  AdminTargetTopics(
      Admin admin, Duration refreshInterval, Duration lookupTimeout, Duration absentRetention) {
    this.admin = admin;
    this.lookupTimeout = lookupTimeout;
    this.absentRetention = absentRetention;
    this.refresher =
        Executors.newSingleThreadScheduledExecutor(
            runnable -> {
              Thread thread = new Thread(runnable, "kdelay-target-topics");
              thread.setDaemon(true);
              return thread;
            });
    long period = refreshInterval.toMillis();
    refresher.scheduleWithFixedDelay(this::refresh, period, period, TimeUnit.MILLISECONDS);
  }

  @Override
  public TargetTopic lookUp(String topic) {
    return describe(partitions(topic));
  }

  @Override
  public TargetTopic cached(String topic) {
    Entry known = topics.get(topic);
    if (known == null) {
      refresher.execute(() -> partitions(topic));
      return TargetTopic.UNKNOWN;
    }
    return describe(known.partitions());
  }

  private static TargetTopic describe(int partitions) {
    return switch (partitions) {
      case ABSENT -> TargetTopic.ABSENT;
      case UNKNOWN -> TargetTopic.UNKNOWN;
      default -> TargetTopic.present(partitions);
    };
  }

  private int partitions(String topic) {
    Entry known = topics.get(topic);
    long now = System.currentTimeMillis();
    if (known != null
        && (known.partitions() != ABSENT
            || now - known.checkedAtMs() < absentRetention.toMillis())) {
      return known.partitions();
    }
    int partitions = fetch(topic);
    if (partitions != UNKNOWN) {
      topics.put(topic, new Entry(partitions, now));
    }
    return partitions;
  }

  private int fetch(String topic) {
    KafkaFuture<TopicDescription> description =
        admin
            .describeTopics(
                List.of(topic),
                new DescribeTopicsOptions().timeoutMs((int) lookupTimeout.toMillis()))
            .topicNameValues()
            .get(topic);
    try {
      return description.get(lookupTimeout.toMillis(), TimeUnit.MILLISECONDS).partitions().size();
    } catch (ExecutionException e) {
      if (e.getCause() instanceof UnknownTopicOrPartitionException) {
        return ABSENT;
      }
      log.warn(
          "event=target-topic-lookup-failed topic={} error={}",
          LogValues.quote(topic),
          LogValues.quote(e.getCause()));
      return UNKNOWN;
    } catch (TimeoutException e) {
      log.warn("event=target-topic-lookup-timeout topic={}", LogValues.quote(topic));
      return UNKNOWN;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return UNKNOWN;
    }
  }

  /** Re-checks every known topic, so deletions and partition changes are noticed. */
  private void refresh() {
    for (String topic : List.copyOf(topics.keySet())) {
      int partitions = fetch(topic);
      if (partitions != UNKNOWN) {
        Entry previous = topics.put(topic, new Entry(partitions, System.currentTimeMillis()));
        if (previous != null && previous.partitions() != partitions) {
          log.info(
              "event=target-topic-changed topic={} partitions={} was={}",
              topic,
              partitions,
              previous.partitions());
        }
      }
    }
  }

  @Override
  public void close() {
    refresher.shutdownNow();
  }
}

package dev.kdelay.service.topics;

import dev.kdelay.topology.TargetTopic;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The target topics kdelay knows, at most a fixed number: the least recently used is forgotten
 * first. That a topic is absent counts only for a short time, after which the entry is {@link
 * Entry#expired() expired}, so that a topic created later is seen by the next request naming it.
 *
 * <p>Thread-safe; every method holds one lock for a map operation or a copy, never for I/O, so a
 * stream thread asking on the fire path waits at most for another thread's map operation.
 */
final class TargetTopicCache {

  private record Known(TargetTopic topic, long checkedAtMs) {}

  /** A change the refresh found, for the log. */
  record Change(String topic, TargetTopic was, TargetTopic now) {}

  private final long absentRetentionMs;
  private final Clock clock;
  private final Map<String, Known> topics;

  /**
   * @param maxTopics the most topics kept
   * @param absentRetention how long a topic found absent stays known as such
   * @param clock the time absent entries expire by
   */
  TargetTopicCache(int maxTopics, Duration absentRetention, Clock clock) {
    this.absentRetentionMs = absentRetention.toMillis();
    this.clock = clock;
    // Access order: a get or a put moves a topic to the young end; the eldest goes past the limit.
    this.topics =
        new LinkedHashMap<>(16, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<String, Known> eldest) {
            return size() > maxTopics;
          }
        };
  }

  /**
   * What is known of a topic, and whether it is due for a new look: an absence older than the
   * retention is. The answer stays until that look replaces it, so that the fire path still has one
   * meanwhile.
   *
   * @param topic the description
   * @param expired whether the topic should be read again before a request relies on it
   */
  record Entry(TargetTopic topic, boolean expired) {}

  /** What is known of a topic; empty if nothing is. */
  synchronized Optional<Entry> get(String topic) {
    Known known = topics.get(topic);
    if (known == null) {
      return Optional.empty();
    }
    boolean expired =
        known.topic().status() == TargetTopic.Status.ABSENT
            && clock.millis() - known.checkedAtMs() >= absentRetentionMs;
    return Optional.of(new Entry(known.topic(), expired));
  }

  /** Remembers what a look-up found; it counts as a use of the topic. */
  synchronized void remember(String topic, TargetTopic description) {
    topics.put(topic, new Known(description, clock.millis()));
  }

  /**
   * Takes in what a refresh found for topics already known, without counting it as a use: a topic
   * no request or task asks about still ages towards eviction. Topics evicted since the refresh
   * began stay forgotten.
   *
   * @return the topics whose description changed
   */
  synchronized List<Change> refreshed(Map<String, TargetTopic> found) {
    long now = clock.millis();
    List<Change> changes = new ArrayList<>();
    // Entry.setValue does not reorder an access-ordered map; get or put would.
    for (Map.Entry<String, Known> entry : topics.entrySet()) {
      TargetTopic fresh = found.get(entry.getKey());
      if (fresh != null) {
        TargetTopic was = entry.getValue().topic();
        entry.setValue(new Known(fresh, now));
        if (!was.equals(fresh)) {
          changes.add(new Change(entry.getKey(), was, fresh));
        }
      }
    }
    return changes;
  }

  /** Every known topic, for the refresh. */
  synchronized List<String> topics() {
    return List.copyOf(topics.keySet());
  }

  /** The known topics that exist. */
  synchronized List<String> present() {
    List<String> present = new ArrayList<>();
    topics.forEach(
        (topic, known) -> {
          if (known.topic().status() == TargetTopic.Status.PRESENT) {
            present.add(topic);
          }
        });
    return present;
  }
}

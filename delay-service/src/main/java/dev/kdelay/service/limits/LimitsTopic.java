package dev.kdelay.service.limits;

import dev.kdelay.topology.FireRateLimits.Limit;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * The limits topic's records, read the same way by the instances that follow it ({@link
 * FireRateLimitsFeed}) and by {@code kdelay limits}.
 *
 * <p>The topic is compacted and keyed by target topic. A record's value is {@code rate} or {@code
 * rate/burst} (as in {@code delay.fire.rate.limits}), or {@value #NONE} to lift the topic's limit;
 * a tombstone removes the override, and the topic's configured limit, if any, applies again.
 */
public final class LimitsTopic {

  /** A record value that lifts a topic's limit. */
  public static final String NONE = "none";

  private LimitsTopic() {}

  /** What one record of the topic says. */
  public sealed interface Change {

    /** Applies this change to the overrides read so far; whether they changed. */
    boolean applyTo(Map<String, Optional<Limit>> overrides);
  }

  /**
   * A target topic's limit set: a rate, or none.
   *
   * @param target the target topic
   * @param limit its limit, empty to lift it
   */
  public record SetTo(String target, Optional<Limit> limit) implements Change {
    @Override
    public boolean applyTo(Map<String, Optional<Limit>> overrides) {
      return !limit.equals(overrides.put(target, limit));
    }
  }

  /**
   * A target topic's override removed: its configured limit applies again.
   *
   * @param target the target topic
   */
  public record Cleared(String target) implements Change {
    @Override
    public boolean applyTo(Map<String, Optional<Limit>> overrides) {
      return overrides.remove(target) != null;
    }
  }

  /**
   * A record that cannot be read, which changes nothing.
   *
   * @param target the target topic, null if the record has no key
   * @param value the record's value, null if it has none
   * @param problem why it cannot be read
   */
  public record Unreadable(String target, String value, String problem) implements Change {
    @Override
    public boolean applyTo(Map<String, Optional<Limit>> overrides) {
      return false;
    }
  }

  /**
   * Reads a record value.
   *
   * @return the limit, or empty for {@value #NONE}
   * @throws IllegalArgumentException if it is neither
   */
  public static Optional<Limit> readValue(String value) {
    return value.strip().equalsIgnoreCase(NONE)
        ? Optional.empty()
        : Optional.of(Limit.parse(value));
  }

  /** What a record of the topic says. */
  public static Change read(ConsumerRecord<byte[], byte[]> record) {
    if (record.key() == null) {
      return new Unreadable(null, null, "no key: a record's key names the target topic it limits");
    }
    String target = new String(record.key(), StandardCharsets.UTF_8);
    if (record.value() == null) {
      return new Cleared(target);
    }
    String value = new String(record.value(), StandardCharsets.UTF_8);
    try {
      return new SetTo(target, readValue(value));
    } catch (IllegalArgumentException e) {
      return new Unreadable(target, value, Objects.toString(e.getMessage()));
    }
  }

  /**
   * Assigns every partition of the topic to the consumer, each at its beginning.
   *
   * @return the partitions, none if the topic does not exist
   */
  public static List<TopicPartition> fromBeginning(
      Consumer<?, ?> consumer, String topic, Duration timeout) {
    List<PartitionInfo> infos = consumer.partitionsFor(topic, timeout);
    if (infos == null || infos.isEmpty()) {
      return List.of();
    }
    List<TopicPartition> partitions =
        infos.stream().map(info -> new TopicPartition(topic, info.partition())).toList();
    consumer.assign(partitions);
    consumer.seekToBeginning(partitions);
    return partitions;
  }
}

package dev.kdelay.schemas;

import java.util.Arrays;
import java.util.Objects;
import java.util.OptionalInt;

/**
 * Where and how a fired record is written.
 *
 * @param topic the target topic
 * @param key the key of the fired record, or null to use the schedule id
 * @param partition the partition of the fired record, or empty for Kafka's default partitioner
 */
public record Target(String topic, byte[] key, OptionalInt partition) {

  /**
   * Creates a target.
   *
   * @throws NullPointerException if topic or partition is null
   */
  public Target {
    Objects.requireNonNull(topic, "topic cannot be null");
    Objects.requireNonNull(partition, "partition cannot be null (use OptionalInt.empty())");
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Target other
        && topic.equals(other.topic)
        && Arrays.equals(key, other.key)
        && partition.equals(other.partition);
  }

  @Override
  public int hashCode() {
    return Objects.hash(topic, Arrays.hashCode(key), partition);
  }

  @Override
  public String toString() {
    return "Target[topic=" + topic + ", partition=" + partition + "]";
  }
}

package dev.kdelay.schemas;

import static java.util.Objects.requireNonNull;

import org.apache.kafka.common.internals.Topic;

/**
 * The topic names the wire contract accepts: exactly those Kafka accepts, 1..249 characters of
 * {@code [a-zA-Z0-9._-]}, neither {@code "."} nor {@code ".."}. Decided by kafka-clients' own
 * {@link Topic} check, so the contract cannot drift from the broker's rule.
 */
public final class TopicNames {

  private TopicNames() {}

  /**
   * Whether a name is a legal Kafka topic name.
   *
   * @param name the name
   * @return whether Kafka accepts it
   * @throws NullPointerException if name is null
   */
  public static boolean isLegal(String name) {
    return Topic.isValid(requireNonNull(name, "name cannot be null"));
  }

  /**
   * Checks a topic name given as an argument.
   *
   * @param topic the name
   * @param what what the topic is, for the message
   * @return the name
   * @throws NullPointerException if topic is null
   * @throws IllegalArgumentException if Kafka does not accept the name
   */
  public static String requireLegal(String topic, String what) {
    requireNonNull(topic, what + " cannot be null");
    if (!isLegal(topic)) {
      throw new IllegalArgumentException(
          what
              + " must be a legal Kafka topic name (1..249 of [a-zA-Z0-9._-], not '.' or '..'),"
              + " got '"
              + WireText.quote(topic)
              + "'");
    }
    return topic;
  }
}

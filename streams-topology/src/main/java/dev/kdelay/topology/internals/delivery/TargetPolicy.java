package dev.kdelay.topology.internals.delivery;

import dev.kdelay.topology.DelayConfig;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Which topics a request may target. kdelay writes on behalf of whoever can write to its request
 * topic, so it must not be a confused deputy: a null payload is a delayed delete of any key, and a
 * record in another application's state is a forged fact. Three tiers:
 *
 * <ul>
 *   <li>never: Kafka-internal topics ({@code __*}) and kdelay's own (its request, reroute and
 *       dead-letter topics, and every topic of its Kafka Streams application, named after the
 *       application id in effect);
 *   <li>only when {@code delay.target.topic.allow} is set and names them (the default {@code .*}
 *       does not count): other applications' internal topics, which a delay service has no business
 *       writing to unless an operator says so: Kafka Streams changelog, repartition and
 *       foreign-key-join topics, {@code _}-prefixed topics ({@code _schemas}, {@code
 *       _confluent-*}), and Kafka Connect's default internal topics;
 *   <li>otherwise: whatever the allowlist matches.
 * </ul>
 */
public final class TargetPolicy {

  private static final Pattern STREAMS_INTERNAL =
      Pattern.compile(
          ".+-(changelog|repartition)|.+-KTABLE-FK-JOIN-SUBSCRIPTION-(REGISTRATION|RESPONSE)-\\d+-topic");
  private static final Set<String> CONNECT_INTERNAL =
      Set.of("connect-configs", "connect-offsets", "connect-status");

  private final Pattern allow;
  private final boolean allowNarrowed;
  private final Set<String> ownTopics;
  private final String applicationPrefix;

  /** Creates the policy of a configuration. */
  public TargetPolicy(DelayConfig config) {
    this.allow = config.targetTopicAllow();
    this.allowNarrowed = config.targetTopicAllowNarrowed();
    this.ownTopics = Set.of(config.requestsTopic(), config.dlqTopic(), config.rerouteTopic());
    // Changelog and repartition topics are named <application.id>-...
    this.applicationPrefix = config.applicationId() + "-";
  }

  /** Why a topic may not be targeted, or empty if it may. */
  public Optional<String> refusal(String topic) {
    if (topic.startsWith("__")) {
      return Optional.of("'" + topic + "' is a Kafka-internal topic");
    }
    if (ownTopics.contains(topic) || topic.startsWith(applicationPrefix)) {
      return Optional.of("'" + topic + "' is one of kdelay's own topics");
    }
    if (!allow.matcher(topic).matches()) {
      return Optional.of(
          "'" + topic + "' does not match delay.target.topic.allow (" + allow.pattern() + ")");
    }
    Optional<String> internal = othersInternal(topic);
    if (internal.isPresent() && !allowNarrowed) {
      return Optional.of(
          "'"
              + topic
              + "' looks like "
              + internal.get()
              + "; name it in delay.target.topic.allow to target it");
    }
    return Optional.empty();
  }

  private static Optional<String> othersInternal(String topic) {
    if (topic.startsWith("_")) {
      return Optional.of("an internal topic ('_'-prefixed, like _schemas)");
    }
    if (CONNECT_INTERNAL.contains(topic)) {
      return Optional.of("an internal topic of Kafka Connect");
    }
    if (STREAMS_INTERNAL.matcher(topic).matches()) {
      return Optional.of("another Kafka Streams application's internal topic");
    }
    return Optional.empty();
  }
}

package dev.kdelay.topology.internals;

import dev.kdelay.topology.DelayConfig;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Which topics a request may target. kdelay writes on behalf of whoever can write to its request
 * topic, so it must not be a confused deputy: Kafka-internal topics, kdelay's own topics and the
 * topics of its Kafka Streams application are never targets, and the rest must match the configured
 * allowlist.
 */
public final class TargetPolicy {

  private final Pattern allow;
  private final Set<String> ownTopics;
  private final String applicationPrefix;

  /** Creates the policy of a configuration. */
  public TargetPolicy(DelayConfig config) {
    this.allow = config.targetTopicAllow();
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
    return Optional.empty();
  }
}

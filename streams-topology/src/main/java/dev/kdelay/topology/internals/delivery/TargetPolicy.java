package dev.kdelay.topology.internals.delivery;

import dev.kdelay.topology.DelayConfig;
import dev.kdelay.topology.Tenants;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Which topics a request may target. kdelay writes on behalf of whoever can write to its request
 * topic, so it must not be a confused deputy: a null payload is a delayed delete of any key, and a
 * record in another application's state is a forged fact. Three tiers:
 *
 * <ul>
 *   <li>never: Kafka-internal topics ({@code __*}) and kdelay's own (its request, reroute, limits
 *       and dead-letter topics, and every topic of its Kafka Streams application, named after the
 *       application id in effect);
 *   <li>only when {@code delay.target.topic.allow} names them: other applications' internal topics,
 *       which a delay service has no business writing to unless an operator says so: Kafka Streams
 *       changelog, repartition and foreign-key-join topics, {@code _}-prefixed topics ({@code
 *       _schemas}, {@code _confluent-*}), and Kafka Connect's default internal topics;
 *   <li>otherwise: whatever the allowlist matches.
 * </ul>
 *
 * <p>An allowlist names an internal topic when it matches it but not a made-up topic of the same
 * kind: {@code _schemas} or {@code billing-app-.*} name topics, where {@code .*}, {@code ^.*$},
 * {@code .+} or {@code .*-changelog} would match any such topic and so name none.
 */
public final class TargetPolicy {

  private static final Pattern STREAMS_INTERNAL =
      Pattern.compile(
          ".+-(changelog|repartition)|.+-KTABLE-FK-JOIN-SUBSCRIPTION-(REGISTRATION|RESPONSE)-\\d+-topic");
  private static final Set<String> CONNECT_INTERNAL =
      Set.of("connect-configs", "connect-offsets", "connect-status");

  /**
   * Made-up topics of each kind of internal topic, which no allowlist names on purpose: only a
   * pattern that matches any topic of the kind matches them.
   */
  private static final String MADE_UP_UNDERSCORED = "_x9q-made-up-topic";

  private static final String MADE_UP_CONNECT = "connect-x9q-made-up-topic";
  private static final String MADE_UP_STREAMS_PREFIX = "x9q-made-up-application-x9q-";

  private final Pattern allow;
  private final Set<String> ownTopics;
  private final String applicationPrefix;
  private final Tenants tenants;

  /** Creates the policy of a configuration. */
  public TargetPolicy(DelayConfig config) {
    this.allow = config.targetTopicAllow();
    Set<String> own =
        new HashSet<>(
            Set.of(
                config.requestsTopic(),
                config.dlqTopic(),
                config.rerouteTopic(),
                config.fireRateLimitsTopic()));
    own.addAll(config.tenants().requestsTopics());
    own.addAll(config.tenants().dlqTopics());
    this.ownTopics = Set.copyOf(own);
    this.tenants = config.tenants();
    // Changelog and repartition topics are named <application.id>-...
    this.applicationPrefix = config.applicationId() + "-";
  }

  /**
   * Why a tenant's task may not target a topic, or empty if it may: what {@link #refusal(String)}
   * says, and else the tenant's own allowlist.
   *
   * @param tenant the tenant's name, empty for the shared request topic's tasks
   */
  public Optional<String> refusal(String tenant, String topic) {
    Optional<String> refused = refusal(topic);
    if (refused.isPresent() || tenant.isEmpty()) {
      return refused;
    }
    Optional<Tenants.Tenant> own = tenants.named(tenant);
    if (own.isEmpty()) {
      return Optional.of("'" + tenant + "' is not a tenant of this deployment");
    }
    Pattern allow = own.get().targetAllow();
    return allow.matcher(topic).matches()
        ? Optional.empty()
        : Optional.of(
            "'"
                + topic
                + "' does not match tenant "
                + tenant
                + "'s delay.tenant."
                + tenant
                + ".target.topic.allow ("
                + allow.pattern()
                + ")");
  }

  /** Whether the deployment has tenants, whose tasks have allowlists of their own. */
  public boolean hasTenants() {
    return !tenants.isEmpty();
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
    Optional<Internal> internal = othersInternal(topic);
    if (internal.isPresent() && allow.matcher(internal.get().madeUp()).matches()) {
      return Optional.of(
          "'"
              + topic
              + "' looks like "
              + internal.get().kind()
              + "; name it in delay.target.topic.allow to target it (a pattern that matches any"
              + " such topic does not name it)");
    }
    return Optional.empty();
  }

  /** A kind of other applications' internal topic, and a made-up topic of that kind. */
  private record Internal(String kind, String madeUp) {}

  private static Optional<Internal> othersInternal(String topic) {
    if (topic.startsWith("_")) {
      return Optional.of(
          new Internal("an internal topic ('_'-prefixed, like _schemas)", MADE_UP_UNDERSCORED));
    }
    if (CONNECT_INTERNAL.contains(topic)) {
      return Optional.of(new Internal("an internal topic of Kafka Connect", MADE_UP_CONNECT));
    }
    if (STREAMS_INTERNAL.matcher(topic).matches()) {
      // The made-up topic keeps the suffix, so that only a pattern that spells out the application
      // (and perhaps the store) names it.
      String suffix = topic.substring(topic.lastIndexOf('-') + 1);
      String madeUp =
          topic.endsWith("-topic")
              ? MADE_UP_STREAMS_PREFIX
                  + topic.substring(topic.indexOf("-KTABLE-FK-JOIN-SUBSCRIPTION-") + 1)
              : MADE_UP_STREAMS_PREFIX + "store-" + suffix;
      return Optional.of(
          new Internal("another Kafka Streams application's internal topic", madeUp));
    }
    return Optional.empty();
  }
}

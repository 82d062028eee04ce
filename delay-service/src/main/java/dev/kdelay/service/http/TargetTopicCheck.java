package dev.kdelay.service.http;

import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.topology.TargetTopic;
import dev.kdelay.topology.TargetTopics;
import dev.kdelay.topology.Tenants;
import dev.kdelay.topology.internals.delivery.TargetPolicy;
import java.util.Optional;
import java.util.function.BiFunction;

/**
 * The checks of a schedule's target topic that the admin API can make before writing the request: a
 * topic the policy refuses, one that does not exist, one kdelay may not write to. The topology
 * makes the same checks at intake and would dead-letter such a request; answering 422 at once tells
 * the caller now rather than in the dead-letter topic.
 *
 * <p>A topic whose state is unknown (the cluster did not answer in time) passes: intake decides.
 */
public final class TargetTopicCheck {

  /** Checks nothing: for tests that serve no real target topics. */
  static final TargetTopicCheck NONE =
      new TargetTopicCheck((tenant, topic) -> Optional.empty(), TargetTopics.UNCHECKED);

  private final BiFunction<String, String, Optional<String>> policy;
  private final TargetTopics topics;

  public TargetTopicCheck(TargetPolicy policy, TargetTopics topics) {
    this(policy::refusal, topics);
  }

  /**
   * @param policy why a tenant (empty: the shared namespace) may not target a topic, or empty
   * @param topics what is known of the cluster's topics
   */
  TargetTopicCheck(BiFunction<String, String, Optional<String>> policy, TargetTopics topics) {
    this.policy = policy;
    this.topics = topics;
  }

  /**
   * Turns away a request to a topic kdelay would certainly dead-letter it for.
   *
   * @param tenant the tenant whose request it is, with its own allowlist; empty for the shared
   *     namespace's
   * @param topic the target topic
   * @throws ApiException 422 with {@code TARGET_NOT_ALLOWED} or {@code UNKNOWN_TOPIC}
   */
  void check(Optional<Tenants.Tenant> tenant, String topic) {
    Optional<String> refusal = policy.apply(tenant.map(Tenants.Tenant::name).orElse(""), topic);
    if (refusal.isPresent()) {
      throw ApiException.undeliverable(RejectionReason.TARGET_NOT_ALLOWED, refusal.get());
    }
    // Waits a short bounded time for a topic not seen before, like intake does.
    TargetTopic target = topics.lookUp(topic);
    if (target.status() == TargetTopic.Status.ABSENT) {
      throw ApiException.undeliverable(
          RejectionReason.UNKNOWN_TOPIC,
          "target topic '" + topic + "' does not exist; create it first");
    }
    if (!target.writable()) {
      throw ApiException.undeliverable(
          RejectionReason.TARGET_NOT_ALLOWED,
          "kdelay may not write to topic '" + topic + "': its principal lacks WRITE there");
    }
  }
}

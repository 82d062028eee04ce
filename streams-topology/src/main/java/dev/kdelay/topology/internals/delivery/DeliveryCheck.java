package dev.kdelay.topology.internals.delivery;

import dev.kdelay.schemas.Rejection;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.schemas.Schedule;
import dev.kdelay.schemas.TenantIds;
import dev.kdelay.topology.TargetTopic;
import dev.kdelay.topology.TargetTopics;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.apache.kafka.streams.processor.api.Record;

/**
 * Whether a target takes what kdelay would write to it: the one place that asks the {@link
 * TargetPolicy}, what {@link TargetTopics} knows of the topic ({@link Deliverability}), and the
 * {@link DeliveryQuarantine} of records the producer already refused.
 *
 * <p>One per task, on its stream thread; at fire time it answers from memory.
 */
public final class DeliveryCheck {

  private final TargetPolicy policy;
  private final TargetTopics topics;
  private final Deliverability deliverability;
  private final DeliveryQuarantine quarantine;

  /** The most topics whose policy answer {@link #byPolicy} keeps. */
  static final int MAX_POLICY_ANSWERS = 1_024;

  /** The policy's answers by topic; on the stream thread only. */
  private final Map<String, Optional<Rejection>> byPolicy = new HashMap<>();

  public DeliveryCheck(
      TargetPolicy policy,
      TargetTopics topics,
      Deliverability deliverability,
      DeliveryQuarantine quarantine) {
    this.policy = policy;
    this.topics = topics;
    this.deliverability = deliverability;
    this.quarantine = quarantine;
  }

  /**
   * Why the target policy refuses a schedule request's topic, or empty. The policy's answer depends
   * on the topic name alone, and requests name few topics: each is asked once (two regular
   * expressions per request were a tenth of intake's own time), the answers kept for at most {@link
   * #MAX_POLICY_ANSWERS} topics.
   */
  public Optional<Rejection> byPolicy(String id, Schedule schedule) {
    return byPolicy(TenantIds.tenantOf(id), schedule.target().topic());
  }

  private Optional<Rejection> byPolicy(String tenant, String topic) {
    // a tenant's name has no U+0000 in it, so no two pairs make the same key
    String asked = tenant.isEmpty() ? topic : tenant + TenantIds.MARK + topic;
    Optional<Rejection> known = byPolicy.get(asked);
    if (known != null) {
      return known;
    }
    Optional<Rejection> refused =
        policy
            .refusal(tenant, topic)
            .map(refusal -> new Rejection(RejectionReason.TARGET_NOT_ALLOWED, refusal));
    if (byPolicy.size() >= MAX_POLICY_ANSWERS) {
      byPolicy.clear();
    }
    byPolicy.put(asked, refused);
    return refused;
  }

  /**
   * What is known of a schedule request's target topic, never waiting: empty while it is looked up
   * (see {@link TargetTopics#known}).
   */
  public Optional<TargetTopic> target(Schedule schedule) {
    return topics.known(schedule.target().topic());
  }

  /**
   * Why a schedule request the policy allows ({@link #byPolicy}) may not be accepted for its
   * target, or empty.
   *
   * @param target what is known of its topic: {@link TargetTopic#UNKNOWN} takes it unchecked
   */
  public Optional<Rejection> atIntake(String id, Schedule schedule, TargetTopic target) {
    return deliverability.atIntake(id, schedule, target);
  }

  /** Whether the deployment has tenants, whose fires name theirs ({@code delay-tenant}). */
  boolean hasTenants() {
    return policy.hasTenants();
  }

  /**
   * Why a due task's fired record must not reach the producer now, or empty. The target policy is
   * asked again: a task stored before the policy was narrowed (a restart with another {@code
   * delay.target.topic.allow}) must not write where the policy now refuses.
   */
  Optional<Rejection> atFire(Record<FiredKey, byte[]> fired, long nowMs) {
    // Without tenants no fire names one: the header is not looked for.
    Optional<Rejection> refused =
        byPolicy(policy.hasTenants() ? Causes.tenant(fired.headers()) : "", fired.key().topic());
    if (refused.isPresent()) {
      return Optional.of(
          new Rejection(
              RejectionReason.TARGET_NOT_ALLOWED,
              refused.get().message() + " (checked again as the task fell due)"));
    }
    if (!quarantine.isEmpty()) {
      Optional<Rejection> quarantined = quarantined(fired);
      if (quarantined.isPresent()) {
        return quarantined;
      }
    }
    return deliverability.atFire(fired, topics.cached(fired.key().topic()), nowMs);
  }

  private Optional<Rejection> quarantined(Record<FiredKey, byte[]> fired) {
    Optional<String> error =
        quarantine
            .refusal(Causes.fired(fired.headers()))
            .map(DeliveryQuarantine.Refusal::error)
            .or(() -> quarantine.topicRefusal(fired.key().topic()));
    if (error.isEmpty()) {
      OptionalLong refused = quarantine.refusedSize(fired.key().topic());
      long size = RecordSize.of(fired.key().key(), fired.value(), fired.headers());
      if (refused.isPresent() && size >= refused.getAsLong()) {
        return Optional.of(
            new Rejection(
                RejectionReason.UNDELIVERABLE,
                "MESSAGE_TOO_LARGE: topic '"
                    + fired.key().topic()
                    + "' refused a record of "
                    + refused.getAsLong()
                    + " bytes lately; this one is "
                    + size));
      }
    }
    return error.map(
        why ->
            new Rejection(
                RejectionReason.UNDELIVERABLE,
                "the target refused this record before, so it is not sent again: " + why));
  }
}

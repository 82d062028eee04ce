package dev.kdelay.topology;

import dev.kdelay.schemas.Action;
import dev.kdelay.schemas.RejectionReason;

/**
 * Receives what the topology does, for metrics. The topology calls it on its stream threads, from
 * its hottest paths (every request, every fire, every punctuation that finds work), so an
 * implementation must be thread-safe, must not block and should not allocate: increment a counter
 * resolved in advance, record into a histogram. Logging from here defeats the purpose.
 *
 * <p>Every method has an empty default, so an implementation overrides what it measures; {@link
 * #NOOP} measures nothing.
 *
 * <pre>{@code
 * DelayMetrics fires = new DelayMetrics() {
 *   @Override
 *   public void taskFired(long latenessMs) {
 *     firedCounter.increment();
 *   }
 * };
 * Topology topology = DelayTopology.build(config, targetTopics, fires);
 * }</pre>
 */
public interface DelayMetrics {

  /** Measures nothing. */
  DelayMetrics NOOP = new DelayMetrics() {};

  /**
   * A request was applied to the schedules.
   *
   * @param action what it asked for
   */
  default void requestApplied(Action action) {}

  /**
   * A request was rejected and dead-lettered.
   *
   * @param action what it asked for, or null if that could not be told (an unknown action)
   * @param reason the rejection code written to the dead letter
   */
  default void requestRejected(Action action, RejectionReason reason) {}

  /**
   * A request arrived on a partition other than the one its id hashes to and was forwarded to the
   * reroute topic; it is counted again as applied or rejected where it arrives.
   */
  default void requestRerouted() {}

  /**
   * A request waited aside, on the reroute topic, for the look-up of a target topic kdelay had not
   * seen before, or behind a request for its id that did; counted once per round it waited.
   */
  default void requestWaited() {}

  /**
   * A task fired: its record was handed to the target topic's producer, inside the transaction that
   * removes the task.
   *
   * @param latenessMs how long after its due time it fired, in milliseconds; 0 or more
   */
  default void taskFired(long latenessMs) {}

  /**
   * A tenant's task fired (besides {@link #taskFired}): what a deployment with tenants counts by
   * tenant.
   *
   * @param tenant the tenant's name
   * @param latenessMs how long after its due time it fired, in milliseconds; 0 or more
   */
  default void tenantTaskFired(String tenant, long latenessMs) {}

  /**
   * A task came due but its target topic (or partition) no longer exists; it was dead-lettered.
   *
   * @param reason {@code UNKNOWN_TOPIC}, {@code BAD_PARTITION} or {@code UNREADABLE_TASK}
   */
  default void taskUndeliverable(RejectionReason reason) {}

  /**
   * A task came due while its target topic was over its fire-rate limit, and was deferred to the
   * topic's next free slot; it fires then, with its own due time. Counted once per deferral.
   *
   * @param deferredMs how much later than its due time it will fire: the limit's share of its
   *     lateness, over 0
   */
  default void fireDeferred(long deferredMs) {}

  /** An occurrence of a recurring schedule was missed and, by its misfire policy, not fired. */
  default void occurrenceSkipped() {}

  /** A cancel removed a pending or paused schedule. */
  default void taskCancelled() {}

  /**
   * A punctuation found something due and handled it. Punctuations that found nothing are not
   * reported: nearly all of them cost a comparison in memory.
   *
   * @param durationNanos how long the punctuation took, commit request included
   * @param fired how many entries it handled: fired tasks, skipped occurrences, expired markers
   */
  default void punctuated(long durationNanos, int fired) {}

  /**
   * A partition's processor started on this instance; its gauges are readable from any thread until
   * {@link #partitionClosed}.
   *
   * @param gauges the partition's gauges
   */
  default void partitionOpened(PartitionGauges gauges) {}

  /**
   * A partition's processor stopped on this instance (the partition moved, or the instance stops).
   *
   * @param gauges the gauges passed to {@link #partitionOpened}
   */
  default void partitionClosed(PartitionGauges gauges) {}
}

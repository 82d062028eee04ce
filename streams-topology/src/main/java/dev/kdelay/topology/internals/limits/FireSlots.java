package dev.kdelay.topology.internals.limits;

import dev.kdelay.topology.FireRateLimits;
import dev.kdelay.topology.FireRateLimits.Limit;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;

/**
 * The fire-rate limits of one partition: when a due fire to a limited topic may go out.
 *
 * <p>Each limited topic has a clock (the generic cell rate algorithm): the time, in microseconds,
 * at which the topic's next fire would conform to its share of the limit if none were allowed
 * early. A fire due now goes out if the clock is no more than the burst's worth of intervals ahead
 * of now; otherwise it is deferred to the slot where it would conform. Either way the clock moves
 * on by one interval, so each fire deferred gets a slot of its own, after every slot handed out
 * before it: deferred fires go out in the order they came due, at the limit's rate, and a fire that
 * comes due later waits behind them.
 *
 * <p>The clocks outlive the instance: they are kept in a changelogged store of their own ({@link
 * #STORE}), written in the same transaction as the entries they deferred, so that after a restart
 * or a rebalance a newly due fire still waits behind the deferred ones instead of overtaking them,
 * and the topic does not get twice its rate while the deferred ones drain.
 *
 * <p>Runs on the stream thread only.
 */
public final class FireSlots {

  /** The store of the clocks: target topic to its clock, microseconds since the epoch. */
  public static final String STORE = "delay-fire-slots";

  private static final long MICROS_PER_MS = 1_000;
  private static final double MICROS_PER_SECOND = 1_000_000d;

  private final Map<String, Limit> shares = new HashMap<>();
  private final KeyValueStore<String, Long> store;
  private final Map<String, Long> clocks = new HashMap<>();
  private final Set<String> changed = new LinkedHashSet<>();

  /**
   * The slots of one partition.
   *
   * @param limits the limits of the whole deployment
   * @param partitions the request topic's partition count: each partition fires its share
   * @param store where the clocks are kept; null for none (no topic limited)
   */
  public FireSlots(FireRateLimits limits, int partitions, KeyValueStore<String, Long> store) {
    limits.byTopic().forEach((topic, limit) -> shares.put(topic, limit.share(partitions)));
    if (!shares.isEmpty() && store == null) {
      throw new IllegalArgumentException("limited topics need the store " + STORE);
    }
    this.store = store;
  }

  /** What the topology adds for the clocks: a small store with a changelog, no cache. */
  public static StoreBuilder<KeyValueStore<String, Long>> storeBuilder() {
    return Stores.keyValueStoreBuilder(
            Stores.persistentKeyValueStore(STORE), Serdes.String(), Serdes.Long())
        .withCachingDisabled();
  }

  /** Whether some topic is limited. */
  public boolean any() {
    return !shares.isEmpty();
  }

  /**
   * When a fire to a topic that came due may go out, and takes its place: now, or a later slot.
   *
   * @param topic the fire's target topic
   * @param nowMs the wall-clock time
   * @return empty to fire now (the topic is not limited, or within its limit), else the millisecond
   *     it is deferred to, after {@code nowMs}
   */
  public OptionalLong take(String topic, long nowMs) {
    Limit share = shares.get(topic);
    if (share == null) {
      return OptionalLong.empty();
    }
    long interval = Math.max(1, Math.round(MICROS_PER_SECOND / share.perSecond()));
    long tolerance = (share.burst() - 1L) * interval;
    long now = nowMs * MICROS_PER_MS;
    long clock = Math.max(clock(topic), now);
    clocks.put(topic, clock + interval);
    changed.add(topic);
    long conforms = clock - tolerance;
    if (conforms <= now) {
      return OptionalLong.empty();
    }
    return OptionalLong.of(Math.max(nowMs + 1, -Math.floorDiv(-conforms, MICROS_PER_MS)));
  }

  /**
   * Writes the clocks that moved since the last call to the store: called after each batch of due
   * entries, before its commit.
   */
  public void save() {
    for (String topic : changed) {
      store.put(topic, clocks.get(topic));
    }
    changed.clear();
  }

  private long clock(String topic) {
    Long clock = clocks.get(topic);
    if (clock == null) {
      Long stored = store.get(topic);
      clock = stored == null ? Long.MIN_VALUE : stored;
      clocks.put(topic, clock);
    }
    return clock;
  }
}

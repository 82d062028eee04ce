package dev.kdelay.topology.internals.limits;

import dev.kdelay.topology.FireRateLimits;
import dev.kdelay.topology.FireRateLimits.Limit;
import dev.kdelay.topology.FireRateLimitsInEffect;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.LongSupplier;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.state.KeyValueIterator;
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
 * comes due later waits behind them. A deferred fire whose slot the stream thread reached late asks
 * again ({@link #atSlot}), so that the slots that passed meanwhile do not all go out at once.
 *
 * <p>A tenant may have a limit of its own ({@link FireRateLimits#tenant}), over all its fires to
 * whatever topic: its clock works the same way, and a tenant's fire goes out at the first slot
 * within both its topic's limit and its tenant's, each clock moving on from there.
 *
 * <p>The limits may change while it runs ({@code limits} is asked at each fire): a new rate spaces
 * the fires that come due after the change, and fires deferred before it keep their slots. A topic
 * whose limit was lifted while fires were deferred goes on deferring, a millisecond apart, until
 * its clock has passed, so that nothing due later overtakes them.
 *
 * <p>The clocks outlive the instance: they are kept in a changelogged store of their own ({@link
 * #STORE}), written in the same transaction as the entries they deferred, so that after a restart
 * or a rebalance a newly due fire still waits behind the deferred ones instead of overtaking them,
 * and the topic does not get twice its rate while the deferred ones drain.
 *
 * <p>Runs on the stream thread only.
 */
public final class FireSlots {

  /**
   * The store of the clocks: target topic, or {@code tenant:<name>}, to its clock, microseconds
   * since the epoch.
   */
  public static final String STORE = "delay-fire-slots";

  private static final long MICROS_PER_MS = 1_000;
  private static final double MICROS_PER_SECOND = 1_000_000d;

  /** Where times and spans in microseconds stop growing: about 73,000 years from the epoch. */
  private static final long SATURATED = Long.MAX_VALUE / 4;

  /**
   * How late after its slot a deferred fire still goes out as it is: this, or an interval if that
   * is longer.
   */
  private static final long LATE_SLACK_MS = 20;

  /**
   * How long after its slot a fire settled again is remembered: one that is still stored then (its
   * thread stopped that long) counts as deferred there, and is settled again if late.
   */
  private static final long FORGET_SETTLED_MS = 60_000;

  private final FireRateLimitsInEffect limits;
  private final int partitions;
  private final KeyValueStore<String, Long> store;
  private final Map<String, Long> clocks = new HashMap<>();
  private final Set<String> changed = new LinkedHashSet<>();
  private final Map<String, String> tenantSubjects = new HashMap<>(); // tenant -> tenant:<name>
  // subject -> the latest slot it deferred a fire to (micros): a task due before it fires behind
  private final Map<String, Long> deferredTo = new HashMap<>();
  // subject -> its clock as restored: what it deferred before is not known, at most up to an
  // interval before the clock
  private final Map<String, Long> restored = new HashMap<>();
  // subject -> the latest slot a late deferred fire was settled again at (micros), see atSlot
  private final Map<String, Long> settledTo = new HashMap<>();
  // id -> the slot (ms) a late deferred fire was settled again at: it fires there as it is. In the
  // order settled; what a cancel or a replacement left behind is dropped a while after its slot.
  private final LinkedHashMap<String, Long> settled = new LinkedHashMap<>();
  private boolean loaded;

  /**
   * The slots of one partition.
   *
   * @param limits the limits of the whole deployment, as they are now; asked at each fire
   * @param partitions the request topic's partition count: each partition fires its share
   * @param store where the clocks are kept; read at the first fire, once restored
   */
  public FireSlots(
      FireRateLimitsInEffect limits, int partitions, KeyValueStore<String, Long> store) {
    this.limits = Objects.requireNonNull(limits, "limits cannot be null");
    this.partitions = partitions;
    this.store = Objects.requireNonNull(store, "store cannot be null");
  }

  private FireSlots() {
    this.limits = new FireRateLimitsInEffect(FireRateLimits.NONE);
    this.partitions = 1;
    this.store = null;
    this.loaded = true;
  }

  /** Slots for a deployment without limits, ever: every fire goes out at once. */
  public static FireSlots none() {
    return new FireSlots();
  }

  /** What the topology adds for the clocks: a small store with a changelog, no cache. */
  public static StoreBuilder<KeyValueStore<String, Long>> storeBuilder() {
    return Stores.keyValueStoreBuilder(
            Stores.persistentKeyValueStore(STORE), Serdes.String(), Serdes.Long())
        .withCachingDisabled();
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
    return take(topic, "", nowMs);
  }

  /**
   * When a tenant's fire to a topic that came due may go out, and takes its place: now, or the
   * first slot where it is within both the topic's limit and the tenant's ({@link
   * FireRateLimits#tenant}). Each limit's clock then moves on from that slot.
   *
   * @param topic the fire's target topic
   * @param tenant the tenant whose task it is; empty for the shared namespace's
   * @param nowMs the wall-clock time
   * @return empty to fire now, else the millisecond it is deferred to, after {@code nowMs}
   */
  public OptionalLong take(String topic, String tenant, long nowMs) {
    return take(topic, tenant, nowMs, nowMs);
  }

  /**
   * As {@link #take(String, String, long)}, for a task due at {@code dueMs}. A task due before a
   * slot its limit deferred another task to never fires now, even where the limit would allow it:
   * the deferred task waits in the due index at its slot, after this task's due time, so this one
   * would overtake it (a partition's due order is the promise). It takes a slot an interval after
   * that one instead, or if that has passed, right after now, behind every deferred task whose slot
   * has come; the tasks that took that slot fire there by their own due times (the punctuation
   * handles a batch in the order its tasks fire as).
   *
   * @param dueMs when the task came due
   */
  public OptionalLong take(String topic, String tenant, long nowMs, long dueMs) {
    load();
    FireRateLimits now = limits.get();
    long nowMicros = nowMs * MICROS_PER_MS;
    Bucket byTopic = bucket(topic, now, nowMicros);
    Bucket byTenant = tenantBucket(tenant, now, nowMicros);
    if (byTopic == null && byTenant == null) {
      return OptionalLong.empty(); // the common case: a look-up or two in memory
    }
    long dueMicros = micros(dueMs);
    boolean behind = behindDeferred(byTopic, dueMicros, byTenant);
    long fireAt =
        Math.max(
            Math.max(nowMicros, behind ? Math.max(after(byTopic), after(byTenant)) : nowMicros),
            Math.max(
                byTopic == null ? nowMicros : byTopic.conforms(),
                byTenant == null ? nowMicros : byTenant.conforms()));
    if (byTopic != null) {
      byTopic.took(fireAt);
    }
    if (byTenant != null) {
      byTenant.took(fireAt);
    }
    if (fireAt <= nowMicros && !behind) {
      return OptionalLong.empty();
    }
    long slotMs = Math.max(nowMs + 1, -Math.floorDiv(-fireAt, MICROS_PER_MS));
    // the slot it conforms at, or the one after now it waits at behind the deferred ones
    long deferredAt = fireAt > nowMicros ? fireAt : micros(slotMs);
    if (byTopic != null) {
      deferredTo.merge(byTopic.subject, deferredAt, Math::max);
    }
    if (byTenant != null) {
      deferredTo.merge(byTenant.subject, deferredAt, Math::max);
    }
    return OptionalLong.of(slotMs);
  }

  /**
   * Whether a fire deferred to {@code slotMs} goes out now that its slot has come, or is settled
   * again at a later slot. Its slot was handed out assuming it would go out then; when the stream
   * thread comes back late (a pause, a long commit, a restart in another instance), every deferred
   * fire whose slot passed meanwhile is due at once, and going out together they would exceed the
   * limit. So a fire more than an interval (or {@value #LATE_SLACK_MS} ms, if longer) past its
   * slot, or one whose slot comes less than an interval after a fire settled again, is settled
   * again: at now or an interval after the last one settled, whichever is later, in the order they
   * come (due order, as the punctuation handles them). The clock moves on past it, so that fires
   * that come due later wait behind. A fire goes out at the slot it was settled at as it is.
   *
   * <p>What was settled again is kept in memory: after a restart, a fire settled before it counts
   * as deferred to its new slot, and is settled again only if it is late there.
   *
   * @param id the task's id
   * @param slotMs the slot it was deferred to
   * @return empty to fire now, else the millisecond it is settled at, after {@code nowMs}
   */
  public OptionalLong atSlot(String topic, String tenant, String id, long nowMs, long slotMs) {
    Long settledAt = settled.remove(id);
    if (settledAt != null && settledAt == slotMs) {
      return OptionalLong.empty();
    }
    for (Iterator<Long> oldest = settled.values().iterator();
        oldest.hasNext() && oldest.next() < nowMs - FORGET_SETTLED_MS; ) {
      oldest.remove();
    }
    load();
    FireRateLimits now = limits.get();
    long nowMicros = micros(nowMs);
    Bucket byTopic = bucket(topic, now, nowMicros);
    Bucket byTenant = tenantBucket(tenant, now, nowMicros);
    long slotMicros = micros(slotMs);
    if (!late(byTopic, slotMicros, nowMicros) && !late(byTenant, slotMicros, nowMicros)) {
      return OptionalLong.empty();
    }
    long fireAt = Math.max(nowMicros, Math.max(next(byTopic), next(byTenant)));
    settle(byTopic, fireAt);
    settle(byTenant, fireAt);
    if (fireAt <= nowMicros) {
      return OptionalLong.empty();
    }
    long settledMs = -Math.floorDiv(-fireAt, MICROS_PER_MS);
    settled.put(id, settledMs);
    return OptionalLong.of(settledMs);
  }

  /**
   * Whether a deferred fire at {@code slotMicros} cannot go out now within a limit: late by more
   * than an interval (or {@link #LATE_SLACK_MS}, if longer), or closer than an interval after a
   * fire settled again.
   */
  private boolean late(Bucket bucket, long slotMicros, long nowMicros) {
    if (bucket == null) {
      return false;
    }
    long slack = Math.max(bucket.interval, LATE_SLACK_MS * MICROS_PER_MS);
    return nowMicros - slotMicros > slack || slotMicros < next(bucket);
  }

  /** The earliest a fire settled again may go out within a limit: an interval after the last. */
  private long next(Bucket bucket) {
    if (bucket == null) {
      return Long.MIN_VALUE;
    }
    Long last = settledTo.get(bucket.subject);
    return last == null ? Long.MIN_VALUE : saturated(() -> Math.addExact(last, bucket.interval));
  }

  /** A fire was settled again at {@code fireAt}: later fires of the limit go behind it. */
  private void settle(Bucket bucket, long fireAt) {
    if (bucket == null) {
      return;
    }
    settledTo.put(bucket.subject, fireAt);
    deferredTo.merge(bucket.subject, fireAt, Math::max);
    long after = saturated(() -> Math.addExact(fireAt, bucket.interval));
    if (after > clocks.getOrDefault(bucket.subject, Long.MIN_VALUE)) {
      clocks.put(bucket.subject, after);
      changed.add(bucket.subject);
    }
  }

  /** Reads the clocks, once restored: at the first fire. */
  private void load() {
    if (loaded) {
      return;
    }
    // A handful of entries, one per topic or tenant limited now or lately.
    try (KeyValueIterator<String, Long> all = store.all()) {
      all.forEachRemaining(
          clock -> {
            clocks.put(clock.key, clock.value);
            restored.put(clock.key, clock.value);
          });
    }
    loaded = true;
  }

  /** Milliseconds as microseconds, at most {@link #SATURATED}. */
  private static long micros(long ms) {
    return ms >= SATURATED / MICROS_PER_MS ? SATURATED : ms * MICROS_PER_MS;
  }

  /**
   * The earliest a fire behind the deferred ones may go out within a limit: an interval after the
   * latest slot it deferred to (or settled a fire at again).
   */
  private long after(Bucket bucket) {
    if (bucket == null) {
      return Long.MIN_VALUE;
    }
    long last = deferredBound(bucket);
    return last == Long.MIN_VALUE
        ? Long.MIN_VALUE
        : saturated(() -> Math.addExact(last, bucket.interval));
  }

  /** Whether a task due at {@code dueMicros} is due before a slot either limit deferred to. */
  private boolean behindDeferred(Bucket byTopic, long dueMicros, Bucket byTenant) {
    return (byTopic != null && dueMicros < deferredBound(byTopic))
        || (byTenant != null && dueMicros < deferredBound(byTenant));
  }

  /**
   * The latest slot a limit deferred a fire to, or Long.MIN_VALUE. After a restart, what was
   * deferred before it is not known: at most up to an interval before the clock restored.
   */
  private long deferredBound(Bucket bucket) {
    long bound = deferredTo.getOrDefault(bucket.subject, Long.MIN_VALUE);
    Long clock = restored.get(bucket.subject);
    return clock == null ? bound : Math.max(bound, clock - bucket.interval);
  }

  /** A tenant's clock, as {@link #bucket}; null for the shared namespace (no tenant). */
  private Bucket tenantBucket(String tenant, FireRateLimits now, long nowMicros) {
    return tenant.isEmpty()
        ? null
        : bucket(tenantSubjects.computeIfAbsent(tenant, FireRateLimits::tenant), now, nowMicros);
  }

  /**
   * The clock of what a limit applies to (a topic, or a tenant), and where it allows the next fire;
   * null if it has no limit and no clock, or a clock that no longer holds anything back (then
   * forgotten).
   */
  private Bucket bucket(String subject, FireRateLimits now, long nowMicros) {
    Limit limit = now.of(subject).orElse(null);
    Long clock = clocks.get(subject);
    if (limit == null && clock == null) {
      return null;
    }
    if (limit != null) {
      Limit share = limit.share(partitions);
      long interval = Math.max(1, Math.round(MICROS_PER_SECOND / share.perSecond()));
      long tolerance = saturated(() -> Math.multiplyExact(share.burst() - 1L, interval));
      return new Bucket(subject, clock == null ? nowMicros : clock, interval, tolerance);
    }
    if (clock > nowMicros) {
      // lifted while fires wait: behind them, a millisecond apart
      return new Bucket(subject, clock, MICROS_PER_MS, 0);
    }
    clocks.remove(subject); // lifted, and what it deferred is due: forget the clock
    deferredTo.remove(subject);
    restored.remove(subject);
    settledTo.remove(subject);
    changed.add(subject);
    return null;
  }

  /** One limit's clock (the generic cell rate algorithm's theoretical arrival time). */
  private final class Bucket {
    private final String subject;
    private final long clock;
    private final long interval;
    private final long tolerance;

    Bucket(String subject, long clock, long interval, long tolerance) {
      this.subject = subject;
      this.clock = clock;
      this.interval = interval;
      this.tolerance = tolerance;
    }

    /** The earliest time, in microseconds, a fire is within this limit. */
    long conforms() {
      return clock - tolerance;
    }

    /** A fire went out, or was given its slot, at {@code fireAt}: the clock moves on from there. */
    void took(long fireAt) {
      long next = Math.max(clock, fireAt);
      clocks.put(subject, saturated(() -> Math.addExact(next, interval)));
      changed.add(subject);
    }
  }

  /**
   * A time or span in microseconds, kept far from overflow: a burst of a billion at the lowest rate
   * is a tolerance longer than time, and so would be the clock of a topic whose slots run that far.
   */
  private static long saturated(LongSupplier exact) {
    try {
      return Math.min(exact.getAsLong(), SATURATED);
    } catch (ArithmeticException overflow) {
      return SATURATED;
    }
  }

  /**
   * Writes the clocks that moved since the last call to the store: called after each batch of due
   * entries, before its commit.
   */
  public void save() {
    for (String subject : changed) {
      Long clock = clocks.get(subject);
      if (clock == null) {
        store.delete(subject);
      } else {
        store.put(subject, clock);
      }
    }
    changed.clear();
  }
}

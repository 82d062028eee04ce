package dev.kdelay.benchmarks;

import dev.kdelay.schemas.DelayHeaders;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Comparator;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/**
 * What a {@link Watch} saw of one run: how many of its records became visible (each counted once; a
 * second copy is a duplicate, which exactly-once forbids), when the first and the last did, and for
 * fired records their due time and the time they became visible.
 */
final class Observation {

  private final int expected;
  private final int seen;
  private final int duplicates;
  private final int earlyFires;
  private final long firstVisibleMs;
  private final long lastVisibleMs;
  private final long[] dueMs;
  private final long[] visibleMs;
  private final long[] firedMs;

  private Observation(Builder builder) {
    this.expected = builder.expected;
    this.seen = builder.distinct;
    this.duplicates = builder.duplicates;
    this.earlyFires = builder.earlyFires;
    this.firstVisibleMs = builder.firstVisibleMs;
    this.lastVisibleMs = builder.lastVisibleMs;
    this.dueMs = Arrays.copyOf(builder.dueMs, builder.timed);
    this.visibleMs = Arrays.copyOf(builder.visibleMs, builder.timed);
    this.firedMs = Arrays.copyOf(builder.firedMs, builder.timed);
  }

  int expected() {
    return expected;
  }

  /** Distinct records seen. */
  int seen() {
    return seen;
  }

  boolean complete() {
    return seen == expected;
  }

  int duplicates() {
    return duplicates;
  }

  /** Fired records whose {@code delay-fired-at} is before their {@code delay-due-at}. */
  int earlyFires() {
    return earlyFires;
  }

  long firstVisibleMs() {
    return firstVisibleMs;
  }

  long lastVisibleMs() {
    return lastVisibleMs;
  }

  /** The due-to-visible lateness of the fired records, in due order. */
  Lateness lateness() {
    return Lateness.of(dueMs, visibleMs);
  }

  /**
   * The due-to-fired lateness ({@code delay-fired-at}, stamped on the stream thread as it hands the
   * record to the producer): the part of {@link #lateness()} spent before the send. The rest is the
   * transaction's commit and the fetch.
   */
  Lateness firingLateness() {
    return Lateness.of(dueMs, firedMs);
  }

  /**
   * How the records became visible, in steps: records grouped by the time they became visible, a
   * step ending where none became visible for {@code gapMs}. Under exactly-once the records of one
   * transaction become visible together, so a step is normally one commit (a consumer's fetch may
   * split one, a fast pair of commits may merge). Times are counted from the earliest due time.
   */
  List<Step> steps(long gapMs) {
    if (dueMs.length == 0) {
      return List.of();
    }
    long due = Arrays.stream(dueMs).min().getAsLong();
    Integer[] order = new Integer[visibleMs.length];
    Arrays.setAll(order, i -> i);
    Arrays.sort(order, Comparator.comparingLong(i -> visibleMs[i]));
    List<Step> steps = new ArrayList<>();
    int records = 0;
    long lastFired = Long.MIN_VALUE;
    for (int k = 0; k < order.length; k++) {
      int i = order[k];
      records++;
      lastFired = Math.max(lastFired, firedMs[i]);
      boolean last = k == order.length - 1 || visibleMs[order[k + 1]] - visibleMs[i] >= gapMs;
      if (last) {
        steps.add(new Step(records, lastFired - due, visibleMs[i] - due));
        records = 0;
        lastFired = Long.MIN_VALUE;
      }
    }
    return steps;
  }

  /**
   * One step of {@link #steps}.
   *
   * @param records how many records became visible in it
   * @param firedByMs when the last of them was fired ({@code delay-fired-at}), after the due time
   * @param visibleAtMs when the last of them became visible, after the due time
   */
  record Step(int records, long firedByMs, long visibleAtMs) {}

  /** Collects an observation; used by the watch's thread only. */
  static final class Builder {

    private final byte[] prefix;
    private final int expected;
    private final BitSet indexes;
    private int distinct;
    private int duplicates;
    private int earlyFires;
    private long firstVisibleMs = -1;
    private long lastVisibleMs = -1;
    private long[] dueMs = new long[1024];
    private long[] visibleMs = new long[1024];
    private long[] firedMs = new long[1024];
    private int timed;

    Builder(String tag, int expected) {
      this.prefix = (tag + "-").getBytes(StandardCharsets.US_ASCII);
      this.expected = expected;
      this.indexes = new BitSet(expected);
    }

    boolean complete() {
      return distinct >= expected;
    }

    void add(ConsumerRecord<byte[], byte[]> record, long visibleAtMs) {
      int index = indexOf(record.key());
      if (index < 0) {
        return; // another run's record
      }
      if (indexes.get(index)) {
        duplicates++;
        return;
      }
      indexes.set(index);
      distinct++;
      if (firstVisibleMs < 0) {
        firstVisibleMs = visibleAtMs;
      }
      lastVisibleMs = visibleAtMs;
      Header due = record.headers().lastHeader(DelayHeaders.DUE_AT);
      if (due != null) {
        long dueAt = parse(due.value());
        Header fired = record.headers().lastHeader(DelayHeaders.FIRED_AT);
        long firedAt = fired == null ? visibleAtMs : parse(fired.value());
        if (firedAt < dueAt) {
          earlyFires++;
        }
        addTimed(dueAt, visibleAtMs, firedAt);
      }
    }

    private void addTimed(long due, long visible, long fired) {
      if (timed == dueMs.length) {
        dueMs = Arrays.copyOf(dueMs, timed * 2);
        visibleMs = Arrays.copyOf(visibleMs, timed * 2);
        firedMs = Arrays.copyOf(firedMs, timed * 2);
      }
      dueMs[timed] = due;
      visibleMs[timed] = visible;
      firedMs[timed] = fired;
      timed++;
    }

    /** The index in {@code <tag>-<index>}, or -1 for a key of another run. */
    private int indexOf(byte[] key) {
      if (key == null
          || key.length <= prefix.length
          || !Arrays.equals(key, 0, prefix.length, prefix, 0, prefix.length)) {
        return -1;
      }
      int index = 0;
      for (int i = prefix.length; i < key.length; i++) {
        index = index * 10 + (key[i] - '0');
      }
      return index < expected ? index : -1;
    }

    private static long parse(byte[] ascii) {
      long value = 0;
      for (byte digit : ascii) {
        value = value * 10 + (digit - '0');
      }
      return value;
    }

    Observation build() {
      return new Observation(this);
    }
  }
}

package dev.kdelay.topology.internals;

import dev.kdelay.schemas.StoredTask;
import dev.kdelay.schemas.StoredTaskCodec;
import dev.kdelay.schemas.StoredTaskSummary;
import dev.kdelay.topology.Decoded;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * What the schedule store holds for one id, its only entry: the schedule's state, its time, the
 * timestamp of the request that set it and, while the schedule is live, the stored task. The value
 * of the store and of its changelog, which is keyed by schedule id.
 *
 * <pre>
 * u8   format           = {@value #FORMAT_2}   (kdelay's first layout had two stores and no format byte here)
 * u8   state            (State ordinal)
 * i64  time ms          SCHEDULED: due; CANCELLED, FIRED: expiry; PAUSED: the due time of the
 *                       occurrence a trigger fired while paused, else {@code Long.MAX_VALUE}
 * i64  request ms       timestamp of the request that set this state
 * ...  stored task      SCHEDULED, PAUSED: {@link StoredTaskCodec} bytes; markers: nothing
 * </pre>
 *
 * <p>The first {@value #HEADER_BYTES} bytes say where the entry sits in the due index, so the store
 * indexes an entry without decoding its task.
 *
 * @param state the schedule's state
 * @param timeMs its due time, or a marker's expiry
 * @param requestMs the timestamp of the request that set this state
 * @param task the encoded stored task; empty for markers
 */
public record ScheduleEntry(State state, long timeMs, long requestMs, byte[] task) {

  /** The format byte of the layout above. */
  public static final byte FORMAT_2 = 2;

  /** Bytes before the stored task. */
  public static final int HEADER_BYTES = 2 + 2 * Long.BYTES;

  private static final byte[] NO_TASK = new byte[0];
  private static final State[] STATES = State.values();

  /** The state of a schedule. */
  public enum State {
    /** Fires at its time. */
    SCHEDULED,
    /** A recurring schedule that does not fire until resumed. */
    PAUSED,
    /** Cancelled; the marker stays until its expiry, to order late requests. */
    CANCELLED,
    /** A one-shot that fired; the marker stays until its expiry, as a cancel's does. */
    FIRED;

    /** Whether an entry in this state is a marker: no task, gone at its expiry. */
    public boolean marker() {
      return this == CANCELLED || this == FIRED;
    }
  }

  /** A live entry. */
  public static ScheduleEntry scheduled(long dueMs, long requestMs, StoredTask task) {
    return new ScheduleEntry(State.SCHEDULED, dueMs, requestMs, StoredTaskCodec.encode(task));
  }

  /** A marker that expires at {@code expiryMs}. */
  public static ScheduleEntry marker(State state, long expiryMs, long requestMs) {
    return new ScheduleEntry(state, expiryMs, requestMs, NO_TASK);
  }

  /** The time of a paused entry whose schedule no trigger fired while it was paused. */
  public static final long NOT_TRIGGERED = Long.MAX_VALUE;

  /**
   * This entry, paused: the same task, no due time. One paused already keeps the occurrence a
   * trigger fired while it was paused, which a resume must start after.
   */
  public ScheduleEntry paused(long requestMs) {
    return new ScheduleEntry(
        State.PAUSED, state == State.PAUSED ? timeMs : NOT_TRIGGERED, requestMs, task);
  }

  /**
   * A paused entry whose occurrence due at {@code triggeredMs} a trigger fired: a resume or the
   * next trigger starts after it.
   */
  public static ScheduleEntry pausedAfter(long triggeredMs, long requestMs, StoredTask task) {
    return new ScheduleEntry(State.PAUSED, triggeredMs, requestMs, StoredTaskCodec.encode(task));
  }

  /** The stored task, decoded; unreadable if its bytes are damaged or it is a marker. */
  public Decoded<StoredTask> decodeTask() {
    if (task.length == 0) {
      return Decoded.unreadable(state + " entry holds no task");
    }
    try {
      return Decoded.readable(StoredTaskCodec.decode(task));
    } catch (IllegalArgumentException e) {
      // Where a task's bytes are decoded (and in summarizeTask): StoredTaskCodec throws only this.
      return Decoded.unreadable(e.getMessage());
    }
  }

  /**
   * What a listing shows of the stored task, read without copying its payload; unreadable as {@link
   * #decodeTask} would be.
   */
  public Decoded<StoredTaskSummary> summarizeTask() {
    if (task.length == 0) {
      return Decoded.unreadable(state + " entry holds no task");
    }
    try {
      return Decoded.readable(StoredTaskCodec.summarize(task));
    } catch (IllegalArgumentException e) {
      return Decoded.unreadable(e.getMessage());
    }
  }

  /** The binary form. */
  public byte[] toBytes() {
    return ByteBuffer.allocate(HEADER_BYTES + task.length)
        .put(FORMAT_2)
        .put((byte) state.ordinal())
        .putLong(timeMs)
        .putLong(requestMs)
        .put(task)
        .array();
  }

  /** Reads an entry; unreadable if the format or the state is unknown, or it is too short. */
  public static Decoded<ScheduleEntry> decode(byte[] bytes) {
    String damage = damage(bytes);
    if (damage != null) {
      return Decoded.unreadable(damage);
    }
    ByteBuffer in = ByteBuffer.wrap(bytes, 2, HEADER_BYTES - 2);
    return Decoded.readable(
        new ScheduleEntry(
            STATES[bytes[1]],
            in.getLong(),
            in.getLong(),
            Arrays.copyOfRange(bytes, HEADER_BYTES, bytes.length)));
  }

  /** Why the header of an entry cannot be read, or null if it can. */
  static String damage(byte[] bytes) {
    if (bytes.length < HEADER_BYTES) {
      return "schedule entry of " + bytes.length + " bytes, shorter than its header";
    }
    if (bytes[0] != FORMAT_2) {
      return "unknown schedule entry format "
          + bytes[0]
          + "; this reader knows "
          + FORMAT_2
          + " (state written by another kdelay version?)";
    }
    if (bytes[1] < 0 || bytes[1] >= STATES.length) {
      return "unknown schedule entry state " + bytes[1];
    }
    if (STATES[bytes[1]].marker() != (bytes.length == HEADER_BYTES)) {
      return STATES[bytes[1]] + " entry of " + bytes.length + " bytes";
    }
    return null;
  }

  /** The state of an entry in binary form with a readable header. */
  static State stateOf(byte[] bytes) {
    return STATES[bytes[1]];
  }

  /** The time of an entry in binary form with a readable header. */
  static long timeOf(byte[] bytes) {
    return ByteBuffer.wrap(bytes, 2, Long.BYTES).getLong();
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof ScheduleEntry that
        && state == that.state
        && timeMs == that.timeMs
        && requestMs == that.requestMs
        && Arrays.equals(task, that.task);
  }

  @Override
  public int hashCode() {
    return 31 * Long.hashCode(timeMs) + state.hashCode() + Arrays.hashCode(task);
  }

  @Override
  public String toString() {
    return "ScheduleEntry[" + state + ", time=" + timeMs + ", request=" + requestMs + "]";
  }
}

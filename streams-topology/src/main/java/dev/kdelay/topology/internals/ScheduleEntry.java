package dev.kdelay.topology.internals;

import java.nio.ByteBuffer;

/**
 * What the schedules store knows of one id: its state, the due time of its pending entry in the
 * task store, and the timestamp of the request that set it (requests for an id apply in timestamp
 * order, whichever partition they arrived on).
 *
 * <pre>
 * u8   version          = {@value #VERSION_1}
 * u8   state            (State ordinal)
 * i64  due ms           of the pending task-store entry (or the marker's expiry)
 * i64  request ms       timestamp of the request that set this state
 * </pre>
 *
 * @param state the schedule's state
 * @param dueMs the due time of its task-store entry
 * @param requestMs the timestamp of the request that set this state
 */
public record ScheduleEntry(State state, long dueMs, long requestMs) {

  /** The version byte of the layout above. */
  public static final byte VERSION_1 = 1;

  private static final int SIZE = 2 + 2 * Long.BYTES;
  private static final State[] STATES = State.values();

  /** The state of a schedule. */
  public enum State {
    /** An entry in the task store will fire it. */
    SCHEDULED,
    /** A recurring schedule that does not fire until resumed. */
    PAUSED,
    /** Cancelled; the marker stays until its retention passes, to order late requests. */
    CANCELLED,
    /** A one-shot that fired; the marker stays until its retention passes, as a cancel's does. */
    FIRED
  }

  /** The binary form. */
  public byte[] toBytes() {
    return ByteBuffer.allocate(SIZE)
        .put(VERSION_1)
        .put((byte) state.ordinal())
        .putLong(dueMs)
        .putLong(requestMs)
        .array();
  }

  /**
   * Reads an entry.
   *
   * @throws IllegalArgumentException if the version or the state is unknown, or the size wrong
   */
  public static ScheduleEntry fromBytes(byte[] bytes) {
    if (bytes.length != SIZE || bytes[0] != VERSION_1) {
      throw new IllegalArgumentException(
          "unknown schedule entry version "
              + (bytes.length == 0 ? "(empty)" : Byte.toString(bytes[0]))
              + " ("
              + bytes.length
              + " bytes)");
    }
    ByteBuffer in = ByteBuffer.wrap(bytes, 1, SIZE - 1);
    int state = in.get();
    if (state < 0 || state >= STATES.length) {
      throw new IllegalArgumentException("unknown schedule entry state " + state);
    }
    return new ScheduleEntry(STATES[state], in.getLong(), in.getLong());
  }
}

package dev.kdelay.topology.internals.store;

import dev.kdelay.schemas.StoredTask;
import dev.kdelay.schemas.StoredTaskCodec;
import dev.kdelay.schemas.StoredTaskSummary;
import dev.kdelay.topology.Decoded;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * What the schedule store holds for one id, its only entry: the schedule's state, its time, the
 * request that set it (its timestamp, and what it was: see {@link Origin}) and, while the schedule
 * is live, the stored task. The value of the store and of its changelog, which is keyed by schedule
 * id.
 *
 * <pre>
 * u8   format           = {@value #FORMAT_3}   ({@value #FORMAT_2}: without the origin)
 * u8   state            (State ordinal)
 * i64  time ms          SCHEDULED: due; CANCELLED, FIRED: expiry; PAUSED: the due time of the
 *                       occurrence a trigger fired while paused, else {@code Long.MAX_VALUE}
 * i64  request ms       timestamp of the request that set this state
 * u8   origin source    format 3: where that request was read ({@link Origin#source})
 * i64  origin digest    format 3: what it was ({@link Origin#digest})
 * ...  stored task      SCHEDULED, PAUSED: {@link StoredTaskCodec} bytes; markers: nothing
 * </pre>
 *
 * <p>The first {@value #HEADER_BYTES} bytes, the same in both formats, say where the entry sits in
 * the due index, so the store indexes an entry without decoding the rest. Entries of format 2,
 * written by earlier versions, read with an {@linkplain Origin#UNKNOWN unknown} origin; this
 * version writes format 3, which earlier versions cannot read.
 *
 * @param state the schedule's state
 * @param timeMs its due time, or a marker's expiry
 * @param requestMs the timestamp of the request that set this state
 * @param origin what that request was, to tell ties between requests of the same millisecond
 * @param task the encoded stored task; empty for markers
 */
public record ScheduleEntry(State state, long timeMs, long requestMs, Origin origin, byte[] task) {

  /** The format byte of entries without an origin, as earlier versions wrote them. */
  public static final byte FORMAT_2 = 2;

  /** The format byte of the layout above. */
  public static final byte FORMAT_3 = 3;

  /** The bytes both formats start with: format, state, time and request time. */
  public static final int HEADER_BYTES = 2 + 2 * Long.BYTES;

  /** The bytes before the stored task in format 3. */
  public static final int FORMAT_3_HEADER_BYTES = HEADER_BYTES + 1 + Long.BYTES;

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

  /**
   * What the request that set an entry's state was, beyond its timestamp: where it was read and a
   * digest of its content. Requests for an id apply in timestamp order; of two stamped in the same
   * millisecond, one with the same content is a duplicate (a producer's retry, a dead letter
   * replayed twice), and one read from the same topic came later in the log.
   *
   * @param source {@link #REQUESTS}, {@link #REROUTED} or {@link #NONE}
   * @param digest a 64-bit digest of the request's key, value and headers (kdelay's own left out)
   */
  public record Origin(byte source, long digest) {

    /** Read from the request topic. */
    public static final byte REQUESTS = 1;

    /** Read from the reroute topic: rerouted, or sent round it while its id's write was held. */
    public static final byte REROUTED = 2;

    /** Not known: an entry of format 2, or a request from another source. */
    public static final byte NONE = 0;

    /** The origin of an entry written by an earlier version. */
    public static final Origin UNKNOWN = new Origin(NONE, 0);

    /** Whether the origin is known. */
    public boolean known() {
      return source != NONE;
    }
  }

  /** An entry whose origin is not known, as an earlier version wrote it. */
  public ScheduleEntry(State state, long timeMs, long requestMs, byte[] task) {
    this(state, timeMs, requestMs, Origin.UNKNOWN, task);
  }

  /** A live entry. */
  public static ScheduleEntry scheduled(
      long dueMs, long requestMs, Origin origin, StoredTask task) {
    return new ScheduleEntry(
        State.SCHEDULED, dueMs, requestMs, origin, StoredTaskCodec.encode(task));
  }

  /** A marker that expires at {@code expiryMs}. */
  public static ScheduleEntry marker(State state, long expiryMs, long requestMs, Origin origin) {
    return new ScheduleEntry(state, expiryMs, requestMs, origin, NO_TASK);
  }

  /** The time of a paused entry whose schedule no trigger fired while it was paused. */
  public static final long NOT_TRIGGERED = Long.MAX_VALUE;

  /**
   * This entry, paused by a request: the same task, and the last occurrence a resume or a trigger
   * must start after. One paused already keeps it (the occurrence a trigger fired while it was
   * paused). One running keeps the moment before its next due time: every earlier occurrence fired
   * or was passed over, also one a trigger fired ahead of its time, which would otherwise fire
   * again when resumed before its due time.
   */
  public ScheduleEntry paused(long byRequestMs, Origin byOrigin) {
    return new ScheduleEntry(
        State.PAUSED, state == State.PAUSED ? timeMs : timeMs - 1, byRequestMs, byOrigin, task);
  }

  /**
   * A paused entry whose occurrence due at {@code triggeredMs} a trigger fired: a resume or the
   * next trigger starts after it.
   */
  public static ScheduleEntry pausedAfter(
      long triggeredMs, long requestMs, Origin origin, StoredTask task) {
    return new ScheduleEntry(
        State.PAUSED, triggeredMs, requestMs, origin, StoredTaskCodec.encode(task));
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

  /** The binary form, format 3. */
  public byte[] toBytes() {
    return toBytes(FORMAT_3);
  }

  /**
   * The binary form in a format: {@link #FORMAT_3}, or {@link #FORMAT_2} (without the origin, which
   * earlier versions read) while a rolling upgrade still runs them.
   */
  public byte[] toBytes(byte format) {
    if (format == FORMAT_2) {
      return ByteBuffer.allocate(HEADER_BYTES + task.length)
          .put(FORMAT_2)
          .put((byte) state.ordinal())
          .putLong(timeMs)
          .putLong(requestMs)
          .put(task)
          .array();
    }
    if (format != FORMAT_3) {
      throw new IllegalArgumentException("no schedule entry format " + format);
    }
    return ByteBuffer.allocate(FORMAT_3_HEADER_BYTES + task.length)
        .put(FORMAT_3)
        .put((byte) state.ordinal())
        .putLong(timeMs)
        .putLong(requestMs)
        .put(origin.source())
        .putLong(origin.digest())
        .put(task)
        .array();
  }

  /** Reads an entry; unreadable if the format or the state is unknown, or it is too short. */
  public static Decoded<ScheduleEntry> decode(byte[] bytes) {
    String damage = damage(bytes);
    if (damage != null) {
      return Decoded.unreadable(damage);
    }
    ByteBuffer in = ByteBuffer.wrap(bytes, 2, bytes.length - 2);
    long time = in.getLong();
    long request = in.getLong();
    Origin origin = Origin.UNKNOWN;
    if (bytes[0] == FORMAT_3) {
      origin = new Origin(in.get(), in.getLong());
    }
    return Decoded.readable(
        new ScheduleEntry(
            STATES[bytes[1]],
            time,
            request,
            origin,
            Arrays.copyOfRange(bytes, headerBytes(bytes[0]), bytes.length)));
  }

  /** Why the header of an entry cannot be read, or null if it can. */
  static String damage(byte[] bytes) {
    if (bytes.length < HEADER_BYTES) {
      return "schedule entry of " + bytes.length + " bytes, shorter than its header";
    }
    if (bytes[0] != FORMAT_2 && bytes[0] != FORMAT_3) {
      return "unknown schedule entry format "
          + bytes[0]
          + "; this reader knows "
          + FORMAT_2
          + " and "
          + FORMAT_3
          + " (state written by another kdelay version?)";
    }
    int header = headerBytes(bytes[0]);
    if (bytes.length < header) {
      return "schedule entry of " + bytes.length + " bytes, shorter than its header";
    }
    if (bytes[1] < 0 || bytes[1] >= STATES.length) {
      return "unknown schedule entry state " + bytes[1];
    }
    if (STATES[bytes[1]].marker() != (bytes.length == header)) {
      return STATES[bytes[1]] + " entry of " + bytes.length + " bytes";
    }
    // One range check, not a comparison with each origin: compiled code then takes the same branch
    // whatever the origin, where one that had seen a single origin (the start-up warm-up's) was
    // thrown away at the first entry of another (an unstable_if deoptimization, JFR).
    if (bytes[0] == FORMAT_3
        && (bytes[HEADER_BYTES] < Origin.NONE || bytes[HEADER_BYTES] > Origin.REROUTED)) {
      return "unknown schedule entry origin " + bytes[HEADER_BYTES];
    }
    return null;
  }

  private static int headerBytes(byte format) {
    return format == FORMAT_3 ? FORMAT_3_HEADER_BYTES : HEADER_BYTES;
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
        && origin.equals(that.origin)
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

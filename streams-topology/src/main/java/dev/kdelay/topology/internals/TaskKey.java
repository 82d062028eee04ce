package dev.kdelay.topology.internals;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;
import org.apache.kafka.common.utils.Bytes;

/**
 * The key of an entry in the task store: entries sort by due time, then kind, then schedule id.
 *
 * <pre>
 * i64  due ms, big-endian, sign bit flipped  (so that byte order is numeric order)
 * u8   kind                                  {@value #KIND_FIRE}: fire a task
 *                                            {@value #KIND_EXPIRE}: forget a cancel marker
 *                                            {@value #KIND_PAUSED}: a paused schedule
 * ...  schedule id, UTF-8
 * </pre>
 *
 * <p>A bare 8-byte due prefix sorts before every entry with that due time, which makes it a range
 * bound: {@code [prefix(a), prefix(b)]} holds exactly the entries due in {@code [a, b)}.
 *
 * @param dueMs the due time, epoch milliseconds
 * @param kind what the entry does when it comes due
 * @param id the schedule id
 */
public record TaskKey(long dueMs, byte kind, String id) {

  /** An entry that fires a schedule's occurrence. */
  public static final byte KIND_FIRE = 0;

  /** An entry that forgets a cancel marker whose retention has passed. */
  public static final byte KIND_EXPIRE = 1;

  /**
   * A paused recurring schedule, parked at the end of time where no scan for due entries reaches
   * it; resume moves it back.
   */
  public static final byte KIND_PAUSED = 2;

  static final int DUE_BYTES = Long.BYTES;
  private static final int HEADER_BYTES = DUE_BYTES + 1;

  /** Creates a key. */
  public TaskKey {
    Objects.requireNonNull(id, "id cannot be null");
  }

  /** A key of kind {@link #KIND_FIRE}. */
  public static TaskKey fire(long dueMs, String id) {
    return new TaskKey(dueMs, KIND_FIRE, id);
  }

  /** The parking key of a paused schedule. */
  public static TaskKey paused(String id) {
    return new TaskKey(Long.MAX_VALUE, KIND_PAUSED, id);
  }

  /** The binary form. */
  public Bytes toBytes() {
    byte[] idBytes = id.getBytes(StandardCharsets.UTF_8);
    ByteBuffer buffer = ByteBuffer.allocate(HEADER_BYTES + idBytes.length);
    buffer.putLong(dueMs ^ Long.MIN_VALUE).put(kind).put(idBytes);
    return Bytes.wrap(buffer.array());
  }

  /** Reads a key from its binary form. */
  public static TaskKey fromBytes(Bytes bytes) {
    byte[] raw = bytes.get();
    String id = new String(raw, HEADER_BYTES, raw.length - HEADER_BYTES, StandardCharsets.UTF_8);
    return new TaskKey(dueOf(raw), raw[DUE_BYTES], id);
  }

  /** The due time of a key in binary form, without decoding the rest. */
  public static long dueOf(byte[] raw) {
    return ByteBuffer.wrap(raw, 0, DUE_BYTES).getLong() ^ Long.MIN_VALUE;
  }

  /** The 8-byte prefix that sorts before every key due at {@code dueMs}. */
  public static Bytes prefix(long dueMs) {
    return Bytes.wrap(ByteBuffer.allocate(DUE_BYTES).putLong(dueMs ^ Long.MIN_VALUE).array());
  }

  /** Whether a binary key sorts before another. */
  static boolean before(byte[] a, byte[] b) {
    return Arrays.compareUnsigned(a, b) < 0;
  }
}

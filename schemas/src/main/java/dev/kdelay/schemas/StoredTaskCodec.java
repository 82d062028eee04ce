package dev.kdelay.schemas;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.DateTimeException;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.OptionalLong;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.utils.Utils;

/**
 * The binary form of a {@link StoredTask}, kept in the schedule store's entries and their
 * changelog.
 *
 * <p>Layout of version 1, all integers big-endian; {@code str} is an {@code i32} byte length and
 * UTF-8 bytes, {@code bytes} an {@code i32} length ({@value #NULL_LENGTH} for null) and the bytes:
 *
 * <pre>
 * u8     version              = {@value #VERSION_1}
 * u8     flags                bit 0 {@value #FLAG_TARGET_KEY}: target key present
 *                             bit 1 {@value #FLAG_PARTITION}: target partition present
 *                             bit 2 {@value #FLAG_PAYLOAD}: payload present (absent: tombstone)
 *                             bit 3 {@value #FLAG_CRON}: recurring (cron) schedule
 * str    target topic
 * bytes  target key           if FLAG_TARGET_KEY
 * i32    target partition     if FLAG_PARTITION
 * bytes  payload              if FLAG_PAYLOAD
 * i32    carried header count, then per header: str name, bytes value
 * i64    due ms               one-shot only
 * str    cron expression      cron only, and the next six fields
 * u8     cron flavour         (CronFlavor ordinal)
 * str    zone id
 * i64    start at ms          (Long.MIN_VALUE: none)
 * i64    end at ms            (Long.MAX_VALUE: none)
 * i64    max fires            (0: unlimited)
 * u8     misfire              (Misfire ordinal)
 * i64    occurrence           1-based
 * </pre>
 *
 * <p>Version {@value #VERSION_2} is version 1 with one more field at the end, written only for a
 * task a fire-rate limit deferred ({@link StoredTask#deferredDueMs}); every other task is still
 * written as version 1, which a kdelay that knows only version 1 reads:
 *
 * <pre>
 * i64    deferred due ms      the due time of the occurrence deferred
 * </pre>
 *
 * <p>A reader rejects versions it does not know rather than guessing; a new layout gets a new
 * version byte and readers keep decoding the old ones.
 */
public final class StoredTaskCodec {

  /** The version byte of the layout above. */
  public static final byte VERSION_1 = 1;

  /** The version byte of a deferred task's layout: version 1's, then its deferred due time. */
  public static final byte VERSION_2 = 2;

  static final int FLAG_TARGET_KEY = 0x01;
  static final int FLAG_PARTITION = 0x02;
  static final int FLAG_PAYLOAD = 0x04;
  static final int FLAG_CRON = 0x08;
  static final int NULL_LENGTH = -1;
  private static final int KNOWN_FLAGS =
      FLAG_TARGET_KEY | FLAG_PARTITION | FLAG_PAYLOAD | FLAG_CRON;

  private StoredTaskCodec() {}

  /**
   * Encodes a task.
   *
   * @param task the task
   * @return its binary form
   */
  public static byte[] encode(StoredTask task) {
    Schedule schedule = task.schedule();
    Target target = schedule.target();
    Writer out = new Writer();
    out.u8(task.deferredDueMs().isPresent() ? VERSION_2 : VERSION_1);
    out.u8(flags(schedule));
    out.str(target.topic());
    if (target.key() != null) {
      out.bytes(target.key());
    }
    if (target.partition().isPresent()) {
      out.i32(target.partition().getAsInt());
    }
    if (schedule.payload() != null) {
      out.bytes(schedule.payload());
    }
    out.i32(schedule.headers().size());
    for (Header header : schedule.headers()) {
      out.str(header.key());
      out.bytes(header.value());
    }
    if (schedule.timing() instanceof CronSpec cron) {
      writeCron(out, cron);
    } else {
      out.i64(((Timing.Once) schedule.timing()).dueMs());
    }
    out.i64(task.occurrence());
    if (task.deferredDueMs().isPresent()) {
      out.i64(task.deferredDueMs().getAsLong());
    }
    return out.toByteArray();
  }

  /**
   * The length of a task's binary form, without encoding it: lets a request be refused before a
   * changelog record too large for the producer is ever written.
   *
   * @param task the task
   * @return {@code encode(task).length}
   */
  public static int encodedLength(StoredTask task) {
    Schedule schedule = task.schedule();
    Target target = schedule.target();
    long length = 2 + strLength(target.topic());
    length += target.key() != null ? bytesLength(target.key()) : 0;
    length += target.partition().isPresent() ? 4 : 0;
    length += schedule.payload() != null ? bytesLength(schedule.payload()) : 0;
    length += 4;
    for (Header header : schedule.headers()) {
      length += strLength(header.key()) + bytesLength(header.value());
    }
    if (schedule.timing() instanceof CronSpec cron) {
      length += strLength(cron.expression()) + 1 + strLength(cron.zone().getId()) + 3 * 8 + 1;
    } else {
      length += 8;
    }
    length += 8; // the occurrence
    length += task.deferredDueMs().isPresent() ? 8 : 0;
    return (int) Math.min(Integer.MAX_VALUE, length);
  }

  private static long strLength(String value) {
    return 4 + Utils.utf8Length(value);
  }

  private static long bytesLength(byte[] value) {
    return 4 + (value == null ? 0 : value.length);
  }

  /**
   * The due time a task in binary form fires as, read without decoding it: a deferred task's own
   * (version {@value #VERSION_2} ends with it), else {@code entryTimeMs}, the time its entry is due
   * at. Bytes that are not a task of a known version give {@code entryTimeMs}; decoding them fails
   * where it is reported.
   */
  public static long firesAsDueMs(byte[] data, long entryTimeMs) {
    if (data.length > Long.BYTES && data[0] == VERSION_2) {
      return ByteBuffer.wrap(data, data.length - Long.BYTES, Long.BYTES).getLong();
    }
    return entryTimeMs;
  }

  /**
   * Decodes a task.
   *
   * @param data the binary form
   * @return the task
   * @throws IllegalArgumentException if the version is unknown or the data is malformed
   */
  public static StoredTask decode(byte[] data) {
    ByteBuffer in = ByteBuffer.wrap(data);
    try {
      byte version = version(in);
      int flags = flags(in, version);
      Target target = target(in, flags);
      byte[] payload = (flags & FLAG_PAYLOAD) != 0 ? bytes(in) : null;
      List<Header> headers = headers(in);
      Timing timing = (flags & FLAG_CRON) != 0 ? readCron(in) : new Timing.Once(in.getLong());
      long occurrence = in.getLong();
      OptionalLong deferredDueMs = deferredDueMs(in, version);
      if (in.hasRemaining()) {
        throw new IllegalArgumentException(in.remaining() + " trailing bytes in stored task");
      }
      Schedule schedule = new Schedule(target, timing, payload, headers);
      return new StoredTask(schedule, occurrence, deferredDueMs);
    } catch (BufferUnderflowException | IndexOutOfBoundsException | DateTimeException e) {
      throw new IllegalArgumentException("malformed stored task: " + e, e);
    }
  }

  /**
   * Reads what a listing shows of a task, skipping over its payload and carried headers instead of
   * copying them.
   *
   * @param data the binary form
   * @return the summary
   * @throws IllegalArgumentException if the version is unknown or the data is malformed
   */
  public static StoredTaskSummary summarize(byte[] data) {
    ByteBuffer in = ByteBuffer.wrap(data);
    try {
      byte version = version(in);
      int flags = flags(in, version);
      Target target = target(in, flags);
      int payloadBytes = (flags & FLAG_PAYLOAD) != 0 ? skip(in) : StoredTaskSummary.NO_PAYLOAD;
      int headerCount = headerCount(in);
      for (int i = 0; i < headerCount; i++) {
        skip(in);
        skip(in);
      }
      Timing timing = (flags & FLAG_CRON) != 0 ? readCron(in) : new Timing.Once(in.getLong());
      long occurrence = in.getLong();
      OptionalLong deferredDueMs = deferredDueMs(in, version);
      if (in.hasRemaining()) {
        throw new IllegalArgumentException(in.remaining() + " trailing bytes in stored task");
      }
      if (occurrence < 1) {
        throw new IllegalArgumentException("occurrence must be >= 1, got " + occurrence);
      }
      return new StoredTaskSummary(
          target, timing, payloadBytes, headerCount, occurrence, deferredDueMs);
    } catch (BufferUnderflowException | IndexOutOfBoundsException | DateTimeException e) {
      throw new IllegalArgumentException("malformed stored task: " + e, e);
    }
  }

  /** Reads the version byte, which must be {@link #VERSION_1} or {@link #VERSION_2}. */
  private static byte version(ByteBuffer in) {
    byte version = in.get();
    if (version != VERSION_1 && version != VERSION_2) {
      throw new IllegalArgumentException(
          "unknown stored task version "
              + version
              + "; this reader knows "
              + VERSION_1
              + " and "
              + VERSION_2);
    }
    return version;
  }

  /** Reads the flags, which the reader must know. */
  private static int flags(ByteBuffer in, byte version) {
    int flags = in.get();
    if ((flags & ~KNOWN_FLAGS) != 0) {
      throw new IllegalArgumentException(
          "unknown flags 0x"
              + Integer.toHexString(flags & 0xff)
              + " in stored task version "
              + version);
    }
    return flags;
  }

  /** Reads the deferred due time that version 2 ends with; version 1 has none. */
  private static OptionalLong deferredDueMs(ByteBuffer in, byte version) {
    return version == VERSION_2 ? OptionalLong.of(in.getLong()) : OptionalLong.empty();
  }

  /** Reads the target: topic, then the key and partition the flags say are present. */
  private static Target target(ByteBuffer in, int flags) {
    String topic = str(in);
    byte[] key = (flags & FLAG_TARGET_KEY) != 0 ? bytes(in) : null;
    OptionalInt partition =
        (flags & FLAG_PARTITION) != 0 ? OptionalInt.of(in.getInt()) : OptionalInt.empty();
    return new Target(topic, key, partition);
  }

  /** Steps over a length-prefixed field; returns its length (0 for null). */
  private static int skip(ByteBuffer in) {
    int length = in.getInt();
    if (length == NULL_LENGTH) {
      return 0;
    }
    if (length < 0 || length > in.remaining()) {
      throw new IllegalArgumentException("bad length " + length);
    }
    in.position(in.position() + length);
    return length;
  }

  private static int flags(Schedule schedule) {
    Target target = schedule.target();
    return (target.key() != null ? FLAG_TARGET_KEY : 0)
        | (target.partition().isPresent() ? FLAG_PARTITION : 0)
        | (schedule.payload() != null ? FLAG_PAYLOAD : 0)
        | (schedule.recurring() ? FLAG_CRON : 0);
  }

  private static void writeCron(Writer out, CronSpec cron) {
    out.str(cron.expression());
    out.u8(cron.flavor().ordinal());
    out.str(cron.zone().getId());
    out.i64(cron.startAtMs());
    out.i64(cron.endAtMs());
    out.i64(cron.maxFires());
    out.u8(cron.misfire().ordinal());
  }

  private static CronSpec readCron(ByteBuffer in) {
    String expression = str(in);
    CronFlavor flavor = CronFlavor.values()[in.get()];
    ZoneId zone = ZoneId.of(str(in));
    long startAt = in.getLong();
    long endAt = in.getLong();
    long maxFires = in.getLong();
    Misfire misfire = Misfire.values()[in.get()];
    return new CronSpec(expression, flavor, zone, startAt, endAt, maxFires, misfire);
  }

  private static int headerCount(ByteBuffer in) {
    int count = in.getInt();
    if (count < 0 || count > in.remaining()) {
      throw new IllegalArgumentException("bad header count " + count);
    }
    return count;
  }

  private static List<Header> headers(ByteBuffer in) {
    int count = headerCount(in);
    List<Header> headers = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      headers.add(new RecordHeader(str(in), bytes(in)));
    }
    return headers;
  }

  private static String str(ByteBuffer in) {
    byte[] utf8 = bytes(in);
    if (utf8 == null) {
      throw new IllegalArgumentException("null string");
    }
    return new String(utf8, StandardCharsets.UTF_8);
  }

  private static byte[] bytes(ByteBuffer in) {
    int length = in.getInt();
    if (length == NULL_LENGTH) {
      return null;
    }
    if (length < 0 || length > in.remaining()) {
      throw new IllegalArgumentException("bad length " + length);
    }
    byte[] bytes = new byte[length];
    in.get(bytes);
    return bytes;
  }

  /** A growable big-endian writer; sized for the common case of a small payload. */
  private static final class Writer {
    private ByteBuffer buffer = ByteBuffer.allocate(256);

    void u8(int value) {
      ensure(1).put((byte) value);
    }

    void i32(int value) {
      ensure(4).putInt(value);
    }

    void i64(long value) {
      ensure(8).putLong(value);
    }

    void str(String value) {
      bytes(value.getBytes(StandardCharsets.UTF_8));
    }

    void bytes(byte[] value) {
      if (value == null) {
        i32(NULL_LENGTH);
        return;
      }
      ensure(4 + value.length).putInt(value.length).put(value);
    }

    private ByteBuffer ensure(int more) {
      if (buffer.remaining() < more) {
        int capacity = Math.max(buffer.capacity() * 2, buffer.position() + more);
        ByteBuffer grown = ByteBuffer.allocate(capacity);
        buffer.flip();
        grown.put(buffer);
        buffer = grown;
      }
      return buffer;
    }

    byte[] toByteArray() {
      byte[] out = new byte[buffer.position()];
      buffer.flip();
      buffer.get(out);
      return out;
    }
  }
}

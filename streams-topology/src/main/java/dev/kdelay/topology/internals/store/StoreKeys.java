package dev.kdelay.topology.internals.store;

import dev.kdelay.topology.internals.store.ScheduleEntry.State;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.rocksdb.RocksIterator;

/**
 * The keys of the schedule store's RocksDB instance: one key space, split by a leading byte.
 *
 * <pre>
 * {@value #ENTRY}   id                       an id's {@link ScheduleEntry}; the changelog holds these
 * {@value #DUE}   i64 due ms    id         due index: a SCHEDULED entry, in firing order (empty value)
 * {@value #EXPIRY}   i64 expiry ms id         sweep index: a marker, in expiry order (empty value)
 * {@value #FORMAT}  "format"                 the layout's format byte, {@link ScheduleEntry#FORMAT_2}
 * </pre>
 *
 * <p>An entry whose header cannot be read (a damaged store, or a newer kdelay's format) sits in the
 * due index at {@value #UNREADABLE_DUE_MS}, its start: the next punctuation finds it and
 * dead-letters it as {@code UNREADABLE_TASK}, so that nothing stored is left behind silently.
 *
 * <p>Times are big-endian with the sign bit flipped, so that byte order is numeric order; ids are
 * UTF-8. The indexes are derived from the entries (the header of each says where it sits), written
 * in the same write batch, rebuilt on restore, and never changelogged. A bare prefix of kind and
 * time sorts before every index key of that time, which makes it a range bound.
 */
public final class StoreKeys {

  static final byte ENTRY = 0;
  static final byte DUE = 1;
  static final byte EXPIRY = 2;
  static final byte FORMAT = 0x7f;

  static final byte[] FORMAT_KEY = {FORMAT, 'f', 'o', 'r', 'm', 'a', 't'};

  /** The due time an entry whose header cannot be read is indexed at. */
  static final long UNREADABLE_DUE_MS = 0;

  private static final int INDEX_HEADER = 1 + Long.BYTES;

  /** No index kind: the entry owns no index key. */
  private static final byte NONE = -1;

  private static final byte[] NO_POSITION = new byte[0];

  private StoreKeys() {}

  public static byte[] entry(byte[] id) {
    byte[] key = new byte[1 + id.length];
    key[0] = ENTRY;
    System.arraycopy(id, 0, key, 1, id.length);
    return key;
  }

  /** The id of an entry key. */
  static byte[] idOfEntry(byte[] key) {
    return Arrays.copyOfRange(key, 1, key.length);
  }

  static byte[] index(byte kind, long timeMs, byte[] id) {
    return ByteBuffer.allocate(INDEX_HEADER + id.length)
        .put(kind)
        .putLong(timeMs ^ Long.MIN_VALUE)
        .put(id)
        .array();
  }

  /** The bound that sorts before every index key of this kind and time. */
  static byte[] indexPrefix(byte kind, long timeMs) {
    return ByteBuffer.allocate(INDEX_HEADER).put(kind).putLong(timeMs ^ Long.MIN_VALUE).array();
  }

  static long timeOfIndex(byte[] key) {
    return ByteBuffer.wrap(key, 1, Long.BYTES).getLong() ^ Long.MIN_VALUE;
  }

  static byte[] idOfIndex(byte[] key) {
    return Arrays.copyOfRange(key, INDEX_HEADER, key.length);
  }

  /** The index key an entry owns, or null if it owns none (a paused one, or none at all). */
  static byte[] indexOf(byte[] id, byte[] entry) {
    byte kind = indexKindOf(entry);
    return kind == NONE ? null : index(kind, indexTimeOf(entry), id);
  }

  /**
   * Where an entry sits in the indexes: the kind and time of the index key it owns, that is the key
   * without its id; empty if it owns none. The changelog carries it for the entry a change replaced
   * ({@link ScheduleChangelog#REPLACES_HEADER}), so that a restore deletes that index key without
   * reading the entry first.
   */
  public static byte[] positionOf(byte[] entry) {
    byte kind = indexKindOf(entry);
    return kind == NONE ? NO_POSITION : indexPrefix(kind, indexTimeOf(entry));
  }

  /** Whether bytes are a {@linkplain #positionOf position}: empty, or an index kind and a time. */
  static boolean isPosition(byte[] bytes) {
    return bytes.length == 0
        || (bytes.length == INDEX_HEADER && (bytes[0] == DUE || bytes[0] == EXPIRY));
  }

  /** The index key at a {@linkplain #isPosition position} for an id, or null for the empty one. */
  static byte[] indexAt(byte[] position, byte[] id) {
    if (position.length == 0) {
      return null;
    }
    byte[] key = Arrays.copyOf(position, INDEX_HEADER + id.length);
    System.arraycopy(id, 0, key, INDEX_HEADER, id.length);
    return key;
  }

  /** The kind of index key an entry owns, or {@link #NONE}. */
  private static byte indexKindOf(byte[] entry) {
    if (entry == null) {
      return NONE;
    }
    if (ScheduleEntry.damage(entry) != null) {
      return DUE;
    }
    State state = ScheduleEntry.stateOf(entry);
    if (state == State.PAUSED) {
      return NONE;
    }
    return state.marker() ? EXPIRY : DUE;
  }

  /** The time of the index key an entry owns: its own, or for one that cannot be read, 0. */
  private static long indexTimeOf(byte[] entry) {
    return ScheduleEntry.damage(entry) != null ? UNREADABLE_DUE_MS : ScheduleEntry.timeOf(entry);
  }

  /** The smallest key greater than {@code key}. */
  public static byte[] successor(byte[] key) {
    return Arrays.copyOf(key, key.length + 1);
  }

  /** The time of the first index key of a kind at or after {@code from}, or Long.MAX_VALUE. */
  static long firstIndexed(RocksIterator scan, byte[] from, byte kind) {
    scan.seek(from);
    return scan.isValid() && scan.key()[0] == kind ? timeOfIndex(scan.key()) : Long.MAX_VALUE;
  }

  static boolean before(byte[] a, byte[] b) {
    return Arrays.compareUnsigned(a, b) < 0;
  }
}

package dev.kdelay.topology.internals.store;

import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.utils.Bytes;

/**
 * Writes collected to be made in one write batch ({@link StagedWrites}), with the entries they
 * leave by id, which a lookup reads before RocksDB. One call into RocksDB for up to {@link
 * #MAX_WRITES} writes or {@link #MAX_BYTES} bytes instead of one per request or fire: on the store
 * alone, a new id's lookup and write took 4.9-5.5 µs against 5.5-7.6 µs made one by one.
 *
 * <p>Not thread-safe: the store calls it holding its lock.
 */
final class CollectedWrites {

  /** Writes collected at most before they are made, whatever their size. */
  static final int MAX_WRITES = 4_096;

  /** Bytes of keys and values collected at most before they are made. */
  static final long MAX_BYTES = 4L * 1024 * 1024;

  /** What {@link #entryOf} answers for an id whose collected write deletes its entry. */
  static final byte[] DELETED = new byte[0];

  private StagedWrites writes = new StagedWrites();

  /** The entries the collected writes leave, by id: a value, or {@link #DELETED}. */
  private final Map<Bytes, byte[]> entries = new HashMap<>();

  /**
   * Collects an id's new entry, and the removal of {@code oldIndex}, the index key of the entry it
   * replaces (see {@link StagedWrites#entry}).
   */
  void entry(byte[] id, byte[] oldIndex, byte[] next, IndexBounds bounds) {
    writes.entry(id, oldIndex, next, bounds);
    entries.put(Bytes.wrap(id), next == null ? DELETED : next);
  }

  /** The entry the collected writes leave for an id: the entry, {@link #DELETED}, or null. */
  byte[] entryOf(Bytes id) {
    return entries.isEmpty() ? null : entries.get(id);
  }

  boolean contains(Bytes id) {
    return entries.containsKey(id);
  }

  /** Whether enough is collected to make it now. */
  boolean full() {
    return writes.count() >= MAX_WRITES || writes.bytes() >= MAX_BYTES;
  }

  boolean isEmpty() {
    return writes.isEmpty();
  }

  /** Where other writes join the collected ones (the entries kept in memory only, on their way). */
  StagedWrites staged() {
    return writes;
  }

  /** The collected writes, to make now; what was collected is forgotten. */
  StagedWrites take() {
    StagedWrites taken = writes;
    writes = new StagedWrites();
    entries.clear();
    return taken;
  }
}

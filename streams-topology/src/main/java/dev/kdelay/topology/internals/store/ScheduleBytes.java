package dev.kdelay.topology.internals.store;

import java.util.List;
import org.apache.kafka.streams.processor.StateStore;

/**
 * The bytes level of the schedule store, as each layer under the typed {@link MeteredScheduleStore}
 * offers it: ids as UTF-8 bytes, entries in their binary form ({@link ScheduleEntry}). {@link
 * RocksDBScheduleStore} keeps them in RocksDB; {@link ChangeLoggingScheduleStore} logs each write
 * on the way down. The layers are composed in {@link ScheduleStoreBuilder#build}.
 */
public interface ScheduleBytes extends StateStore {

  /**
   * An entry a scan found.
   *
   * @param id the schedule id, UTF-8
   * @param dueMs its due time
   * @param entry the entry, in binary form
   */
  record Due(byte[] id, long dueMs, byte[] entry) {}

  /**
   * What a listing scan read.
   *
   * @param entries ids and entries in due order
   * @param complete false if it stopped at its byte budget while more was due before its bound
   */
  record Listing(List<Due> entries, boolean complete) {}

  /** Receives the entries {@link #scanEntries} walks. */
  @FunctionalInterface
  interface EntryVisitor {
    /** One stored id and its entry, in binary form. */
    void visit(byte[] id, byte[] entry);
  }

  /** The entry of an id in binary form, or null. */
  byte[] get(byte[] id);

  /**
   * Looks up, together, ids that {@link #get} is about to be asked for (the requests a poll
   * returned), so that each of those lookups is answered from memory. A hint: what it learnt is
   * forgotten as soon as anything could change it.
   */
  void readAhead(List<byte[]> ids);

  /**
   * Replaces an id's entry and its index keys in one write batch: collected, and made with the
   * writes around it, before any read that needs it. Reads always see every write.
   *
   * @param id the schedule id, UTF-8
   * @param previous the entry the caller read for the id, or null if it had none
   * @param next the new entry, or null to delete the id's entry
   */
  void write(byte[] id, byte[] previous, byte[] next);

  /**
   * The entries due at or before {@code nowMs} in due order, after {@code after} if given, bounded
   * in count and stored bytes; the scan is closed when this returns.
   */
  List<Due> due(long nowMs, int maxCount, long maxBytes, byte[] after);

  /**
   * An entry a due scan returned was left as it is (it waits): later scans must find it again, as
   * if its index key {@code dueKey} had just been written.
   */
  void leftDue(byte[] dueKey);

  /** Whether anything may be due at {@code nowMs}; answered from memory. */
  boolean mayHaveDue(long nowMs);

  /** A lower bound of the earliest due time. */
  long nextDue();

  /** Whether a marker may have expired at {@code nowMs}; answered from memory. */
  boolean mayHaveExpired(long nowMs);

  /** Forgets up to {@code max} expired markers, locally. */
  int sweep(long nowMs, int max);

  /** Tasks waiting to fire in due order, from an index key, for listings. */
  Listing listDue(byte[] from, long dueBeforeMs, int limit, long maxBytes);

  /**
   * Walks the stored entries in id order after {@code afterId} (null: from the first), at most
   * {@code max} of them.
   *
   * @return the last id visited, or null if none was left
   */
  byte[] scanEntries(byte[] afterId, int max, EntryVisitor visitor);
}

package dev.kdelay.topology.internals;

import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The task store, typed: entries keyed by {@link TaskKey} in due order. Keeps a lower bound of the
 * earliest due time in memory, so that a punctuation with nothing due touches no disk.
 *
 * <p>Runs on the stream thread only.
 */
public final class TaskStore {

  /** Visits one due entry; the store deletes the entry after the visit. */
  @FunctionalInterface
  public interface DueVisitor {
    /**
     * Handles a due entry.
     *
     * @param key the entry's key
     * @param value the entry's value
     */
    void visit(TaskKey key, byte[] value);
  }

  private static final long UNKNOWN = Long.MIN_VALUE;

  private final KeyValueStore<Bytes, byte[]> store;

  /** No entry is due before this; {@link #UNKNOWN} until the first look after a (re)start. */
  private long nextDue = UNKNOWN;

  /**
   * Wraps a store.
   *
   * @param store the (logged) bytes store
   */
  public TaskStore(KeyValueStore<Bytes, byte[]> store) {
    this.store = store;
  }

  /** Adds or overwrites an entry. */
  public void put(TaskKey key, byte[] value) {
    store.put(key.toBytes(), value);
    nextDue = Math.min(nextDue, key.dueMs());
  }

  /** Removes an entry; a no-op if it is absent. */
  public void delete(TaskKey key) {
    store.delete(key.toBytes());
  }

  /** The value of an entry, or null. */
  public byte[] get(TaskKey key) {
    return store.get(key.toBytes());
  }

  /** Whether anything may be due at {@code nowMs}; answered from memory. */
  public boolean mayHaveDue(long nowMs) {
    return nextDue <= nowMs;
  }

  /** The lower bound of the earliest due time kept in memory, for tests and metrics. */
  public long nextDue() {
    return nextDue;
  }

  /**
   * Visits the entries due at or before {@code nowMs} in due order, at most {@code max} of them,
   * deleting each after its visit. Then finds the next due time so that idle punctuations stay in
   * memory.
   *
   * @return how many entries were visited
   */
  public int drainDue(long nowMs, int max, DueVisitor visitor) {
    int visited = 0;
    boolean more = true;
    // Entries a visitor adds (the next occurrence of a cron schedule) lower this again.
    nextDue = Long.MAX_VALUE;
    try (KeyValueIterator<Bytes, byte[]> due =
        store.range(TaskKey.prefix(Long.MIN_VALUE), TaskKey.prefix(nowMs + 1))) {
      while (visited < max && due.hasNext()) {
        KeyValue<Bytes, byte[]> entry = due.next();
        visitor.visit(TaskKey.fromBytes(entry.key), entry.value);
        store.delete(entry.key);
        visited++;
      }
      more = due.hasNext();
    } finally {
      if (more) {
        // Stopped at the limit, or failed: look again at the next punctuation.
        nextDue = Math.min(nextDue, nowMs);
      }
    }
    if (!more) {
      nextDue = Math.min(nextDue, firstDueAfter(nowMs));
    }
    return visited;
  }

  private long firstDueAfter(long nowMs) {
    try (KeyValueIterator<Bytes, byte[]> after = store.range(TaskKey.prefix(nowMs + 1), null)) {
      return after.hasNext() ? TaskKey.dueOf(after.peekNextKey().get()) : Long.MAX_VALUE;
    }
  }
}

package dev.kdelay.service.http;

import dev.kdelay.schemas.StoredTaskCodec;
import dev.kdelay.topology.ScheduleStores;
import dev.kdelay.topology.internals.TaskKey;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * A partition's task store as a listing reads it: its scans leave out the tasks whose stored value
 * cannot be decoded, and note them, so that one corrupt task does not fail a whole page of {@link
 * ScheduleStores#pending}.
 *
 * <p>A stop-gap until the topology's {@code ScheduleStores.pending} reports such tasks itself: it
 * reads {@link TaskKey}, the topology's internal key layout, to tell a task entry from a
 * housekeeping one and to name the id and due time of what it leaves out. Each task a scan passes
 * is decoded twice, here and by {@code pending}; a page is at most 1,000 tasks.
 */
final class ReadableTaskStore implements ReadOnlyKeyValueStore<Bytes, byte[]> {

  /**
   * A task a scan left out.
   *
   * @param id the schedule id
   * @param dueMs when it is due, epoch milliseconds
   * @param error why it cannot be decoded
   */
  record Unreadable(String id, long dueMs, String error) {}

  private final ReadOnlyKeyValueStore<Bytes, byte[]> tasks;
  private final List<Unreadable> unreadable = new ArrayList<>();

  ReadableTaskStore(ReadOnlyKeyValueStore<Bytes, byte[]> tasks) {
    this.tasks = tasks;
  }

  /** The tasks the scans so far left out, in the order they met them. */
  List<Unreadable> unreadable() {
    return List.copyOf(unreadable);
  }

  @Override
  public byte[] get(Bytes key) {
    return tasks.get(key);
  }

  @Override
  public KeyValueIterator<Bytes, byte[]> range(Bytes from, Bytes to) {
    return new Readable(tasks.range(from, to));
  }

  @Override
  public KeyValueIterator<Bytes, byte[]> all() {
    return new Readable(tasks.all());
  }

  @Override
  public long approximateNumEntries() {
    return tasks.approximateNumEntries();
  }

  /** Whether an entry can be listed; notes it if it is a task that cannot be decoded. */
  private boolean readable(KeyValue<Bytes, byte[]> entry) {
    TaskKey key = TaskKey.fromBytes(entry.key);
    if (key.kind() != TaskKey.KIND_FIRE) {
      return true; // housekeeping: never decoded, never listed
    }
    try {
      StoredTaskCodec.decode(entry.value);
      return true;
    } catch (RuntimeException e) {
      unreadable.add(new Unreadable(key.id(), key.dueMs(), e.toString()));
      return false;
    }
  }

  /**
   * Looks ahead only when asked whether there is a next entry, so that a scan that stops after its
   * last task notes nothing beyond it.
   */
  private final class Readable implements KeyValueIterator<Bytes, byte[]> {
    private final KeyValueIterator<Bytes, byte[]> scan;
    private KeyValue<Bytes, byte[]> next;

    Readable(KeyValueIterator<Bytes, byte[]> scan) {
      this.scan = scan;
    }

    @Override
    public boolean hasNext() {
      while (next == null && scan.hasNext()) {
        KeyValue<Bytes, byte[]> entry = scan.next();
        if (readable(entry)) {
          next = entry;
        }
      }
      return next != null;
    }

    @Override
    public KeyValue<Bytes, byte[]> next() {
      if (!hasNext()) {
        throw new NoSuchElementException();
      }
      KeyValue<Bytes, byte[]> entry = next;
      next = null;
      return entry;
    }

    @Override
    public Bytes peekNextKey() {
      if (!hasNext()) {
        throw new NoSuchElementException();
      }
      return next.key;
    }

    @Override
    public void close() {
      scan.close();
    }
  }
}

package dev.kdelay.topology.internals.store;

import java.util.List;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.internals.InternalProcessorContext;
import org.apache.kafka.streams.processor.internals.ProcessorContextUtils;
import org.apache.kafka.streams.state.internals.WrappedStateStore;

/**
 * The change logging of the schedule store: every write goes down to the store it wraps, then to
 * the changelog as one record per change of the id's state ({@link ScheduleChangelog} says what
 * each record holds), the way Kafka Streams' {@code ChangeLoggingKeyValueBytesStore} logs a
 * key-value store. Reads pass through.
 *
 * <p>A marker's expiry is a {@linkplain RocksDBScheduleStore#sweep sweep} of the local store that
 * logs nothing: the changelog already holds a tombstone for the id, and compaction drops it after
 * the topic's {@code delete.retention.ms}, which the builder sets to at least the markers'
 * retention. A restore replays a tombstone's marker into the store, so duplicates stay suppressed
 * across restarts and moves; the sweep then forgets it when it expires. So a one-shot task costs
 * two changelog records (its entry at intake, its fired marker) plus the fired record, whatever
 * happens later.
 *
 * <p>Writes run on the stream thread only; reads on any thread.
 */
public final class ChangeLoggingScheduleStore
    extends WrappedStateStore<RocksDBScheduleStore, byte[], byte[]> implements ScheduleBytes {

  private InternalProcessorContext<?, ?> context;

  ChangeLoggingScheduleStore(RocksDBScheduleStore inner) {
    super(inner);
  }

  @Override
  public void init(StateStoreContext context, StateStore root) {
    this.context = ProcessorContextUtils.asInternalProcessorContext(context);
    super.init(context, root);
  }

  @Override
  public void write(byte[] id, byte[] previous, byte[] next) {
    wrapped().write(id, previous, next);
    log(id, ScheduleChangelog.value(next), ScheduleChangelog.headers(previous, next));
  }

  /**
   * Sends a changelog record through Kafka Streams' internal context, stamped with the wall clock:
   * the timestamp of the request being processed may be days old (a backlog) and a broker with
   * {@code message.timestamp.before.max.ms} would refuse it, failing the thread's transaction. A
   * restore never reads the timestamp.
   *
   * <p>Through Kafka Streams' internal context, as its own change-logging stores do: the public API
   * has no way to log a record whose value differs from what the store keeps (a tombstone for a
   * marker) or that carries headers.
   */
  private void log(byte[] id, byte[] value, Headers headers) {
    context.logChange(
        name(),
        Bytes.wrap(id),
        value,
        context.currentSystemTimeMs(),
        headers,
        wrapped().position());
  }

  @Override
  public byte[] get(byte[] id) {
    return wrapped().get(id);
  }

  @Override
  public void readAhead(List<byte[]> ids) {
    wrapped().readAhead(ids);
  }

  @Override
  public List<Due> due(long nowMs, int maxCount, long maxBytes, byte[] after) {
    return wrapped().due(nowMs, maxCount, maxBytes, after);
  }

  @Override
  public void leftDue(byte[] dueKey) {
    wrapped().leftDue(dueKey);
  }

  @Override
  public boolean mayHaveDue(long nowMs) {
    return wrapped().mayHaveDue(nowMs);
  }

  @Override
  public long nextDue() {
    return wrapped().nextDue();
  }

  @Override
  public boolean mayHaveExpired(long nowMs) {
    return wrapped().mayHaveExpired(nowMs);
  }

  @Override
  public int sweep(long nowMs, int max) {
    return wrapped().sweep(nowMs, max);
  }

  @Override
  public Listing listDue(byte[] from, long dueBeforeMs, int limit, long maxBytes) {
    return wrapped().listDue(from, dueBeforeMs, limit, maxBytes);
  }

  @Override
  public byte[] scanEntries(byte[] afterId, int max, EntryVisitor visitor) {
    return wrapped().scanEntries(afterId, max, visitor);
  }
}

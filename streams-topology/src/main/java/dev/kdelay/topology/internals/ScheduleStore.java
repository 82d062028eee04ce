package dev.kdelay.topology.internals;

import dev.kdelay.schemas.StoredTaskSummary;
import dev.kdelay.topology.Decoded;
import dev.kdelay.topology.ReadableSchedules;
import dev.kdelay.topology.ScheduleView;
import dev.kdelay.topology.ScheduleView.Status;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.internals.InternalProcessorContext;
import org.apache.kafka.streams.processor.internals.ProcessorContextUtils;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.state.internals.CacheFlushListener;
import org.apache.kafka.streams.state.internals.CachedStateStore;

/**
 * The schedule store of one partition, typed: ids and {@link ScheduleEntry}s at the outside, a
 * {@link ScheduleBytesStore} inside, and the change logging between them. Built by {@link
 * ScheduleStoreBuilder}; the processor writes it and interactive queries read it through the same
 * types ({@link ReadableSchedules}).
 *
 * <p><b>The changelog</b> is keyed by schedule id, one record per change of a schedule's state:
 *
 * <ul>
 *   <li>a schedule, replacement, pause or resume: the new entry (with its task);
 *   <li>a fire of a one-shot, or a cancel: a <em>tombstone</em> whose header {@value
 *       #MARKER_HEADER} carries the marker (state, expiry, request time; 18 bytes), while the local
 *       store keeps the marker as the id's entry;
 *   <li>the end of a recurring schedule, or a forgotten id: a plain tombstone.
 * </ul>
 *
 * <p>Every record also carries {@value #REPLACES_HEADER}: where the entry it replaced sat in the
 * indexes, so that a restore rebuilds them without reading the store.
 *
 * <p>A marker's expiry is a {@linkplain ScheduleBytesStore#sweep sweep} of the local store that
 * writes nothing: the changelog already holds a tombstone for the id, and compaction drops it after
 * the topic's {@code delete.retention.ms}, which the builder sets to at least the markers'
 * retention. A restore replays a tombstone's marker into the store, so duplicates stay suppressed
 * across restarts and moves; the sweep then forgets it when it expires. So a one-shot task costs
 * two changelog records (its entry at intake, its fired marker) plus the fired record, whatever
 * happens later.
 *
 * <p>Writes run on the stream thread only; reads on any thread.
 */
public final class ScheduleStore
    implements StateStore, ReadableSchedules, CachedStateStore<byte[], byte[]> {

  /** The header of a changelog tombstone that carries a marker. */
  public static final String MARKER_HEADER = "kdelay-marker";

  /**
   * The header of every changelog record that says where the entry it replaced sat in the store's
   * indexes: the kind and time of its index key (9 bytes), or empty if it had none. A restore
   * deletes that index key without reading the entry, so it only writes.
   */
  public static final String REPLACES_HEADER = "kdelay-replaces";

  /**
   * What the store holds for an id.
   *
   * @param id the schedule id
   * @param raw the entry in binary form, as stored
   * @param entry the entry, decoded
   */
  public record Stored(String id, byte[] raw, Decoded<ScheduleEntry> entry) {

    static Stored of(String id, byte[] raw) {
      return new Stored(id, raw, ScheduleEntry.decode(raw));
    }
  }

  /**
   * An entry that came due.
   *
   * @param stored the id's entry, its header readable
   * @param dueMs its due time
   */
  public record Due(Stored stored, long dueMs) {

    /** The decoded entry. */
    public ScheduleEntry entry() {
      return stored.entry().value();
    }
  }

  private final ScheduleBytesStore bytes;
  private InternalProcessorContext<?, ?> context;
  private Runnable onCommit = () -> {};

  ScheduleStore(ScheduleBytesStore bytes) {
    this.bytes = bytes;
  }

  @Override
  public String name() {
    return bytes.name();
  }

  @Override
  public void init(StateStoreContext context, StateStore root) {
    this.context = ProcessorContextUtils.asInternalProcessorContext(context);
    bytes.init(context, root);
  }

  /** What is stored for an id, or empty if nothing is. */
  public Optional<Stored> lookup(String id) {
    byte[] raw = bytes.get(utf8(id));
    return raw == null ? Optional.empty() : Optional.of(Stored.of(id, raw));
  }

  /** Stores an entry with its task, replacing what the id held. */
  public void put(String id, Stored previous, ScheduleEntry next) {
    byte[] raw = next.toBytes();
    bytes.write(utf8(id), rawOf(previous), raw);
    log(id, raw, replacing(previous));
  }

  /**
   * Turns the id's entry into a marker: kept here until its expiry, a tombstone carrying it in the
   * changelog.
   */
  public void mark(String id, Stored previous, ScheduleEntry marker) {
    byte[] raw = marker.toBytes();
    bytes.write(utf8(id), rawOf(previous), raw);
    log(id, null, replacing(previous).add(new RecordHeader(MARKER_HEADER, raw)));
  }

  /** Forgets an id. */
  public void remove(String id, Stored previous) {
    bytes.write(utf8(id), rawOf(previous), null);
    log(id, null, replacing(previous));
  }

  /** The headers of a change that replaces {@code previous}: where it sat in the indexes. */
  private static Headers replacing(Stored previous) {
    return new RecordHeaders()
        .add(new RecordHeader(REPLACES_HEADER, StoreKeys.positionOf(rawOf(previous))));
  }

  /**
   * Sends a changelog record through Kafka Streams' internal context, as its own change-logging
   * stores do: the public API has no way to log a record whose value differs from what the store
   * keeps (a tombstone for a marker) or that carries headers.
   */
  private void log(String id, byte[] value, Headers headers) {
    context.logChange(
        name(),
        Bytes.wrap(utf8(id)),
        value,
        context.recordContext().timestamp(),
        headers,
        bytes.position());
  }

  /**
   * The entries due at or before {@code nowMs}, in due order, bounded in count and bytes; the scan
   * is closed when this returns.
   */
  public List<Due> due(long nowMs, int maxCount, long maxBytes) {
    return due(nowMs, maxCount, maxBytes, null);
  }

  /**
   * As {@link #due(long, int, long)}, but only entries that come after {@code after} in due order
   * (see {@link ScheduleBytesStore#due(long, int, long, byte[])}).
   *
   * @param after the last entry handled, or null to scan from the start
   */
  public List<Due> due(long nowMs, int maxCount, long maxBytes, Due after) {
    byte[] afterKey =
        after == null
            ? null
            : StoreKeys.index(StoreKeys.DUE, after.dueMs(), utf8(after.stored().id()));
    List<Due> due = new ArrayList<>();
    for (ScheduleBytesStore.Due entry : bytes.due(nowMs, maxCount, maxBytes, afterKey)) {
      due.add(new Due(Stored.of(text(entry.id()), entry.entry()), entry.dueMs()));
    }
    return due;
  }

  /** Whether anything may be due at {@code nowMs}; answered from memory. */
  public boolean mayHaveDue(long nowMs) {
    return bytes.mayHaveDue(nowMs);
  }

  /** A lower bound of the earliest due time (see {@link ScheduleBytesStore#nextDue}). */
  public long nextDue() {
    return bytes.nextDue();
  }

  /** Forgets up to {@code max} expired markers; writes no changelog record. */
  public int sweep(long nowMs, int max) {
    return bytes.sweep(nowMs, max);
  }

  /** The bytes store, for the gauges' count and for tests. */
  public ScheduleBytesStore bytes() {
    return bytes;
  }

  @Override
  public Decoded<ScheduleView> view(String id) {
    Optional<Stored> stored = lookup(id);
    if (stored.isEmpty()) {
      return Decoded.readable(ScheduleView.unknown(id));
    }
    if (!(stored.get().entry() instanceof Decoded.Readable<ScheduleEntry> readable)) {
      return Decoded.unreadable(((Decoded.Unreadable<ScheduleEntry>) stored.get().entry()).error());
    }
    ScheduleEntry entry = readable.value();
    return switch (entry.state()) {
      case SCHEDULED -> withTask(id, Status.PENDING, OptionalLong.of(entry.timeMs()), entry);
      case PAUSED -> withTask(id, Status.PAUSED, OptionalLong.empty(), entry);
      case CANCELLED, FIRED ->
          Decoded.readable(
              new ScheduleView(
                  id,
                  entry.state() == ScheduleEntry.State.FIRED ? Status.FIRED : Status.CANCELLED,
                  OptionalLong.empty(),
                  OptionalLong.of(entry.timeMs()),
                  Optional.empty()));
    };
  }

  private static Decoded<ScheduleView> withTask(
      String id, Status status, OptionalLong dueMs, ScheduleEntry entry) {
    return entry
        .decodeTask()
        .map(task -> new ScheduleView(id, status, dueMs, OptionalLong.empty(), Optional.of(task)));
  }

  @Override
  public Listing pending(
      long afterDueMs, String afterId, long dueBeforeMs, int limit, long maxBytes) {
    if (limit < 1 || maxBytes < 1) {
      throw new IllegalArgumentException(
          "limit and maxBytes must be positive, got " + limit + " and " + maxBytes);
    }
    byte[] from =
        afterId == null
            ? StoreKeys.indexPrefix(StoreKeys.DUE, Long.MIN_VALUE)
            : StoreKeys.successor(StoreKeys.index(StoreKeys.DUE, afterDueMs, utf8(afterId)));
    ScheduleBytesStore.Listing read = bytes.listDue(from, dueBeforeMs, limit, maxBytes);
    List<Listed> listed = new ArrayList<>(read.entries().size());
    for (ScheduleBytesStore.Due entry : read.entries()) {
      Decoded<StoredTaskSummary> task = ScheduleEntry.decode(entry.entry()).value().summarizeTask();
      listed.add(new Listed(text(entry.id()), entry.dueMs(), task));
    }
    return new Listing(listed, read.complete());
  }

  /**
   * Tells a listener of every commit of the store's task, on the stream thread, before the task's
   * records are flushed and the transaction commits (see {@link FireCommits} and {@link
   * #flushCache}).
   */
  void onCommit(Runnable listener) {
    this.onCommit = listener;
  }

  @Override
  public void commit(Map<TopicPartition, Long> changelogOffsets) {
    bytes.commit(changelogOffsets);
  }

  /**
   * The store holds no cache: this is the one hook Kafka Streams calls at every commit of a task,
   * under exactly-once too. {@code StateStore.commit} is not that hook: under exactly-once Kafka
   * Streams 4.3 calls it only when it writes a checkpoint ({@code StreamTask.postCommit}
   * checkpoints a running task only under at-least-once or when forced), while every commit
   * prepares the task with {@code ProcessorStateManager.flushCache}, which calls this on each store
   * that is a {@link CachedStateStore}. The interface is Kafka Streams' internal one; {@code
   * ScheduleStoreCommitIT} runs a real exactly-once application to catch a Kafka version that stops
   * calling it.
   */
  @Override
  public void flushCache() {
    onCommit.run();
  }

  /** Nothing to drop: the store holds no cache. */
  @Override
  public void clearCache() {}

  /** The store sends no cache flushes downstream. */
  @Override
  public boolean setFlushListener(
      CacheFlushListener<byte[], byte[]> listener, boolean sendOldValues) {
    return false;
  }

  @Override
  public void close() {
    bytes.close();
  }

  @Override
  public boolean persistent() {
    return true;
  }

  @Override
  public boolean isOpen() {
    return bytes.isOpen();
  }

  @Override
  public Position getPosition() {
    return bytes.getPosition();
  }

  private static byte[] rawOf(Stored stored) {
    return stored == null ? null : stored.raw();
  }

  private static byte[] utf8(String id) {
    return id.getBytes(StandardCharsets.UTF_8);
  }

  private static String text(byte[] id) {
    return new String(id, StandardCharsets.UTF_8);
  }
}

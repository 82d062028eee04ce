package dev.kdelay.topology.internals.store;

import static org.apache.kafka.streams.processor.internals.metrics.StreamsMetricsImpl.maybeMeasureLatency;

import dev.kdelay.schemas.StoredTaskSummary;
import dev.kdelay.topology.Decoded;
import dev.kdelay.topology.ReadableSchedules;
import dev.kdelay.topology.ScheduleView;
import dev.kdelay.topology.ScheduleView.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.internals.ProcessorContextUtils;
import org.apache.kafka.streams.processor.internals.metrics.StreamsMetricsImpl;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.state.internals.CacheFlushListener;
import org.apache.kafka.streams.state.internals.CachedStateStore;
import org.apache.kafka.streams.state.internals.metrics.StateStoreMetrics;

/**
 * The schedule store of one partition, typed and metered: ids and {@link ScheduleEntry}s at the
 * outside, {@link ScheduleBytes} inside (the change logging over RocksDB, composed by {@link
 * ScheduleStoreBuilder}), the way Kafka Streams' {@code MeteredKeyValueStore} is the typed outer
 * layer of its stores. The processor writes it and interactive queries read it through the same
 * types ({@link ReadableSchedules}).
 *
 * <p>Ids go through the key serde; entries through their own binary form, whose reader says
 * "unreadable" ({@link Decoded}) where a Kafka {@code Deserializer} could only throw.
 *
 * <p>Metering: each read and write is timed into Kafka Streams' state-store metrics (group {@code
 * stream-state-metrics}, tag {@code {@value #METRICS_SCOPE}-state-id}), as its own stores' are:
 * {@code get} (a lookup), {@code put} (a new entry or a marker), {@code delete}, {@code range} (a
 * due scan or a listing) and {@code remove} (a sweep of expired markers). They record at the {@code
 * DEBUG} recording level, so by default they cost a check per operation and are not reported;
 * {@code metrics.recording.level=DEBUG} turns them on.
 *
 * <p>Writes run on the stream thread only; reads on any thread.
 */
public final class MeteredScheduleStore
    implements StateStore, ReadableSchedules, CachedStateStore<byte[], byte[]> {

  /** The store type of the metrics' {@code <scope>-state-id} tag. */
  public static final String METRICS_SCOPE = "kdelay-schedule";

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

  private final ScheduleBytes bytes;
  private final Serde<String> ids;
  private final Time time = Time.SYSTEM;
  private StreamsMetricsImpl metrics;
  private String taskId;
  private Sensor getSensor;
  private Sensor putSensor;
  private Sensor deleteSensor;
  private Sensor rangeSensor;
  private Sensor sweepSensor;
  private Runnable onCommit = () -> {};
  private final byte format;

  /**
   * @param bytes the layers below: change logging over RocksDB
   * @param ids the serde of schedule ids, UTF-8 text as requests carry them
   * @param format the format of the entries it writes
   */
  MeteredScheduleStore(ScheduleBytes bytes, Serde<String> ids, byte format) {
    this.bytes = bytes;
    this.ids = ids;
    this.format = format;
  }

  @Override
  public String name() {
    return bytes.name();
  }

  @Override
  public void init(StateStoreContext context, StateStore root) {
    taskId = context.taskId().toString();
    metrics = ProcessorContextUtils.metricsImpl(context);
    getSensor = StateStoreMetrics.getSensor(taskId, METRICS_SCOPE, name(), metrics);
    putSensor = StateStoreMetrics.putSensor(taskId, METRICS_SCOPE, name(), metrics);
    deleteSensor = StateStoreMetrics.deleteSensor(taskId, METRICS_SCOPE, name(), metrics);
    rangeSensor = StateStoreMetrics.rangeSensor(taskId, METRICS_SCOPE, name(), metrics);
    sweepSensor = StateStoreMetrics.removeSensor(taskId, METRICS_SCOPE, name(), metrics);
    bytes.init(context, root);
  }

  /**
   * Looks up, together, the ids of requests about to be applied ({@link ScheduleBytes#readAhead}).
   */
  public void readAhead(List<byte[]> ids) {
    bytes.readAhead(ids);
  }

  /** What is stored for an id, or empty if nothing is. */
  public Optional<Stored> lookup(String id) {
    byte[] raw = maybeMeasureLatency(() -> bytes.get(key(id)), time, getSensor);
    return raw == null ? Optional.empty() : Optional.of(Stored.of(id, raw));
  }

  /**
   * Replaces what an id holds: with a live entry (and its task), with a marker (kept here until its
   * expiry; the changelog gets a tombstone that carries it), or with nothing.
   *
   * @param previous what the caller read for the id, or null
   * @param next the new entry, or null to forget the id
   */
  public void write(String id, Stored previous, ScheduleEntry next) {
    byte[] previousRaw = previous == null ? null : previous.raw();
    byte[] nextRaw = next == null ? null : next.toBytes(format);
    maybeMeasureLatency(
        () -> bytes.write(key(id), previousRaw, nextRaw),
        time,
        next == null ? deleteSensor : putSensor);
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
   * (see {@link RocksDBScheduleStore#due(long, int, long, byte[])}).
   *
   * @param after the last entry handled, or null to scan from the start
   */
  public List<Due> due(long nowMs, int maxCount, long maxBytes, Due after) {
    byte[] afterKey =
        after == null
            ? null
            : StoreKeys.index(StoreKeys.DUE, after.dueMs(), key(after.stored().id()));
    List<ScheduleBytes.Due> read =
        maybeMeasureLatency(
            () -> bytes.due(nowMs, maxCount, maxBytes, afterKey), time, rangeSensor);
    List<Due> due = new ArrayList<>(read.size());
    for (ScheduleBytes.Due entry : read) {
      due.add(new Due(Stored.of(id(entry.id()), entry.entry()), entry.dueMs()));
    }
    return due;
  }

  /**
   * A due entry was left as it is, neither fired nor written (it waits for requests for its id):
   * the next scans find it again. Without this, the scan that returned it had moved the store's
   * bounds past it, as past every entry of a batch, which firing rewrites.
   */
  public void leftDue(Due due) {
    bytes.leftDue(StoreKeys.index(StoreKeys.DUE, due.dueMs(), key(due.stored().id())));
  }

  /** Whether anything may be due at {@code nowMs}; answered from memory. */
  public boolean mayHaveDue(long nowMs) {
    return bytes.mayHaveDue(nowMs);
  }

  /** A lower bound of the earliest due time (see {@link RocksDBScheduleStore#nextDue}). */
  public long nextDue() {
    return bytes.nextDue();
  }

  /**
   * Forgets up to {@code max} expired markers; writes no changelog record. Timed only when the
   * sweep reads the store: nearly every call answers from memory.
   */
  public int sweep(long nowMs, int max) {
    return bytes.mayHaveExpired(nowMs)
        ? maybeMeasureLatency(() -> bytes.sweep(nowMs, max), time, sweepSensor)
        : 0;
  }

  /** The layers below, for the gauges' count and for tests. */
  public ScheduleBytes bytes() {
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
            : StoreKeys.successor(StoreKeys.index(StoreKeys.DUE, afterDueMs, key(afterId)));
    ScheduleBytes.Listing read =
        maybeMeasureLatency(
            () -> bytes.listDue(from, dueBeforeMs, limit, maxBytes), time, rangeSensor);
    List<Listed> listed = new ArrayList<>(read.entries().size());
    for (ScheduleBytes.Due entry : read.entries()) {
      Decoded<StoredTaskSummary> task = ScheduleEntry.decode(entry.entry()).value().summarizeTask();
      listed.add(new Listed(id(entry.id()), entry.dueMs(), task));
    }
    return new Listing(listed, read.complete());
  }

  /**
   * Tells a listener of every commit of the store's task, on the stream thread, before the task's
   * records are flushed and the transaction commits (see {@link #flushCache}; the fire path's
   * commit pacing listens here).
   */
  public void onCommit(Runnable listener) {
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
    try {
      bytes.close();
    } finally {
      if (metrics != null) {
        metrics.removeAllStoreLevelSensorsAndMetrics(taskId, name());
      }
    }
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

  private byte[] key(String id) {
    return ids.serializer().serialize(name(), id);
  }

  private String id(byte[] key) {
    return ids.deserializer().deserialize(name(), key);
  }
}

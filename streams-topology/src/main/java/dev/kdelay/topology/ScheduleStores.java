package dev.kdelay.topology;

import dev.kdelay.schemas.StoredTask;
import dev.kdelay.schemas.StoredTaskCodec;
import dev.kdelay.topology.ScheduleView.Status;
import dev.kdelay.topology.internals.ScheduleEntry;
import dev.kdelay.topology.internals.TaskKey;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * Reads kdelay's two stores of one partition, {@link DelayTopology#SCHEDULES_STORE} and {@link
 * DelayTopology#TASKS_STORE}, for operators: where one id stands, and which tasks fire next. The
 * byte layouts stay inside the topology; callers get {@link ScheduleView}s and {@link
 * PendingTask}s.
 *
 * <p>Meant for interactive queries, from any thread, while the stream thread writes:
 *
 * <pre>{@code
 * int partition = streams.queryMetadataForKey(DelayTopology.SCHEDULES_STORE, idBytes,
 *     new ByteArraySerializer()).partition();
 * ScheduleView view = ScheduleStores.view(
 *     streams.store(StoreQueryParameters.fromNameAndType(DelayTopology.SCHEDULES_STORE,
 *         QueryableStoreTypes.<Bytes, byte[]>keyValueStore()).withPartition(partition)),
 *     streams.store(StoreQueryParameters.fromNameAndType(DelayTopology.TASKS_STORE,
 *         QueryableStoreTypes.<Bytes, byte[]>keyValueStore()).withPartition(partition)),
 *     id);
 * }</pre>
 */
public final class ScheduleStores {

  /** Reads of an id's entry and its task are not atomic; a fire in between makes us read again. */
  private static final int ATTEMPTS = 3;

  private ScheduleStores() {}

  /**
   * Where one id stands.
   *
   * @param schedules the partition's schedules store
   * @param tasks the partition's task store
   * @param id the schedule id
   * @return the view; {@link Status#UNKNOWN} if the partition holds nothing for the id
   * @throws NullPointerException if an argument is null
   * @throws org.apache.kafka.streams.errors.InvalidStateStoreException if a store is not queryable
   *     now (the partition is moving)
   */
  public static ScheduleView view(
      ReadOnlyKeyValueStore<Bytes, byte[]> schedules,
      ReadOnlyKeyValueStore<Bytes, byte[]> tasks,
      String id) {
    Objects.requireNonNull(schedules, "schedules cannot be null");
    Objects.requireNonNull(tasks, "tasks cannot be null");
    Objects.requireNonNull(id, "id cannot be null");
    Bytes key = Bytes.wrap(id.getBytes(StandardCharsets.UTF_8));
    ScheduleView view = ScheduleView.unknown(id);
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
      byte[] raw = schedules.get(key);
      if (raw == null) {
        return ScheduleView.unknown(id);
      }
      ScheduleEntry entry = ScheduleEntry.fromBytes(raw);
      view = view(id, entry, tasks);
      if (view.status() == Status.CANCELLED
          || view.status() == Status.FIRED
          || view.task().isPresent()) {
        return view;
      }
      // The task fired (or moved to its next occurrence) between the two reads: read again.
    }
    return view;
  }

  private static ScheduleView view(
      String id, ScheduleEntry entry, ReadOnlyKeyValueStore<Bytes, byte[]> tasks) {
    return switch (entry.state()) {
      case SCHEDULED ->
          new ScheduleView(
              id,
              Status.PENDING,
              OptionalLong.of(entry.dueMs()),
              OptionalLong.empty(),
              task(tasks, TaskKey.fire(entry.dueMs(), id)));
      case PAUSED ->
          new ScheduleView(
              id,
              Status.PAUSED,
              OptionalLong.empty(),
              OptionalLong.empty(),
              task(tasks, TaskKey.paused(id)));
      case CANCELLED ->
          new ScheduleView(
              id,
              Status.CANCELLED,
              OptionalLong.empty(),
              OptionalLong.of(entry.dueMs()),
              Optional.empty());
      case FIRED ->
          new ScheduleView(
              id,
              Status.FIRED,
              OptionalLong.empty(),
              OptionalLong.of(entry.dueMs()),
              Optional.empty());
    };
  }

  private static Optional<StoredTask> task(
      ReadOnlyKeyValueStore<Bytes, byte[]> tasks, TaskKey key) {
    return Optional.ofNullable(tasks.get(key.toBytes())).map(StoredTaskCodec::decode);
  }

  /**
   * Tasks waiting to fire, in the order they fire: due before a time, after a position, at most a
   * number of them. Paused schedules (which have no due time) and cancel markers are not listed.
   *
   * @param tasks the partition's task store
   * @param afterDueMs with {@code afterId}: list only tasks after the one due then with that id
   * @param afterId the id of the last task of the previous page, or null to start at the earliest
   * @param dueBeforeMs list only tasks due strictly before this, epoch milliseconds
   * @param limit most tasks to list
   * @return the tasks in {@link PendingTask#DUE_ORDER}
   * @throws NullPointerException if {@code tasks} is null
   * @throws IllegalArgumentException if {@code limit} is not positive
   * @throws org.apache.kafka.streams.errors.InvalidStateStoreException if the store is not
   *     queryable now
   */
  public static List<PendingTask> pending(
      ReadOnlyKeyValueStore<Bytes, byte[]> tasks,
      long afterDueMs,
      String afterId,
      long dueBeforeMs,
      int limit) {
    Objects.requireNonNull(tasks, "tasks cannot be null");
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be positive, got " + limit);
    }
    // [from, to] over keys: the bare prefix of dueBeforeMs sorts before every key due then.
    Bytes from =
        afterId == null
            ? TaskKey.prefix(Long.MIN_VALUE)
            : successor(TaskKey.fire(afterDueMs, afterId).toBytes());
    Bytes to = TaskKey.prefix(dueBeforeMs);
    List<PendingTask> pending = new ArrayList<>(Math.min(limit, 1_000));
    if (from.compareTo(to) > 0) {
      return pending;
    }
    try (KeyValueIterator<Bytes, byte[]> scan = tasks.range(from, to)) {
      while (pending.size() < limit && scan.hasNext()) {
        KeyValue<Bytes, byte[]> entry = scan.next();
        TaskKey key = TaskKey.fromBytes(entry.key);
        if (key.kind() == TaskKey.KIND_FIRE) {
          pending.add(new PendingTask(key.id(), key.dueMs(), StoredTaskCodec.decode(entry.value)));
        }
      }
    }
    return pending;
  }

  private static Bytes successor(Bytes key) {
    byte[] raw = key.get();
    return Bytes.wrap(Arrays.copyOf(raw, raw.length + 1));
  }
}

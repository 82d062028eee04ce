package dev.kdelay.topology.internals;

import dev.kdelay.schemas.CronSpec;
import dev.kdelay.schemas.DelayRequest;
import dev.kdelay.schemas.Rejection;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.schemas.Schedule;
import dev.kdelay.schemas.StoredTask;
import dev.kdelay.schemas.StoredTaskCodec;
import dev.kdelay.schemas.Timing;
import dev.kdelay.topology.internals.ScheduleEntry.State;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.OptionalLong;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The schedules of one partition: applies requests to the two stores and decides what a due entry
 * does. The schedules store maps an id to its {@link ScheduleEntry}, which locates the id's one
 * pending entry in the task store, so cancel and replace cost two point operations whatever the
 * number pending.
 *
 * <p>Requests for an id normally arrive in order on one partition. One that a client with another
 * partitioner sent elsewhere arrives later, through the reroute topic, so requests apply in the
 * order of their record timestamps: an older request than the one that set the current state is
 * superseded (and dead-lettered, never dropped silently). A cancel leaves a marker for {@code
 * cancelRetentionMs} so that an older schedule arriving late cannot bring the schedule back.
 *
 * <p>Runs on the stream thread only.
 */
final class Schedules {

  private static final byte[] EXPIRY_VALUE = new byte[0];

  private final TaskStore tasks;
  private final KeyValueStore<Bytes, byte[]> entries;
  private final long cancelRetentionMs;
  private final Occurrences occurrences;

  Schedules(
      TaskStore tasks,
      KeyValueStore<Bytes, byte[]> entries,
      long cancelRetentionMs,
      Occurrences occurrences) {
    this.tasks = tasks;
    this.entries = entries;
    this.cancelRetentionMs = cancelRetentionMs;
    this.occurrences = occurrences;
  }

  /**
   * Applies a valid request.
   *
   * @return why the request could not apply, or empty if it did
   */
  Optional<Rejection> apply(DelayRequest request, long nowMs) {
    Bytes id = idBytes(request.id());
    ScheduleEntry current = entry(id);
    if (current != null && supersedes(current, request.timestamp())) {
      return Optional.of(
          new Rejection(
              RejectionReason.SUPERSEDED,
              "a newer "
                  + (current.state() == State.CANCELLED ? "cancel" : "request")
                  + " for this id (timestamp "
                  + current.requestMs()
                  + ") already applied; this request's timestamp is "
                  + request.timestamp()));
    }
    return switch (request.action()) {
      case SCHEDULE -> schedule(id, current, request, nowMs);
      case CANCEL -> cancel(id, current, request, nowMs);
      case PAUSE, RESUME -> pauseOrResume(id, current, request, nowMs);
    };
  }

  private static boolean supersedes(ScheduleEntry current, long requestMs) {
    // A cancel wins a tie: a schedule and a cancel stamped in the same millisecond most likely
    // were sent in that order, the schedule detouring through the reroute topic.
    return current.state() == State.CANCELLED
        ? requestMs <= current.requestMs()
        : requestMs < current.requestMs();
  }

  private Optional<Rejection> schedule(
      Bytes id, ScheduleEntry current, DelayRequest request, long nowMs) {
    Schedule schedule = request.schedule();
    OptionalLong due = firstDue(schedule, nowMs);
    if (due.isEmpty()) {
      return Optional.of(
          new Rejection(
              RejectionReason.BAD_CRON,
              "the cron schedule has no occurrence within its bounds and the horizon"));
    }
    removeEntryOf(request.id(), current);
    StoredTask task = new StoredTask(schedule, 1);
    tasks.put(TaskKey.fire(due.getAsLong(), request.id()), StoredTaskCodec.encode(task));
    entries.put(
        id, new ScheduleEntry(State.SCHEDULED, due.getAsLong(), request.timestamp()).toBytes());
    return Optional.empty();
  }

  private OptionalLong firstDue(Schedule schedule, long nowMs) {
    if (schedule.timing() instanceof Timing.Once once) {
      return OptionalLong.of(once.dueMs());
    }
    return occurrences.first((CronSpec) schedule.timing(), nowMs);
  }

  private Optional<Rejection> cancel(
      Bytes id, ScheduleEntry current, DelayRequest request, long nowMs) {
    removeEntryOf(request.id(), current);
    // Keep a marker even for an id not seen yet: its schedule may still be on its way.
    long expiry = nowMs + cancelRetentionMs;
    tasks.put(new TaskKey(expiry, TaskKey.KIND_EXPIRE, request.id()), EXPIRY_VALUE);
    entries.put(id, new ScheduleEntry(State.CANCELLED, expiry, request.timestamp()).toBytes());
    return Optional.empty();
  }

  private Optional<Rejection> pauseOrResume(
      Bytes id, ScheduleEntry current, DelayRequest request, long nowMs) {
    return Optional.of(
        new Rejection(
            RejectionReason.NOT_APPLICABLE,
            request.action().wireName()
                + " applies to recurring schedules only; "
                + (current == null ? "no schedule has this id" : "this schedule is one-shot")));
  }

  /** Removes whatever task-store entry the id's current state owns. */
  private void removeEntryOf(String id, ScheduleEntry current) {
    if (current == null) {
      return;
    }
    byte kind = current.state() == State.CANCELLED ? TaskKey.KIND_EXPIRE : TaskKey.KIND_FIRE;
    tasks.delete(new TaskKey(current.dueMs(), kind, id));
  }

  /**
   * Handles an entry that came due: fires a task (and stores a recurring schedule's next
   * occurrence), or forgets an expired cancel marker. The task store deletes the entry itself.
   */
  void onDue(TaskKey key, byte[] value, long nowMs, Firing firing) {
    Bytes id = idBytes(key.id());
    ScheduleEntry current = entry(id);
    if (key.kind() == TaskKey.KIND_EXPIRE) {
      if (current != null && current.state() == State.CANCELLED && current.dueMs() == key.dueMs()) {
        entries.delete(id);
      }
      return;
    }
    StoredTask task = StoredTaskCodec.decode(value);
    firing.fire(
        OutputRecords.fired(key.id(), task.schedule(), key.dueMs(), nowMs, task.occurrence()));
    if (current != null && current.state() == State.SCHEDULED && current.dueMs() == key.dueMs()) {
      entries.delete(id);
    }
  }

  private ScheduleEntry entry(Bytes id) {
    byte[] bytes = entries.get(id);
    return bytes == null ? null : ScheduleEntry.fromBytes(bytes);
  }

  private static Bytes idBytes(String id) {
    return Bytes.wrap(id.getBytes(StandardCharsets.UTF_8));
  }

  /** Receives the records a due entry fires. */
  @FunctionalInterface
  interface Firing {
    void fire(org.apache.kafka.streams.processor.api.Record<FiredKey, byte[]> record);
  }
}

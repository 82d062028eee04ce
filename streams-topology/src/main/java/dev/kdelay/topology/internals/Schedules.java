package dev.kdelay.topology.internals;

import dev.kdelay.schemas.CronSpec;
import dev.kdelay.schemas.DelayRequest;
import dev.kdelay.schemas.Rejection;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.schemas.Schedule;
import dev.kdelay.schemas.StoredTask;
import dev.kdelay.schemas.StoredTaskCodec;
import dev.kdelay.schemas.Timing;
import dev.kdelay.topology.DelayMetrics;
import dev.kdelay.topology.internals.ScheduleEntry.State;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.OptionalLong;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The schedules of one partition: applies requests to the two stores and decides what a due entry
 * does. The schedules store maps an id to its {@link ScheduleEntry}, which locates the id's one
 * entry in the task store, so cancel, replace, pause and resume cost a few point operations
 * whatever the number pending.
 *
 * <p>Requests for an id normally arrive in order on one partition. One that a client with another
 * partitioner sent elsewhere arrives later, through the reroute topic, so requests apply in the
 * order of their record timestamps: a request older than the one that set the current state is
 * superseded (and dead-lettered, never dropped silently). A cancel leaves a marker for {@code
 * cancelRetentionMs} so that an older schedule arriving late cannot bring the schedule back.
 *
 * <p>A recurring schedule stores only its next occurrence. When that fires, the one after is
 * written in the same transaction as the fired record and the deletion, so a crash can neither lose
 * nor double an occurrence.
 *
 * <p>Every write of the schedules store goes through {@link #putEntry} or {@link #deleteEntry},
 * which tell the partition's gauges how the id's state changed.
 *
 * <p>Runs on the stream thread only.
 */
final class Schedules {

  private static final byte[] EXPIRY_VALUE = new byte[0];

  private final TaskStore tasks;
  private final KeyValueStore<Bytes, byte[]> entries;
  private final long cancelRetentionMs;
  private final long firedRetentionMs;
  private final Recurrence recurrence;
  private final PartitionState gauges;
  private final DelayMetrics metrics;

  Schedules(
      TaskStore tasks,
      KeyValueStore<Bytes, byte[]> entries,
      long cancelRetentionMs,
      long firedRetentionMs,
      Recurrence recurrence,
      PartitionState gauges,
      DelayMetrics metrics) {
    this.tasks = tasks;
    this.entries = entries;
    this.cancelRetentionMs = cancelRetentionMs;
    this.firedRetentionMs = firedRetentionMs;
    this.recurrence = recurrence;
    this.gauges = gauges;
    this.metrics = metrics;
  }

  /** Receives what a due entry produces: fired records, or the dead letter of an unreadable one. */
  interface Firing {
    void fire(Record<FiredKey, byte[]> record);

    /** Receives the dead letter of a stored task that cannot be decoded. */
    void unreadable(Record<byte[], byte[]> deadLetter);
  }

  /**
   * Applies a valid request.
   *
   * @return why the request could not apply, or empty if it did
   */
  Optional<Rejection> apply(DelayRequest request, long nowMs) {
    String id = request.id();
    ScheduleEntry current;
    try {
      current = entry(id);
    } catch (IllegalArgumentException e) {
      // Without the entry the id's task-store entry cannot be found, so neither replaced nor
      // removed: refuse rather than leave a second task that would fire. The pending task still
      // fires when due, and that rewrites the entry.
      return rejection(
          RejectionReason.UNREADABLE_TASK,
          "the stored state of this id cannot be read (" + e.getMessage() + ")");
    }
    if (current != null && supersedes(current, request.timestamp())) {
      return rejection(
          RejectionReason.SUPERSEDED,
          "a newer "
              + (current.state() == State.CANCELLED ? "cancel" : "request")
              + " for this id (timestamp "
              + current.requestMs()
              + ") already applied; this request's timestamp is "
              + request.timestamp());
    }
    return switch (request.action()) {
      case SCHEDULE -> schedule(id, current, request, nowMs);
      case CANCEL -> cancel(id, current, request.timestamp(), nowMs);
      case PAUSE -> pause(id, current, request.timestamp());
      case RESUME -> resume(id, current, request.timestamp(), nowMs);
    };
  }

  private static boolean supersedes(ScheduleEntry current, long requestMs) {
    // A cancel wins a tie: a schedule and a cancel stamped in the same millisecond most likely
    // were sent in that order, the schedule detouring through the reroute topic. A fire wins one
    // too: a request stamped like the one that fired is that request again (a dead letter
    // replayed twice keeps its timestamp), and must not fire a second time.
    return current.state() == State.CANCELLED || current.state() == State.FIRED
        ? requestMs <= current.requestMs()
        : requestMs < current.requestMs();
  }

  private Optional<Rejection> schedule(
      String id, ScheduleEntry current, DelayRequest request, long nowMs) {
    Schedule schedule = request.schedule();
    OptionalLong due =
        schedule.timing() instanceof Timing.Once once
            ? OptionalLong.of(once.dueMs())
            : recurrence.first((CronSpec) schedule.timing(), nowMs);
    if (due.isEmpty()) {
      return rejection(
          RejectionReason.TOO_FAR,
          "the cron schedule has no occurrence between now, its end bound and the horizon");
    }
    removeEntryOf(id, current);
    store(id, current, due.getAsLong(), new StoredTask(schedule, 1), request.timestamp());
    return Optional.empty();
  }

  private Optional<Rejection> cancel(String id, ScheduleEntry current, long requestMs, long nowMs) {
    removeEntryOf(id, current);
    // Keep a marker even for an id not seen yet: its schedule may still be on its way.
    long expiry = nowMs + cancelRetentionMs;
    tasks.put(new TaskKey(expiry, TaskKey.KIND_EXPIRE, id), EXPIRY_VALUE);
    putEntry(id, current, new ScheduleEntry(State.CANCELLED, expiry, requestMs));
    if (current != null && current.state() != State.CANCELLED && current.state() != State.FIRED) {
      metrics.taskCancelled();
    }
    return Optional.empty();
  }

  private Optional<Rejection> pause(String id, ScheduleEntry current, long requestMs) {
    Optional<Rejection> refused = notLive("pause", current);
    if (refused.isPresent()) {
      return refused;
    }
    if (current.state() == State.PAUSED) {
      putEntry(id, current, new ScheduleEntry(State.PAUSED, Long.MAX_VALUE, requestMs));
      return Optional.empty();
    }
    TaskKey pending = TaskKey.fire(current.dueMs(), id);
    byte[] task = tasks.get(pending);
    refused = notRecurring("pause", task);
    if (refused.isPresent()) {
      return refused;
    }
    tasks.delete(pending);
    tasks.put(TaskKey.paused(id), task);
    putEntry(id, current, new ScheduleEntry(State.PAUSED, Long.MAX_VALUE, requestMs));
    return Optional.empty();
  }

  /**
   * Resumes a paused schedule with its first occurrence after now: occurrences that fell in the
   * pause are skipped, whatever the misfire policy, since pausing means they should not fire.
   */
  private Optional<Rejection> resume(String id, ScheduleEntry current, long requestMs, long nowMs) {
    Optional<Rejection> refused = notLive("resume", current);
    if (refused.isPresent()) {
      return refused;
    }
    if (current.state() == State.SCHEDULED) {
      // Running, not paused: nothing to do, unless the request does not apply at all.
      return notRecurring("resume", tasks.get(TaskKey.fire(current.dueMs(), id)));
    }
    byte[] value = tasks.get(TaskKey.paused(id));
    if (value == null) {
      // The entry says paused but no paused task is stored: nothing can resume. Forget the id
      // rather than answer every later request from a state that holds nothing.
      deleteEntry(id, current);
      return rejection(
          RejectionReason.NOT_APPLICABLE, "resume: no paused task is stored for this id");
    }
    Optional<StoredTask> decoded = decode(value);
    if (decoded.isEmpty()) {
      return unreadable("resume");
    }
    StoredTask task = decoded.get();
    OptionalLong next = recurrence.onResume((CronSpec) task.schedule().timing(), nowMs);
    tasks.delete(TaskKey.paused(id));
    if (next.isEmpty()) {
      deleteEntry(id, current); // ended while paused
      return Optional.empty();
    }
    store(id, current, next.getAsLong(), task, requestMs);
    return Optional.empty();
  }

  /** Why a pause or resume does not apply to an id with no live schedule, if it has none. */
  private Optional<Rejection> notLive(String action, ScheduleEntry current) {
    if (current == null || current.state() == State.CANCELLED) {
      return rejection(RejectionReason.NOT_APPLICABLE, action + ": no schedule has this id");
    }
    if (current.state() == State.FIRED) {
      return rejection(
          RejectionReason.NOT_APPLICABLE, action + ": this one-shot task already fired");
    }
    return Optional.empty();
  }

  /**
   * Why a pause or resume does not apply to a scheduled id's stored task, if it does not: the task
   * cannot be read, or it is a one-shot.
   */
  private Optional<Rejection> notRecurring(String action, byte[] task) {
    Optional<StoredTask> decoded = decode(task);
    if (task != null && decoded.isEmpty()) {
      return unreadable(action);
    }
    if (decoded.isEmpty() || !decoded.get().schedule().recurring()) {
      return rejection(
          RejectionReason.NOT_APPLICABLE,
          action + " applies to recurring schedules; this one is one-shot");
    }
    return Optional.empty();
  }

  /** Removes whatever task-store entry the id's current state owns. */
  private void removeEntryOf(String id, ScheduleEntry current) {
    if (current == null) {
      return;
    }
    tasks.delete(
        switch (current.state()) {
          case SCHEDULED -> TaskKey.fire(current.dueMs(), id);
          case PAUSED -> TaskKey.paused(id);
          case CANCELLED, FIRED -> new TaskKey(current.dueMs(), TaskKey.KIND_EXPIRE, id);
        });
  }

  private void store(
      String id, ScheduleEntry current, long dueMs, StoredTask task, long requestMs) {
    tasks.put(TaskKey.fire(dueMs, id), StoredTaskCodec.encode(task));
    putEntry(id, current, new ScheduleEntry(State.SCHEDULED, dueMs, requestMs));
  }

  private void putEntry(String id, ScheduleEntry current, ScheduleEntry next) {
    Bytes key = idBytes(id);
    entries.put(key, next.toBytes());
    gauges.transition(key, stateOf(current), next.state());
  }

  private void deleteEntry(String id, ScheduleEntry current) {
    Bytes key = idBytes(id);
    entries.delete(key);
    gauges.transition(key, stateOf(current), null);
  }

  private static State stateOf(ScheduleEntry entry) {
    return entry == null ? null : entry.state();
  }

  /**
   * Handles an entry that came due: fires a task (and stores a recurring schedule's next
   * occurrence), or forgets an expired cancel marker. The task store deletes the entry itself.
   */
  void onDue(TaskKey key, byte[] value, long nowMs, Firing firing) {
    String id = key.id();
    ScheduleEntry current;
    boolean repair = false;
    try {
      current = entry(id);
    } catch (IllegalArgumentException e) {
      // The entry cannot be read, the task can: the task is what is pending, so it fires (or its
      // marker expires) and the entry is rewritten from it.
      current = null;
      repair = true;
    }
    if (key.kind() == TaskKey.KIND_EXPIRE) {
      if (repair) {
        return; // which entry the marker belonged to cannot be known; leave it
      }
      if (current != null
          && (current.state() == State.CANCELLED || current.state() == State.FIRED)
          && current.dueMs() == key.dueMs()) {
        deleteEntry(id, current);
      }
      return;
    }
    // The entry the id's state points at; anything else would be an orphan left by a bug.
    boolean owned =
        repair
            || current != null
                && current.state() == State.SCHEDULED
                && current.dueMs() == key.dueMs();
    StoredTask task;
    try {
      task = StoredTaskCodec.decode(value);
    } catch (IllegalArgumentException e) {
      // Never crash the stream thread on it, and never drop it: dead-letter the stored bytes.
      firing.unreadable(OutputRecords.unreadable(id, key.dueMs(), value, e.getMessage()));
      if (owned) {
        deleteEntry(id, current);
      }
      return;
    }
    if (!(task.schedule().timing() instanceof CronSpec spec)) {
      firing.fire(OutputRecords.fired(id, task.schedule(), key.dueMs(), nowMs, 1));
      if (owned) {
        forgetFired(id, current, requestMs(current), nowMs);
      }
      return;
    }
    Recurrence.Step step = recurrence.onDue(spec, key.dueMs(), task.occurrence() - 1, nowMs);
    if (step.fire()) {
      firing.fire(OutputRecords.fired(id, task.schedule(), key.dueMs(), nowMs, task.occurrence()));
    } else {
      metrics.occurrenceSkipped();
    }
    if (!owned) {
      return;
    }
    if (step.next().isEmpty()) {
      deleteEntry(id, current);
      return;
    }
    long occurrence = task.occurrence() + (step.fire() ? 1 : 0);
    store(
        id,
        current,
        step.next().getAsLong(),
        new StoredTask(task.schedule(), occurrence),
        requestMs(current));
  }

  /**
   * After a one-shot fired: remembers it for the fired retention, as a cancel is remembered, or
   * forgets it at once when the retention is 0.
   */
  private void forgetFired(String id, ScheduleEntry current, long requestMs, long nowMs) {
    if (firedRetentionMs == 0) {
      deleteEntry(id, current);
      return;
    }
    long expiry = nowMs + firedRetentionMs;
    tasks.put(new TaskKey(expiry, TaskKey.KIND_EXPIRE, id), EXPIRY_VALUE);
    putEntry(id, current, new ScheduleEntry(State.FIRED, expiry, requestMs));
  }

  /** The timestamp of the request behind an entry; 0 for one rewritten from its task. */
  private static long requestMs(ScheduleEntry entry) {
    return entry == null ? 0 : entry.requestMs();
  }

  /** The stored task, or empty if there is none or it cannot be decoded. */
  private static Optional<StoredTask> decode(byte[] value) {
    if (value == null) {
      return Optional.empty();
    }
    try {
      return Optional.of(StoredTaskCodec.decode(value));
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  /**
   * Refuses a pause or resume whose stored task cannot be read. The bytes stay where they are: a
   * cancel or a new schedule for the id replaces them, and a pending one is dead-lettered when due.
   */
  private static Optional<Rejection> unreadable(String action) {
    return rejection(
        RejectionReason.UNREADABLE_TASK,
        action + ": the task stored for this id cannot be read; cancel or replace the schedule");
  }

  /**
   * The id's entry, or null if it has none.
   *
   * @throws IllegalArgumentException if the stored entry cannot be read
   */
  private ScheduleEntry entry(String id) {
    byte[] bytes = entries.get(idBytes(id));
    return bytes == null ? null : ScheduleEntry.fromBytes(bytes);
  }

  private static Bytes idBytes(String id) {
    return Bytes.wrap(id.getBytes(StandardCharsets.UTF_8));
  }

  private static Optional<Rejection> rejection(RejectionReason reason, String message) {
    return Optional.of(new Rejection(reason, message));
  }
}

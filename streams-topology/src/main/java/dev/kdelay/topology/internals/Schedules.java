package dev.kdelay.topology.internals;

import dev.kdelay.schemas.Action;
import dev.kdelay.schemas.CronSpec;
import dev.kdelay.schemas.DelayRequest;
import dev.kdelay.schemas.Rejection;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.schemas.Schedule;
import dev.kdelay.schemas.StoredTask;
import dev.kdelay.schemas.Timing;
import dev.kdelay.topology.Decoded;
import dev.kdelay.topology.DelayMetrics;
import dev.kdelay.topology.LogValues;
import dev.kdelay.topology.internals.HeldWrites.Write;
import dev.kdelay.topology.internals.delivery.Delivery;
import dev.kdelay.topology.internals.delivery.FiredKey;
import dev.kdelay.topology.internals.delivery.Firing;
import dev.kdelay.topology.internals.delivery.OutputRecords;
import dev.kdelay.topology.internals.store.MeteredScheduleStore;
import dev.kdelay.topology.internals.store.MeteredScheduleStore.Stored;
import dev.kdelay.topology.internals.store.ScheduleEntry;
import dev.kdelay.topology.internals.store.ScheduleEntry.Origin;
import dev.kdelay.topology.internals.store.ScheduleEntry.State;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.OptionalLong;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The schedules of one partition: applies requests to the {@link MeteredScheduleStore} and decides
 * what a due entry does. Each id has one entry, so schedule, cancel, replace, pause and resume cost
 * a point read and one write whatever the number pending.
 *
 * <p>Requests for an id normally arrive in order on one partition. One that a client with another
 * partitioner sent elsewhere arrives later, through the reroute topic, so requests apply in the
 * order of their record timestamps: a request older than the one that set the current state is
 * superseded (and dead-lettered, never dropped silently). A cancel, and a fired one-shot, leave a
 * marker for their retention so that an older schedule arriving late cannot bring the id back.
 *
 * <p>A recurring schedule stores only its next occurrence. When that fires, the one after is
 * written in the same transaction as the fired record, so a crash can neither lose nor double an
 * occurrence.
 *
 * <p>Every write goes through {@link #write}, and is made by {@link #make}, which tells the
 * partition's gauges how the id's state changed.
 *
 * <p><b>At least once</b>, the writes that follow a fire are <em>held</em> until a commit has
 * flushed the fired record (see {@link HeldWrites}); a request for an id with a held write never
 * gets here before that (the processor sends it round the reroute topic). Exactly once nothing is
 * held: the transaction commits the record with its write.
 *
 * <p>Runs on the stream thread only.
 */
final class Schedules {

  private static final Logger log = LoggerFactory.getLogger(Schedules.class);

  private final MeteredScheduleStore store;
  private final long cancelRetentionMs;
  private final long firedRetentionMs;
  private final Recurrence recurrence;
  private final PartitionState gauges;
  private final DelayMetrics metrics;

  /** Whether writes that follow a fire wait for the commit that flushes it (at least once). */
  private final boolean holdFireWrites;

  private final HeldWrites held = new HeldWrites();

  Schedules(
      MeteredScheduleStore store,
      long cancelRetentionMs,
      long firedRetentionMs,
      Recurrence recurrence,
      PartitionState gauges,
      DelayMetrics metrics,
      boolean holdFireWrites) {
    this.store = store;
    this.holdFireWrites = holdFireWrites;
    this.cancelRetentionMs = cancelRetentionMs;
    this.firedRetentionMs = firedRetentionMs;
    this.recurrence = recurrence;
    this.gauges = gauges;
    this.metrics = metrics;
  }

  /**
   * Applies a valid request.
   *
   * @param origin where the request was read, and what it was: ties are decided by it
   * @param firing where a trigger's fired record goes
   * @return why the request could not apply, or empty if it did (a duplicate applies as nothing)
   */
  Optional<Rejection> apply(DelayRequest request, Origin origin, long nowMs, Firing firing) {
    String id = request.id();
    releaseIfCommitted();
    if (held.contains(id)) {
      // The processor sends such a request round through the reroute topic first (HeldWrites).
      throw new IllegalStateException("a request for " + id + ", whose write is held, applied");
    }
    Stored stored = store.lookup(id).orElse(null);
    ScheduleEntry current = null;
    if (stored != null && stored.entry() instanceof Decoded.Unreadable<ScheduleEntry> damaged) {
      // A schedule or a cancel replaces the whole entry, so it needs nothing from it; any other
      // action would need its task.
      if (request.action() != Action.SCHEDULE && request.action() != Action.CANCEL) {
        return rejection(
            RejectionReason.UNREADABLE_TASK,
            "the stored state of this id cannot be read ("
                + damaged.error()
                + "); cancel or replace the schedule");
      }
    } else if (stored != null) {
      current = stored.entry().value();
      if (current.state().marker() && current.timeMs() <= nowMs) {
        // Expired: a sweep forgets it at the next punctuation, and a restore may have brought it
        // back until then; either way the retention is over and it orders nothing.
        current = null;
      }
    }
    Order order = current == null ? Order.NEWER : order(current, request.timestamp(), origin);
    if (order == Order.DUPLICATE) {
      return Optional.empty(); // the request that set this state, again: applied once already
    }
    if (order == Order.OLDER) {
      String state =
          switch (current.state()) {
            case CANCELLED -> "cancelled";
            case FIRED -> "fired";
            default -> "set";
          };
      return rejection(
          RejectionReason.SUPERSEDED,
          "this id was "
              + state
              + " by a request stamped "
              + current.requestMs()
              + ", no older than this one, stamped "
              + request.timestamp());
    }
    By by = new By(request.timestamp(), origin);
    return switch (request.action()) {
      case SCHEDULE -> schedule(id, stored, request.schedule(), by, nowMs);
      case CANCEL -> cancel(id, stored, current, by, nowMs);
      case PAUSE -> pause(id, stored, current, by);
      case RESUME -> resume(id, stored, current, by, nowMs);
      case TRIGGER -> trigger(id, stored, current, by, nowMs, firing);
      case RESCHEDULE -> reschedule(id, stored, current, request.newTiming(), by, nowMs);
    };
  }

  /**
   * The request that sets an id's new state: its timestamp and origin, which the entry keeps.
   *
   * @param requestMs its timestamp
   * @param origin where it was read, and what it was
   */
  private record By(long requestMs, Origin origin) {}

  /** Where a request stands against the one that set its id's current state. */
  private enum Order {
    /** Stamped before it: superseded. */
    OLDER,
    /** The same request again. */
    DUPLICATE,
    /** After it, or a tie it wins: it applies. */
    NEWER
  }

  /**
   * Orders a request against the one that set the current state, by timestamp. A tie with a fire or
   * a cancel goes to them: a request no newer than what fired or cancelled the id is {@code
   * SUPERSEDED}, which is what makes a dead letter replayed twice, or a retry sent again stamped
   * like the first, schedule once. A tie with a live schedule goes to the request, read later,
   * unless it is the same request again (the same content: a producer's retry), which applies as
   * nothing.
   */
  private static Order order(ScheduleEntry current, long requestMs, Origin origin) {
    if (requestMs != current.requestMs()) {
      return requestMs < current.requestMs() ? Order.OLDER : Order.NEWER;
    }
    if (current.state().marker()) {
      return Order.OLDER;
    }
    Origin before = current.origin();
    if (before.known() && origin.known() && before.digest() == origin.digest()) {
      return Order.DUPLICATE;
    }
    return Order.NEWER;
  }

  private Optional<Rejection> schedule(
      String id, Stored stored, Schedule schedule, By by, long nowMs) {
    OptionalLong due =
        schedule.timing() instanceof Timing.Once once
            ? OptionalLong.of(once.dueMs())
            : recurrence.first((CronSpec) schedule.timing(), nowMs);
    if (due.isEmpty()) {
      return rejection(
          RejectionReason.TOO_FAR,
          "the cron schedule has no occurrence between now, its end bound and the horizon");
    }
    // Stored even when due already (a past due time, a request taken in late): it fires at the
    // next punctuation, so a cancel or replacement sent right behind it and delivered in the same
    // late batch still wins. Firing it here instead fired schedules whose cancel was next in the
    // log.
    put(
        id,
        stored,
        ScheduleEntry.scheduled(
            due.getAsLong(), by.requestMs(), by.origin(), new StoredTask(schedule, 1)));
    return Optional.empty();
  }

  private Optional<Rejection> cancel(
      String id, Stored stored, ScheduleEntry current, By by, long nowMs) {
    // Keep a marker even for an id not seen yet: its schedule may still be on its way.
    mark(
        id,
        stored,
        ScheduleEntry.marker(
            State.CANCELLED, nowMs + cancelRetentionMs, by.requestMs(), by.origin()));
    if (current != null && !current.state().marker()) {
      metrics.taskCancelled();
    }
    return Optional.empty();
  }

  private Optional<Rejection> pause(String id, Stored stored, ScheduleEntry current, By by) {
    Optional<Rejection> refused =
        notLive("pause", current).or(() -> notRecurring("pause", current));
    if (refused.isPresent()) {
      return refused;
    }
    put(id, stored, current.paused(by.requestMs(), by.origin()));
    return Optional.empty();
  }

  /**
   * Resumes a paused schedule with its first occurrence after now: occurrences that fell in the
   * pause are skipped, whatever the misfire policy, since pausing means they should not fire.
   */
  private Optional<Rejection> resume(
      String id, Stored stored, ScheduleEntry current, By by, long nowMs) {
    Optional<Rejection> refused = notLive("resume", current);
    if (refused.isPresent()) {
      return refused;
    }
    refused = notRecurring("resume", current);
    if (refused.isPresent() || current.state() == State.SCHEDULED) {
      return refused; // running, not paused: nothing to do
    }
    StoredTask task = current.decodeTask().value();
    OptionalLong next = nextWhilePaused(current, (CronSpec) task.schedule().timing(), nowMs);
    if (next.isEmpty()) {
      remove(id, stored); // ended while paused
      return Optional.empty();
    }
    put(id, stored, ScheduleEntry.scheduled(next.getAsLong(), by.requestMs(), by.origin(), task));
    return Optional.empty();
  }

  /**
   * The occurrence a paused schedule fires next if resumed or triggered now: the first from now,
   * and after the one a trigger fired while paused, if any.
   */
  private OptionalLong nextWhilePaused(ScheduleEntry paused, CronSpec spec, long nowMs) {
    long from =
        paused.timeMs() == ScheduleEntry.NOT_TRIGGERED
            ? nowMs
            : Math.max(nowMs, paused.timeMs() + 1);
    return recurrence.onResume(spec, from);
  }

  /**
   * Fires the schedule's next occurrence now, as that occurrence: its due time gives it its usual
   * idempotency key and {@code delay-due-at}, so a consumer cannot tell it from the same occurrence
   * fired on time, and it never fires twice. A pending one-shot then leaves its fired marker; a
   * recurring schedule goes on from the occurrence after it (its misfire policy does not apply: an
   * operator asked for this one). A paused schedule fires the occurrence a resume now would start
   * with and stays paused; its entry remembers that occurrence, so a resume starts after it.
   */
  private Optional<Rejection> trigger(
      String id, Stored stored, ScheduleEntry current, By by, long nowMs, Firing firing) {
    Optional<Rejection> refused = noReadableTask("trigger", current);
    if (refused.isPresent()) {
      return refused;
    }
    StoredTask task = current.decodeTask().value();
    Schedule schedule = task.schedule();
    if (!(schedule.timing() instanceof CronSpec spec)) {
      Record<FiredKey, byte[]> fired =
          OutputRecords.fired(id, schedule, current.timeMs(), nowMs, 1);
      ScheduleEntry marker = firedMarker(by.requestMs(), by.origin(), nowMs);
      firing.fire(fired, nowMs, by.requestMs());
      write(id, stored, marker, true);
      return Optional.empty();
    }
    boolean paused = current.state() == State.PAUSED;
    OptionalLong occurrence =
        paused ? nextWhilePaused(current, spec, nowMs) : OptionalLong.of(current.timeMs());
    if (occurrence.isEmpty()) {
      return rejection(
          RejectionReason.NOT_APPLICABLE,
          "trigger: this paused schedule has no occurrence left before its end bound and the"
              + " horizon");
    }
    long dueMs = occurrence.getAsLong();
    // Seen at its own due time at the latest: never missed, so it fires whatever the policy.
    Recurrence.Step step =
        recurrence.onDue(spec, dueMs, task.occurrence() - 1, Math.min(nowMs, dueMs));
    StoredTask after = new StoredTask(schedule, task.occurrence() + 1);
    ScheduleEntry next;
    if (step.next().isEmpty()) {
      next = null;
    } else if (paused) {
      next = ScheduleEntry.pausedAfter(dueMs, by.requestMs(), by.origin(), after);
    } else {
      next = ScheduleEntry.scheduled(step.next().getAsLong(), by.requestMs(), by.origin(), after);
    }
    // Everything that could fail is computed: the fire goes out, then the write that records it.
    firing.fire(
        OutputRecords.fired(id, schedule, dueMs, nowMs, task.occurrence()), nowMs, by.requestMs());
    write(id, stored, next, true);
    return Optional.empty();
  }

  /**
   * Moves a live schedule to a new time, keeping its target, payload and headers: a one-shot due
   * time or a cron expression, either way round. The occurrence count starts again. A paused
   * schedule stays paused when its new timing recurs; a one-shot cannot be paused, so a paused
   * schedule must be resumed (or cancelled) before it is moved to a one-shot time.
   */
  private Optional<Rejection> reschedule(
      String id, Stored stored, ScheduleEntry current, Timing newTiming, By by, long nowMs) {
    Optional<Rejection> refused = noReadableTask("reschedule", current);
    if (refused.isPresent()) {
      return refused;
    }
    Schedule schedule = rescheduled(current.decodeTask().value().schedule(), newTiming);
    boolean paused = current.state() == State.PAUSED;
    if (paused && !schedule.recurring()) {
      return rejection(
          RejectionReason.NOT_APPLICABLE,
          "reschedule: this schedule is paused and a one-shot cannot be; resume it first, or give"
              + " a cron expression");
    }
    if (paused) {
      StoredTask task = new StoredTask(schedule, 1);
      put(
          id,
          stored,
          ScheduleEntry.pausedAfter(
              ScheduleEntry.NOT_TRIGGERED, by.requestMs(), by.origin(), task));
      return Optional.empty();
    }
    return schedule(id, stored, schedule, by, nowMs);
  }

  /** The schedule with a new timing; what it delivers, and where, stay. */
  static Schedule rescheduled(Schedule schedule, Timing timing) {
    return new Schedule(schedule.target(), timing, schedule.payload(), schedule.headers());
  }

  /** Why an action does not apply to an id with no live schedule, if it has none. */
  private static Optional<Rejection> notLive(String action, ScheduleEntry current) {
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
   * Why an action that needs the task of a live schedule does not apply, if it does not: there is
   * no live schedule, or its task cannot be read.
   */
  private static Optional<Rejection> noReadableTask(String action, ScheduleEntry current) {
    return notLive(action, current).or(() -> unreadable(action, current));
  }

  private static Optional<Rejection> unreadable(String action, ScheduleEntry current) {
    return current.decodeTask() instanceof Decoded.Unreadable<StoredTask>
        ? rejection(
            RejectionReason.UNREADABLE_TASK,
            action + ": the task stored for this id cannot be read; cancel or replace the schedule")
        : Optional.empty();
  }

  /**
   * Why a pause or resume does not apply to a live entry's task, if it does not: the task cannot be
   * read, or it is a one-shot.
   */
  private static Optional<Rejection> notRecurring(String action, ScheduleEntry current) {
    Optional<Rejection> unreadable = unreadable(action, current);
    if (unreadable.isPresent()) {
      return unreadable;
    }
    if (!current.decodeTask().value().schedule().recurring()) {
      return rejection(
          RejectionReason.NOT_APPLICABLE,
          action + " applies to recurring schedules; this one is one-shot");
    }
    return Optional.empty();
  }

  /**
   * Handles an entry that came due: fires its task and stores a recurring schedule's next
   * occurrence, or turns a fired one-shot into its marker. An entry that cannot be decoded is
   * dead-lettered with its stored bytes, never dropped and never a crash.
   *
   * <p>Everything that could fail on this entry is computed before the fire goes out, and the write
   * that records it comes last (see {@link UnexpectedFailure}).
   */
  void onDue(MeteredScheduleStore.Due due, long nowMs, Firing firing) {
    held.handled(due);
    String id = due.stored().id();
    Stored stored = due.stored();
    if (stored.entry() instanceof Decoded.Unreadable<ScheduleEntry> damaged) {
      // Its header cannot be read, so the store indexed it at the start of the due index.
      unreadable(id, OptionalLong.empty(), stored.raw(), damaged.error(), nowMs, firing);
      write(id, stored, null, true);
      return;
    }
    ScheduleEntry entry = due.entry();
    Decoded<StoredTask> decoded = entry.decodeTask();
    if (decoded instanceof Decoded.Unreadable<StoredTask> unreadable) {
      unreadable(id, OptionalLong.of(due.dueMs()), entry.task(), unreadable.error(), nowMs, firing);
      write(id, stored, null, true);
      return;
    }
    StoredTask task = decoded.value();
    if (!(task.schedule().timing() instanceof CronSpec spec)) {
      Record<FiredKey, byte[]> fired =
          OutputRecords.fired(id, task.schedule(), due.dueMs(), nowMs, 1);
      ScheduleEntry marker = firedMarker(entry.requestMs(), entry.origin(), nowMs);
      firing.fire(fired, nowMs, due.dueMs());
      write(id, stored, marker, true);
      return;
    }
    Recurrence.Step step = recurrence.onDue(spec, due.dueMs(), task.occurrence() - 1, nowMs);
    ScheduleEntry next =
        step.next().isEmpty()
            ? null
            : ScheduleEntry.scheduled(
                step.next().getAsLong(),
                entry.requestMs(),
                entry.origin(),
                new StoredTask(task.schedule(), task.occurrence() + (step.fire() ? 1 : 0)));
    if (step.fire()) {
      firing.fire(
          OutputRecords.fired(id, task.schedule(), due.dueMs(), nowMs, task.occurrence()),
          nowMs,
          due.dueMs());
    } else {
      Delivery.afterward(metrics::occurrenceSkipped);
    }
    write(id, stored, next, true);
  }

  /**
   * Dead-letters a due entry kdelay failed on unexpectedly, and forgets it: the partition goes on
   * with the next entry. A one-shot is dead-lettered as it would have fired (so it can be
   * replayed), anything else with its stored bytes.
   */
  void failed(MeteredScheduleStore.Due due, long nowMs, RuntimeException failure, Firing firing) {
    held.handled(due);
    String id = due.stored().id();
    String errorId = UnexpectedFailure.errorId(id + "@" + due.dueMs(), failure);
    log.error(
        "event=internal-error error_id={} id={} due={} response=dead-letter",
        errorId,
        LogValues.quote(id),
        due.dueMs(),
        failure);
    Rejection rejection = UnexpectedFailure.rejection("task", errorId, failure);
    Record<byte[], byte[]> deadLetter;
    try {
      StoredTask task = due.entry().decodeTask().value();
      if (task.schedule().recurring()) {
        throw new IllegalStateException("a recurring schedule is dead-lettered whole");
      }
      deadLetter =
          OutputRecords.undeliverable(
              OutputRecords.fired(id, task.schedule(), due.dueMs(), nowMs, task.occurrence()),
              rejection,
              nowMs);
    } catch (RuntimeException notAFire) {
      deadLetter =
          OutputRecords.stored(
              id,
              OptionalLong.of(due.dueMs()),
              due.stored().raw(),
              RejectionReason.INTERNAL,
              rejection.message(),
              nowMs);
    }
    firing.deadLetter(OutputRecords.withErrorId(deadLetter, errorId), RejectionReason.INTERNAL);
    write(id, due.stored(), null, true);
  }

  private static void unreadable(
      String id, OptionalLong dueMs, byte[] stored, String problem, long nowMs, Firing firing) {
    log.error(
        "event=unreadable-task id={} due={} response=dead-letter problem={}; the schedule store may"
            + " be corrupt, or written by a newer kdelay",
        LogValues.quote(id),
        dueMs.isPresent() ? Long.toString(dueMs.getAsLong()) : "-",
        LogValues.quote(problem));
    firing.deadLetter(
        OutputRecords.unreadable(id, dueMs, stored, problem, nowMs),
        RejectionReason.UNREADABLE_TASK);
  }

  /** How many ids have a write held; for tests. */
  int heldCount() {
    return held.count();
  }

  /**
   * What the next due batch may take beside the held writes (see {@link HeldWrites#room}); called
   * once at the start of each due scan.
   */
  HeldWrites.Room heldRoom(int maxFires, long maxBytes) {
    return held.room(maxFires, maxBytes);
  }

  /** Whether the id has a write held: its due entry in the store was handled already. */
  boolean isHeld(String id) {
    return held.contains(id);
  }

  /** Notes that a commit of the task began (see {@link HeldWrites#committing}). */
  void committing() {
    held.committing();
  }

  /**
   * Makes the held writes if a commit has flushed their fires since they were made; called first in
   * every punctuation and request.
   */
  void releaseIfCommitted() {
    held.releaseIfCommitted().forEach(write -> make(write.getKey(), write.getValue()));
  }

  /**
   * What a one-shot leaves when it fired: its marker for the fired retention, as a cancel is
   * remembered, or nothing when the retention is 0. Either way one changelog record.
   */
  private ScheduleEntry firedMarker(long requestMs, Origin origin, long nowMs) {
    return firedRetentionMs == 0
        ? null
        : ScheduleEntry.marker(State.FIRED, nowMs + firedRetentionMs, requestMs, origin);
  }

  private void put(String id, Stored previous, ScheduleEntry next) {
    write(id, previous, next, false);
  }

  private void mark(String id, Stored previous, ScheduleEntry marker) {
    write(id, previous, marker, false);
  }

  private void remove(String id, Stored previous) {
    write(id, previous, null, false);
  }

  /**
   * Changes an id's entry: at once, or held when it records a fire and fire writes are held.
   *
   * @param next the new entry, or null to forget the id
   * @param afterFire whether the write records a fire (or a dead letter) made just before
   */
  private void write(String id, Stored previous, ScheduleEntry next, boolean afterFire) {
    if (afterFire && holdFireWrites) {
      held.hold(id, new Write(previous, next));
    } else {
      make(id, new Write(previous, next));
    }
  }

  /** Makes a write in the store and tells the gauges how the id's state changed. */
  private void make(String id, Write write) {
    ScheduleEntry next = write.next();
    store.write(id, write.previous(), next);
    Delivery.afterward(
        () ->
            gauges.transition(
                idBytes(id), stateOf(write.previous()), next == null ? null : next.state()));
  }

  /** The state of what was stored; null for nothing, or for an entry that cannot be read. */
  private static State stateOf(Stored stored) {
    return stored == null || !stored.entry().isReadable() ? null : stored.entry().value().state();
  }

  private static Bytes idBytes(String id) {
    return Bytes.wrap(id.getBytes(StandardCharsets.UTF_8));
  }

  private static Optional<Rejection> rejection(RejectionReason reason, String message) {
    return Optional.of(new Rejection(reason, message));
  }
}

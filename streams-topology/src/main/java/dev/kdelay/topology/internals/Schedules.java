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
import dev.kdelay.topology.internals.delivery.FiredKey;
import dev.kdelay.topology.internals.delivery.Firing;
import dev.kdelay.topology.internals.delivery.OutputRecords;
import dev.kdelay.topology.internals.store.MeteredScheduleStore;
import dev.kdelay.topology.internals.store.MeteredScheduleStore.Stored;
import dev.kdelay.topology.internals.store.ScheduleEntry;
import dev.kdelay.topology.internals.store.ScheduleEntry.Origin;
import dev.kdelay.topology.internals.store.ScheduleEntry.State;
import java.util.Optional;
import java.util.OptionalLong;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The schedules of one partition: applies requests to the {@link MeteredScheduleStore}. Each id has
 * one entry, so schedule, cancel, replace, pause and resume cost a point read and one write
 * whatever the number pending. What an entry does when it comes due is {@link DueEntries}'.
 *
 * <p>Requests for an id normally arrive in order on one partition. One that a client with another
 * partitioner sent elsewhere arrives later, through the reroute topic, so requests apply in the
 * order of their record timestamps: a request older than the one that set the current state is
 * superseded (and dead-lettered, never dropped silently). A cancel, and a fired one-shot, leave a
 * marker for their retention so that an older schedule arriving late cannot bring the id back.
 *
 * <p>Every write goes through {@link ScheduleWrites}, which tells the partition's gauges how the
 * id's state changed.
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
  private final ScheduleWrites writes;
  private final DueEntries due;
  private final long cancelRetentionMs;
  private final Recurrence recurrence;
  private final TenantPending pending;
  private final DelayMetrics metrics;

  Schedules(
      MeteredScheduleStore store,
      ScheduleWrites writes,
      DueEntries due,
      long cancelRetentionMs,
      Recurrence recurrence,
      DelayMetrics metrics,
      TenantPending pending) {
    this.store = store;
    this.pending = pending;
    this.writes = writes;
    this.due = due;
    this.cancelRetentionMs = cancelRetentionMs;
    this.recurrence = recurrence;
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
    writes.releaseIfCommitted();
    if (writes.isHeld(id)) {
      // The processor sends such a request round through the reroute topic first (HeldWrites).
      throw new IllegalStateException("a request for " + id + ", whose write is held, applied");
    }
    Stored stored = store.lookup(id).orElse(null);
    if (stored != null
        && stored.entry() instanceof Decoded.Unreadable<ScheduleEntry> damaged
        && request.action() != Action.SCHEDULE
        && request.action() != Action.CANCEL) {
      // A schedule or a cancel replaces the whole entry, so it needs nothing from it; any other
      // action would need its task.
      return rejection(
          RejectionReason.UNREADABLE_TASK,
          "the stored state of this id cannot be read ("
              + damaged.error()
              + "); cancel or replace the schedule");
    }
    ScheduleEntry current = ordering(stored, nowMs);
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
      case SCHEDULE -> schedule(id, stored, current, request.schedule(), by, nowMs);
      case CANCEL -> cancel(id, stored, current, by, nowMs);
      case PAUSE -> pause(id, stored, current, by);
      case RESUME -> resume(id, stored, current, by, nowMs);
      case TRIGGER -> trigger(id, stored, current, by, nowMs, firing);
      case RESCHEDULE -> reschedule(id, stored, current, request.newTiming(), by, nowMs);
    };
  }

  /**
   * Takes in an id's entry moved here from another deployment ({@link
   * dev.kdelay.topology.ScheduleMove}): it applies as the request that set it would have, in
   * timestamp order against what this store holds for the id. A request sent here after that one (a
   * cancel, a reschedule) wins whether it arrived before the entry or after; the same entry moved
   * twice applies once. A marker past its retention orders nothing and is left out.
   *
   * @param moved the entry as the other deployment held it
   * @return why it could not be taken in, or empty if it was (or was already)
   */
  Optional<Rejection> takeIn(String id, ScheduleEntry moved, long nowMs) {
    writes.releaseIfCommitted();
    if (writes.isHeld(id)) {
      throw new IllegalStateException("a moved entry for " + id + ", whose write is held, applied");
    }
    if (moved.state().marker() && moved.timeMs() <= nowMs) {
      return Optional.empty();
    }
    Stored stored = store.lookup(id).orElse(null);
    ScheduleEntry current = ordering(stored, nowMs);
    if (moved.equals(current)) {
      return Optional.empty(); // moved once already
    }
    Order order = current == null ? Order.NEWER : order(current, moved.requestMs(), moved.origin());
    if (order == Order.DUPLICATE) {
      return Optional.empty();
    }
    if (order == Order.OLDER) {
      return rejection(
          RejectionReason.SUPERSEDED,
          "this schedule moved here, but a request stamped "
              + current.requestMs()
              + " already set this id, no older than the one that set the moved state, stamped "
              + moved.requestMs());
    }
    put(id, stored, moved);
    return Optional.empty();
  }

  /**
   * The entry a new request for an id is ordered against: none if the id has no entry, an
   * unreadable one (which a request replaces whole), or a marker past its expiry (a sweep forgets
   * it at the next punctuation, and a restore may have brought it back until then; either way the
   * retention is over and it orders nothing).
   */
  private static ScheduleEntry ordering(Stored stored, long nowMs) {
    if (stored == null || !(stored.entry() instanceof Decoded.Readable<ScheduleEntry> readable)) {
      return null;
    }
    ScheduleEntry current = readable.value();
    return current.state().marker() && current.timeMs() <= nowMs ? null : current;
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
      String id, Stored stored, ScheduleEntry current, Schedule schedule, By by, long nowMs) {
    boolean replaces =
        current != null && (current.state() == State.SCHEDULED || current.state() == State.PAUSED);
    if (!replaces) {
      Optional<Rejection> full = pending.refusesNew(id);
      if (full.isPresent()) {
        return full;
      }
    }
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
    // An occurrence a fire-rate limit deferred before the pause was skipped by it, as any other.
    StoredTask task = current.decodeTask().value().undeferred();
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
      // A one-shot a fire-rate limit deferred fires as the task that was due (a trigger is not
      // limited: an operator asked for it).
      long dueMs = task.firesAsDueMs(current.timeMs());
      Record<FiredKey, byte[]> fired = OutputRecords.fired(id, schedule, dueMs, nowMs, 1);
      ScheduleEntry marker = due.firedMarker(by.requestMs(), by.origin(), nowMs);
      firing.fire(fired, nowMs, by.requestMs());
      writes.write(id, stored, marker, true);
      return Optional.empty();
    }
    boolean paused = current.state() == State.PAUSED;
    OptionalLong occurrence =
        paused
            ? nextWhilePaused(current, spec, nowMs)
            : OptionalLong.of(task.firesAsDueMs(current.timeMs()));
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
    writes.write(id, stored, next, true);
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
    return schedule(id, stored, current, schedule, by, nowMs);
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

  private void put(String id, Stored previous, ScheduleEntry next) {
    writes.write(id, previous, next, false);
  }

  private void mark(String id, Stored previous, ScheduleEntry marker) {
    writes.write(id, previous, marker, false);
  }

  private void remove(String id, Stored previous) {
    writes.write(id, previous, null, false);
  }

  private static Optional<Rejection> rejection(RejectionReason reason, String message) {
    return Optional.of(new Rejection(reason, message));
  }
}

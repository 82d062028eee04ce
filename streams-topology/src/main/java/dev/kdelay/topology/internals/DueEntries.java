package dev.kdelay.topology.internals;

import dev.kdelay.schemas.CronSpec;
import dev.kdelay.schemas.LogValues;
import dev.kdelay.schemas.Rejection;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.schemas.StoredTask;
import dev.kdelay.schemas.TenantIds;
import dev.kdelay.topology.Decoded;
import dev.kdelay.topology.DelayMetrics;
import dev.kdelay.topology.internals.delivery.Delivery;
import dev.kdelay.topology.internals.delivery.FiredKey;
import dev.kdelay.topology.internals.delivery.Firing;
import dev.kdelay.topology.internals.delivery.OutputRecords;
import dev.kdelay.topology.internals.limits.FireSlots;
import dev.kdelay.topology.internals.store.MeteredScheduleStore;
import dev.kdelay.topology.internals.store.MeteredScheduleStore.Stored;
import dev.kdelay.topology.internals.store.ScheduleEntry;
import dev.kdelay.topology.internals.store.ScheduleEntry.Origin;
import dev.kdelay.topology.internals.store.ScheduleEntry.State;
import java.util.OptionalLong;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What an entry that came due does: a one-shot fires and leaves its marker, a recurring schedule
 * fires (or, by its misfire policy, skips) and stores its next occurrence, and an entry that cannot
 * be read or that kdelay failed on is dead-lettered. A recurring schedule stores only its next
 * occurrence, written in the same transaction as the fired record, so a crash can neither lose nor
 * double an occurrence.
 *
 * <p>Runs on the stream thread only.
 */
final class DueEntries {

  private static final Logger log = LoggerFactory.getLogger(DueEntries.class);

  private final ScheduleWrites writes;
  private final Recurrence recurrence;
  private final DelayMetrics metrics;
  private final long firedRetentionMs;
  private final FireSlots slots;

  DueEntries(
      ScheduleWrites writes,
      Recurrence recurrence,
      DelayMetrics metrics,
      long firedRetentionMs,
      FireSlots slots) {
    this.writes = writes;
    this.recurrence = recurrence;
    this.metrics = metrics;
    this.firedRetentionMs = firedRetentionMs;
    this.slots = slots;
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
    // Kept under C2's 325 bytecodes for a hot method (FreqInlineSize), with the rare cases in
    // methods of their own: the punctuation's loop (FirePunctuator.fireDue), compiled before the
    // instance is ready, then compiles this one into itself. At 482 bytecodes it was not inlined,
    // and C2 compiled it only during an instance's first burst, which ran in C1's code meanwhile.
    writes.handled(due);
    Stored stored = due.stored();
    if (stored.entry() instanceof Decoded.Unreadable<ScheduleEntry> damaged) {
      // Its header cannot be read, so the store indexed it at the start of the due index.
      unreadable(due, OptionalLong.empty(), stored.raw(), damaged.error(), nowMs, firing);
      return;
    }
    ScheduleEntry entry = due.entry();
    Decoded<StoredTask> decoded = entry.decodeTask();
    if (decoded instanceof Decoded.Unreadable<StoredTask> unreadable) {
      unreadable(
          due, OptionalLong.of(due.dueMs()), entry.task(), unreadable.error(), nowMs, firing);
      return;
    }
    StoredTask task = decoded.value();
    if (task.schedule().timing() instanceof CronSpec spec) {
      onRecurringDue(due, task, spec, nowMs, firing);
      return;
    }
    // A deferred entry came due at its slot: it fires as the occurrence that was due.
    if (deferIfLimited(due, task, nowMs)) {
      return;
    }
    long dueMs = task.firesAsDueMs(due.dueMs());
    String id = stored.id();
    Record<FiredKey, byte[]> fired = OutputRecords.fired(id, task.schedule(), dueMs, nowMs, 1);
    ScheduleEntry marker = firedMarker(entry.requestMs(), entry.origin(), nowMs);
    firing.fire(fired, nowMs, dueMs);
    writes.write(id, stored, marker, true);
  }

  /** {@link #onDue} for a recurring schedule: fires or skips, and stores the next occurrence. */
  private void onRecurringDue(
      MeteredScheduleStore.Due due, StoredTask task, CronSpec spec, long nowMs, Firing firing) {
    String id = due.stored().id();
    ScheduleEntry entry = due.entry();
    boolean deferred = task.deferredDueMs().isPresent();
    long dueMs = task.firesAsDueMs(due.dueMs());
    // A deferred occurrence passed its misfire policy when it came due: seen at its due time, it
    // fires whatever the policy, and the occurrences after it are judged by theirs.
    Recurrence.Step step =
        recurrence.onDue(spec, dueMs, task.occurrence() - 1, deferred ? dueMs : nowMs);
    if (step.fire() && deferIfLimited(due, task, nowMs)) {
      return;
    }
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
          OutputRecords.fired(id, task.schedule(), dueMs, nowMs, task.occurrence()), nowMs, dueMs);
    } else {
      Delivery.afterward(metrics::occurrenceSkipped);
    }
    writes.write(id, due.stored(), next, true);
  }

  /**
   * Defers a task that came due to its topic's next free slot if a fire-rate limit holds it back:
   * its entry is rewritten due at the slot, keeping the due time it fires with. Nothing goes out
   * now; it stays cancellable, and fires at the slot. One already deferred is settled again at a
   * later slot if it came to its slot late ({@link FireSlots#atSlot}).
   *
   * @return whether it was deferred
   */
  private boolean deferIfLimited(MeteredScheduleStore.Due due, StoredTask task, long nowMs) {
    String id = due.stored().id();
    String topic = task.schedule().target().topic();
    String tenant = TenantIds.tenantOf(id);
    // One deferred already asks again only if its slot came late (FireSlots.atSlot)
    OptionalLong slot =
        task.deferredDueMs().isEmpty()
            ? slots.take(topic, tenant, nowMs, due.dueMs())
            : slots.atSlot(topic, tenant, id, nowMs, due.dueMs());
    if (slot.isEmpty()) {
      return false;
    }
    ScheduleEntry entry = due.entry();
    long slotMs = slot.getAsLong();
    writes.write(
        id,
        due.stored(),
        ScheduleEntry.scheduled(
            slotMs,
            entry.requestMs(),
            entry.origin(),
            task.deferredFrom(task.firesAsDueMs(due.dueMs()))),
        false);
    long deferredMs = slotMs - due.dueMs();
    Delivery.afterward(() -> metrics.fireDeferred(deferredMs));
    return true;
  }

  /** Saves the fire-rate limits' clocks after a batch of due entries, before its commit. */
  void batchDone() {
    slots.save();
  }

  /**
   * Dead-letters a due entry kdelay failed on unexpectedly, and forgets it: the partition goes on
   * with the next entry. A one-shot is dead-lettered as it would have fired (so it can be
   * replayed), anything else with its stored bytes.
   */
  void failed(MeteredScheduleStore.Due due, long nowMs, RuntimeException failure, Firing firing) {
    writes.handled(due);
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
      long dueMs = task.firesAsDueMs(due.dueMs());
      deadLetter =
          OutputRecords.undeliverable(
              OutputRecords.fired(id, task.schedule(), dueMs, nowMs, task.occurrence()),
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
    writes.write(id, due.stored(), null, true);
  }

  /** Dead-letters a due entry that cannot be read with its stored bytes, and forgets it. */
  private void unreadable(
      MeteredScheduleStore.Due due,
      OptionalLong dueMs,
      byte[] stored,
      String problem,
      long nowMs,
      Firing firing) {
    String id = due.stored().id();
    log.error(
        "event=unreadable-task id={} due={} response=dead-letter problem={}; the schedule store may"
            + " be corrupt, or written by a newer kdelay",
        LogValues.quote(id),
        dueMs.isPresent() ? Long.toString(dueMs.getAsLong()) : "-",
        LogValues.quote(problem));
    firing.deadLetter(
        OutputRecords.unreadable(id, dueMs, stored, problem, nowMs),
        RejectionReason.UNREADABLE_TASK);
    writes.write(id, due.stored(), null, true);
  }

  /**
   * What a one-shot leaves when it fired: its marker for the fired retention, as a cancel is
   * remembered, or nothing when the retention is 0. Either way one changelog record.
   */
  ScheduleEntry firedMarker(long requestMs, Origin origin, long nowMs) {
    return firedRetentionMs == 0
        ? null
        : ScheduleEntry.marker(State.FIRED, nowMs + firedRetentionMs, requestMs, origin);
  }
}

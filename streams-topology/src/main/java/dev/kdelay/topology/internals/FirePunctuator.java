package dev.kdelay.topology.internals;

import dev.kdelay.topology.DelayMetrics;
import dev.kdelay.topology.PartitionGauges;
import dev.kdelay.topology.internals.delivery.Delivery;
import dev.kdelay.topology.internals.delivery.FireCommits;
import dev.kdelay.topology.internals.delivery.FireSteps;
import dev.kdelay.topology.internals.delivery.Firing;
import dev.kdelay.topology.internals.store.MeteredScheduleStore;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.apache.kafka.streams.processor.Punctuator;
import org.apache.kafka.streams.processor.api.ProcessorContext;

/**
 * Fires due tasks on wall-clock time.
 *
 * <p>A punctuation with nothing due returns from memory. Otherwise it takes a batch of due entries
 * in due order, at most {@code maxFires} of them and at most {@link #MAX_BATCH_BYTES} of stored
 * bytes, so that the stream thread gets back to polling, heartbeats and commits under a backlog,
 * and no more than the task's share of the thread's transaction ({@link FireCommits#allowance}), so
 * that a burst becomes visible as it drains. The scan that found them is closed by then; each is
 * fired (or dead-lettered) and its entry rewritten after, in the order they fire as ({@link
 * DueOrder}: a task a fire-rate limit deferred by its own due time, not its slot's). Then it asks
 * for a commit (see {@link FireCommits}; each fire is noted there through {@link Delivery}): under
 * exactly-once the fired records become visible to {@code read_committed} consumers when the
 * transaction commits, and waiting for the regular commit interval would add up to that interval to
 * every task's lateness. A punctuation also asks for the commit of fires its interval held back,
 * including those a request made.
 *
 * <p>At least once, the writes of a batch are held until the commit that flushes its records (see
 * {@link ScheduleWrites}). Their entries are still due in the store until then: the next scan
 * starts after the last entry handled, and none takes more than a batch's worth while writes wait.
 * An entry that came due meanwhile with an earlier due time waits for the commit. The commit is
 * asked for on the same cadence as exactly once: asking at every punctuation made Kafka Streams
 * commit in every loop, halving the records it takes in per loop each time, and intake fell to a
 * few hundred requests a second.
 *
 * <p>An entry whose id has a request that was read and not yet applied (buffered by the consumer,
 * see {@link PolledRequests}, or waiting aside for its target topic, see {@link TopicWaits}) stays
 * due until that request is applied: requests apply in the order they were written, also when a
 * schedule was overdue by the time it was read.
 *
 * <p>Exactly once: the fired record, the entry's change (its fired marker, or for cron the next
 * occurrence) are all in the same transaction, with the input offsets. A crash before the commit
 * aborts all of them and the new owner fires the task again from the restored store; a crash after
 * it leaves nothing to redo.
 *
 * <p>After each punctuation the partition's gauges learn the next due time and, when a backlog
 * remains, how far behind it is: the due time of the last entry handled, a lower bound of the
 * oldest one left. A punctuation with nothing due only compares two longs there. The store's
 * sentinels are the gauges' own: {@code Long.MIN_VALUE} before the first look ({@link
 * PartitionGauges#UNKNOWN}), {@code Long.MAX_VALUE} when nothing but paused entries is stored
 * ({@link PartitionGauges#NONE}).
 *
 * <p>Runs on the stream thread only.
 */
final class FirePunctuator implements Punctuator {

  private final ProcessorContext<Object, Object> context;
  private final MeteredScheduleStore store;
  private final ScheduleWrites writes;
  private final DueEntries due;
  private final Firing delivery;
  private final int maxFires;
  private final FireCommits commits;
  private final DelayMetrics metrics;
  private final PartitionState gauges;
  private final FireSteps steps;
  private final TaskFence fence;
  private final Predicate<String> unapplied;

  /**
   * The longest a due entry waits for requests for its id that were read and not yet applied
   * ({@code unapplied}): a producer that sends requests for one id without pause must not hold its
   * fire for ever. Each such wait normally lasts one pass of the stream thread's loop.
   */
  static final long MAX_WAIT_FOR_REQUESTS_MS = PolledRequests.STALE_NANOS / 1_000_000;

  /**
   * The ids whose due entries waited for requests in the last punctuation that looked at due
   * entries, and since when (ms) each has waited without a break; empty nearly always.
   */
  private Map<String, Long> waitedLastTime = Map.of();

  /** The same for this punctuation, while it runs; null until an entry waits. */
  private Map<String, Long> waitingNow;

  /**
   * The most stored bytes one punctuation takes from the store: with {@code maxFires} it bounds the
   * memory a batch holds and how long the stream thread is away from polling.
   */
  static final long MAX_BATCH_BYTES = 8L * 1024 * 1024;

  FirePunctuator(
      ProcessorContext<Object, Object> context,
      MeteredScheduleStore store,
      ScheduleWrites writes,
      DueEntries due,
      Firing delivery,
      int maxFires,
      FireCommits commits,
      DelayMetrics metrics,
      PartitionState gauges,
      FireSteps steps,
      TaskFence fence,
      Predicate<String> unapplied) {
    this.context = context;
    this.store = store;
    this.writes = writes;
    this.due = due;
    this.delivery = delivery;
    this.maxFires = maxFires;
    this.commits = commits;
    this.metrics = metrics;
    this.gauges = gauges;
    this.steps = steps;
    this.fence = fence;
    this.unapplied = unapplied;
  }

  @Override
  public void punctuate(long timestamp) {
    long now = context.currentSystemTimeMs();
    // The store collects the fires' writes and makes them in write batches (RocksDBScheduleStore).
    fireDue(now);
    // One request for this punctuation's fires and those its interval held back.
    commits.maybeRequest(context, now);
  }

  private void fireDue(long now) {
    writes.releaseIfCommitted();
    // Expired markers go without a changelog record; answered from memory until one expires.
    store.sweep(now, maxFires);
    HeldWrites.Room room = writes.heldRoom(maxFires, MAX_BATCH_BYTES);
    if (room.held()) {
      // At least once: the held writes wait for the commit that flushes their records, asked for
      // on the usual cadence (also those of fires a request made). Their entries stay due
      // until then and are passed over; once a batch's worth (in count or bytes) waits, nothing
      // more is taken, so what the held writes keep in memory is bounded as a batch is.
      commits.fired(0);
      if (room.full()) {
        return;
      }
    }
    if (!store.mayHaveDue(now)) {
      // Nothing overdue: the oldest waiting entry is the one due next.
      long next = store.nextDue();
      gauges.punctuated(next, next);
      return;
    }
    if (!fence.mayFire(context)) {
      return; // exactly once, a task fires once its commits carry its offsets (TaskFence)
    }
    int allowed = Math.min(Math.min(room.fires(), steps.allowed()), commits.allowance());
    if (allowed == 0) {
      return; // the last step's commit, or the commit of the thread's full transaction, is pending
    }
    long started = System.nanoTime();
    // The scan is closed when due() returns: firing writes the store, never into an open scan.
    List<MeteredScheduleStore.Due> batch =
        DueOrder.of(store.due(now, allowed, room.bytes(), room.after()));
    long lastDue = Long.MIN_VALUE;
    int handled = 0;
    for (MeteredScheduleStore.Due due : batch) {
      if (room.held() && writes.isHeld(due.stored().id())) {
        continue; // a trigger's fire, made by a request; its write waits for the commit
      }
      if (waitsForRequests(due.stored().id(), now)) {
        store.leftDue(due); // a request for this id was read and applies first; then it is due
        continue;
      }
      lastDue = Math.max(lastDue, due.dueMs());
      try {
        this.due.onDue(due, now, delivery);
      } catch (RuntimeException failure) {
        if (UnexpectedFailure.concernsThread(failure)) {
          throw failure;
        }
        // This entry's failure, not the thread's: it goes to the dead-letter topic, the rest fire.
        this.due.failed(due, now, failure, delivery);
      }
      handled++;
    }
    // The fire-rate limits' clocks go into the transaction of the entries they deferred.
    this.due.batchDone();
    waitedLastTime = waitingNow == null ? Map.of() : waitingNow;
    waitingNow = null;
    // A burst: the task's share of the transaction is fired, so it commits now (FireCommits).
    commits.spent(context, now, handled);
    if (steps.fired(handled)) {
      // After a refusal: this step's commit now, whatever the commit interval (see FireSteps).
      context.commit();
    }
    long next = store.nextDue();
    // A backlog remains when next <= now: the oldest of it is due no earlier than the last handled.
    gauges.punctuated(next, handled > 0 && next <= now ? lastDue : next);
    if (handled > 0) {
      long elapsed = System.nanoTime() - started;
      int count = handled;
      Delivery.afterward(() -> metrics.punctuated(elapsed, count));
    }
  }

  /**
   * Whether a due entry waits, this punctuation, for requests for its id read and not yet applied:
   * yes while there are such requests, for at most {@link #MAX_WAIT_FOR_REQUESTS_MS} in a row. An
   * entry that did not wait in the last punctuation that looked starts a new wait.
   */
  private boolean waitsForRequests(String id, long now) {
    if (!unapplied.test(id)) {
      return false;
    }
    long since = waitedLastTime.getOrDefault(id, now);
    if (now - since >= MAX_WAIT_FOR_REQUESTS_MS) {
      return false; // waited long enough: it fires
    }
    if (waitingNow == null) {
      waitingNow = new HashMap<>();
    }
    waitingNow.put(id, since);
    return true;
  }
}

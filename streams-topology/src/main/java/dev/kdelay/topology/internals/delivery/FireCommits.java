package dev.kdelay.topology.internals.delivery;

import dev.kdelay.topology.internals.store.MeteredScheduleStore;
import java.util.IdentityHashMap;
import java.util.Map;
import org.apache.kafka.streams.processor.api.ProcessingContext;

/**
 * Asks Kafka Streams to commit soon after records were fired, but only after the stream thread has
 * had a minimum time to work since its last commit ended.
 *
 * <p>Under exactly-once a fired record becomes visible to {@code read_committed} consumers when its
 * transaction commits. Waiting for the regular commit interval would add up to that interval to
 * every task's lateness; committing after every punctuation that fired anything costs one
 * transaction (with its markers on every partition it touched) per punctuation. So a quiet instance
 * commits at once after a fire, and a busy one works for at least the interval between the end of
 * one commit and the request of the next, with every fire of that time in one transaction.
 *
 * <p>The interval counts from the end of the last commit, not from the last request: a commit
 * blocks the stream thread, and one that takes longer than the interval would otherwise be followed
 * at once by another, leaving the thread a single pass over its tasks between transactions
 * (transactions of a dozen records, most of the thread's time waiting for commits).
 *
 * <p>How the end is seen: Kafka Streams offers no public callback after a commit, and neither
 * {@code ProcessorContext.commit()} (a request) nor {@code TaskMetadata}/{@code ThreadMetadata} (no
 * commit times) say when one ended. But every commit of a task first prepares its stores, on the
 * stream thread, synchronously with the transaction commit that follows: the schedule store hears
 * it through {@link MeteredScheduleStore#flushCache} (not {@code StateStore.commit}, which
 * exactly-once calls only at checkpoints) and passes it on to {@link #committed()}. The next
 * punctuation or request of the thread runs after the commit ended, so it takes its own time as the
 * end. This replaces reading the thread's {@code commit-total} metric, which meant searching Kafka
 * Streams' metric registry by name. Where no commit is seen (a commit that found nothing to do),
 * the interval counts from the request.
 *
 * <p>A thread that fires tasks more than {@link #BEHIND_MS} after it could first have fired them is
 * behind (a backlog after an outage, a burst, more load than it can carry): their lateness is set
 * by the backlog, not by the commit, so it works for the longer backlog interval between commits,
 * which carries more fires per transaction and drains the backlog sooner. It goes back to the short
 * interval as soon as a commit passes without such a fire.
 *
 * <p>Kafka Streams commits every {@code commit.interval.ms} anyway, counted from its own last such
 * commit: a commit asked for does not move that clock ({@code StreamThread.maybeCommit}, Kafka
 * Streams 4.3). So an interval at or above the regular one asks for nothing: the regular commit
 * carries the fires as soon. Asking as well added a commit out of phase with the regular one: a
 * thread that was behind committed in pairs, a full transaction and a nearly empty one right after
 * it, twice the transactions (and their markers on every partition) of what it fired. Until the
 * thread has seen a commit, it still asks: Kafka Streams' first regular commit may run before the
 * thread has any task, so the first one that carries fires comes a whole interval later.
 *
 * <p>Fires are noted one by one ({@link #fired}); the commit is asked for once per punctuation and
 * after a trigger request ({@link #maybeRequest}). A commit includes every fire made before it
 * began, also those made after it was asked for: they need no commit of their own. So each commit
 * that begins counts up the thread's commit count, and a task's pending fires, or the thread's
 * lateness, are settled once a commit began after them.
 *
 * <p>A burst (many tasks due at once) becomes visible as it drains, not when it has all fired: the
 * first transaction of a burst carries at most {@code maxFiresPerCommit} fires of the thread's
 * punctuations ({@link #allowance}), and each transaction the burst fills allows twice as many to
 * the next, up to {@link #MAX_GROWTH} doublings. So the first fires are visible soon after the due
 * time, and a burst of N fires takes about log2(N / maxFiresPerCommit) commits instead of N /
 * maxFiresPerCommit. Each commit costs the thread a producer flush and a transaction round trip,
 * and the broker a marker on every partition the transaction wrote: with a fixed 4,000 fires per
 * transaction, 100,000 tasks due at once drained at 69,000 fires/s; doubling, at 85,000 (the
 * benchmark's burst section). A fire in a burst's k-th transaction is visible once at most twice
 * the fires before it have gone out. Kafka Streams' regular commit still ends a transaction every
 * {@code commit.interval.ms}. The growth goes back to none after a transaction that was neither
 * full nor carried a late fire ({@link #BEHIND_MS}): the burst is over.
 *
 * <p>The tasks with due work share a transaction evenly, so that a partition with a larger backlog
 * does not hold the others back; a task that has fired its share asks for the commit at once,
 * whatever the interval ({@link #spent}). Under a steady load a transaction carries far fewer fires
 * than that, and nothing changes.
 *
 * <p>All tasks of a stream thread share one transaction, so the state is per thread. Runs on stream
 * threads only.
 */
public final class FireCommits {

  private static final ThreadLocal<ThreadState> THREAD = ThreadLocal.withInitial(ThreadState::new);

  /** Fires later than this mark the thread as behind. */
  static final long BEHIND_MS = 250;

  /** How many times a burst's transactions double: at most 16 times {@code maxFiresPerCommit}. */
  static final int MAX_GROWTH = 4;

  private final long minIntervalMs;
  private final long backlogIntervalMs;
  private final long regularIntervalMs;
  private final int maxFiresPerCommit;

  /** Fires of this task's punctuations in the thread's transaction that began at shareCommits. */
  private int firedInShare;

  /** The thread's commit count when firedInShare began counting. */
  private long shareCommits = -1;

  /** This task's share of the transaction that began at shareCommits. */
  private int share;

  /** Records fired by this task that no commit includes yet. */
  private boolean pending;

  /** The thread's commit count when the pending fires began: a later commit includes them. */
  private long pendingSince;

  /**
   * @param minIntervalMs the least work time between the end of a commit and the next request
   * @param backlogIntervalMs the same while the thread is behind; at least {@code minIntervalMs}
   * @param regularIntervalMs how often Kafka Streams commits on its own ({@code
   *     commit.interval.ms}): an interval at or above it asks for no commit
   * @param maxFiresPerCommit the most fires of punctuations the first transaction of a burst
   *     carries; the burst's later transactions may carry more (see the class comment)
   */
  public FireCommits(
      long minIntervalMs, long backlogIntervalMs, long regularIntervalMs, int maxFiresPerCommit) {
    this.minIntervalMs = minIntervalMs;
    this.backlogIntervalMs = Math.max(minIntervalMs, backlogIntervalMs);
    this.regularIntervalMs = regularIntervalMs;
    this.maxFiresPerCommit = Math.max(1, maxFiresPerCommit);
  }

  /**
   * Notes that the calling stream thread is committing: called from the schedule store when Kafka
   * Streams prepares it for a commit of its task, just before the transaction commits.
   */
  public static void committed() {
    ThreadState thread = THREAD.get();
    if (!thread.committing) {
      thread.transactionEnds(); // the first task's store to hear this commit
    }
    thread.committing = true;
    thread.commits++;
    thread.firesInTransaction = 0;
    if (!thread.firing.isEmpty()) {
      // Each task's store hears the commit: only the first call finds the transaction's tasks.
      thread.firingBefore = thread.firing.size();
      thread.firing.clear();
    }
  }

  /**
   * How many due tasks this task's punctuation may fire into the open transaction: its share of the
   * transaction's fires (see the class comment) among the thread's tasks with due work (those of
   * this transaction, or of the last one if more), less what it fired already; never more than the
   * transaction has left. Counts this task among those with due work.
   */
  public int allowance() {
    ThreadState thread = THREAD.get();
    thread.firing.put(this, Boolean.TRUE);
    int budget = thread.budget(maxFiresPerCommit);
    if (shareCommits != thread.commits) {
      shareCommits = thread.commits;
      firedInShare = 0;
    }
    int tasks = Math.max(thread.firing.size(), thread.firingBefore);
    share = (budget + tasks - 1) / tasks;
    return Math.max(0, Math.min(share - firedInShare, budget - thread.firesInTransaction));
  }

  /**
   * Notes what a punctuation fired after its {@link #allowance}; once the task has fired its share
   * of the transaction, or the transaction is full, asks for the commit at once, whatever the
   * interval. A punctuation that fired less than its allowance because of a limit of its own (the
   * fires of one punctuation) asks for nothing: the task goes on with its share in the next one.
   *
   * @param nowMs the punctuation's time
   * @param count the tasks it fired
   */
  public void spent(ProcessingContext context, long nowMs, int count) {
    ThreadState thread = THREAD.get();
    firedInShare += count;
    thread.firesInTransaction += count;
    if (count > 0
        && (firedInShare >= share
            || thread.firesInTransaction >= thread.budget(maxFiresPerCommit))) {
      context.commit();
      thread.lastCommitEndMs = nowMs; // until the commit is seen to end
    }
  }

  /** How many commits the calling stream thread began; a step waits for the next one. */
  static long commitsBegun() {
    return THREAD.get().commits;
  }

  /**
   * Notes a fire; the commit is asked for by {@link #maybeRequest}.
   *
   * @param behindMs how long after kdelay could first have fired it (its due time; for a trigger,
   *     its request's timestamp) it fired
   */
  public void fired(long behindMs) {
    ThreadState thread = THREAD.get();
    settle(thread);
    if (!pending) {
      pending = true;
      pendingSince = thread.commits;
    }
    if (behindMs > BEHIND_MS) {
      thread.behindSince = thread.commits;
    }
  }

  /**
   * Asks for a commit of earlier fires once the interval allows, unless the regular commit comes as
   * soon; cheap when nothing is pending.
   */
  public void maybeRequest(ProcessingContext context, long nowMs) {
    ThreadState thread = THREAD.get();
    if (thread.committing) {
      // A commit began after the last call on this thread and, the thread being here again, ended.
      thread.committing = false;
      thread.lastCommitEndMs = nowMs;
    }
    settle(thread);
    if (!pending) {
      return;
    }
    long interval = thread.behindSince == thread.commits ? backlogIntervalMs : minIntervalMs;
    if (interval >= regularIntervalMs && thread.commits > 0) {
      // The regular commit comes as soon, and a request would not move its clock. Not before this
      // thread saw a commit: Kafka Streams' first regular commit may run before the thread has any
      // task (its clock then starts with nothing committed), so the first that includes the tasks
      // comes a whole interval later, and only a request commits the first fires before that.
      return;
    }
    if (nowMs - thread.lastCommitEndMs >= interval) {
      context.commit();
      thread.lastCommitEndMs = nowMs; // until the commit is seen to end
    }
  }

  /** Forgets pending fires that a commit which began after them included. */
  private void settle(ThreadState thread) {
    if (pending && thread.commits > pendingSince) {
      pending = false;
    }
  }

  /** What one stream thread knows of its commits. */
  private static final class ThreadState {
    boolean committing; // a store saw a commit begin since the last call
    long commits; // commits begun on this thread
    long lastCommitEndMs = Long.MIN_VALUE / 2;
    long behindSince = -1; // the commit count at the last fire later than BEHIND_MS
    int firesInTransaction; // fires of punctuations since the last commit began
    final Map<FireCommits, Boolean> firing = new IdentityHashMap<>(); // tasks with due work, now
    int firingBefore; // how many tasks had due work in the last transaction that had any
    int growth; // doublings of the fires the open transaction may carry: the burst's progress
    int base = Integer.MAX_VALUE; // maxFiresPerCommit of the tasks (one setting for all)

    /** The fires the open transaction may carry, noting the tasks' setting. */
    int budget(int maxFiresPerCommit) {
      base = maxFiresPerCommit;
      return (int) Math.min(Integer.MAX_VALUE, (long) maxFiresPerCommit << growth);
    }

    /** At a commit, before it counts: a full transaction lets the next one carry twice as many. */
    void transactionEnds() {
      if (firesInTransaction > 0 && firesInTransaction >= budget(base)) {
        growth = Math.min(growth + 1, MAX_GROWTH);
      } else if (behindSince != commits) {
        growth = 0; // neither full nor late: no burst
      }
    }
  }
}

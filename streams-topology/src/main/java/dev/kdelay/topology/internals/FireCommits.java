package dev.kdelay.topology.internals;

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
 * it through {@link ScheduleStore#flushCache} (not {@code StateStore.commit}, which exactly-once
 * calls only at checkpoints) and passes it on to {@link #committed()}. The next punctuation of the
 * thread runs after the commit ended, so it takes its own time as the end. This replaces reading
 * the thread's {@code commit-total} metric, which meant searching Kafka Streams' metric registry by
 * name. Where no commit is seen (a commit that found nothing to do), the interval counts from the
 * request.
 *
 * <p>A thread that fires tasks already late by more than {@link #BEHIND_MS} is behind (a backlog
 * after an outage, a burst, more load than it can carry): their lateness is set by the backlog, not
 * by the commit, so it works for the longer backlog interval between commits, which carries more
 * fires per transaction and drains the backlog sooner. It goes back to the short interval as soon
 * as a window passes without such a fire.
 *
 * <p>All tasks of a stream thread share one transaction, so the state is per thread. Runs on stream
 * threads only.
 */
final class FireCommits {

  private static final ThreadLocal<ThreadState> THREAD = ThreadLocal.withInitial(ThreadState::new);

  /** Fires later than this mark the thread as behind. */
  static final long BEHIND_MS = 250;

  private final long minIntervalMs;
  private final long backlogIntervalMs;

  /** Records fired by this task that no commit request covers yet. */
  private boolean pending;

  /**
   * @param minIntervalMs the least work time between the end of a commit and the next request
   * @param backlogIntervalMs the same while the thread is behind; at least {@code minIntervalMs}
   */
  FireCommits(long minIntervalMs, long backlogIntervalMs) {
    this.minIntervalMs = minIntervalMs;
    this.backlogIntervalMs = Math.max(minIntervalMs, backlogIntervalMs);
  }

  /**
   * Notes that the calling stream thread is committing: called from the schedule store when Kafka
   * Streams prepares it for a commit of its task, just before the transaction commits.
   */
  static void committed() {
    THREAD.get().committing = true;
  }

  /**
   * Notes that records were fired and asks for a commit if the thread's interval allows.
   *
   * @param lateMs how late the earliest of them fired
   */
  void fired(ProcessingContext context, long nowMs, long lateMs) {
    pending = true;
    if (lateMs > BEHIND_MS) {
      THREAD.get().behind = true;
    }
    maybeRequest(context, nowMs);
  }

  /** Asks for a commit of earlier fires once the interval allows; cheap when nothing is pending. */
  void maybeRequest(ProcessingContext context, long nowMs) {
    ThreadState thread = THREAD.get();
    if (thread.committing) {
      // A commit began after the last punctuation and, the thread being here again, ended.
      thread.committing = false;
      thread.lastCommitEndMs = nowMs;
    }
    if (!pending) {
      return;
    }
    long interval = thread.behind ? backlogIntervalMs : minIntervalMs;
    if (nowMs - thread.lastCommitEndMs >= interval) {
      context.commit();
      pending = false;
      thread.behind = false;
      thread.lastCommitEndMs = nowMs; // until the commit is seen to end
    }
  }

  /** What one stream thread knows of its commits. */
  private static final class ThreadState {
    boolean committing; // a store saw a commit begin since the last punctuation
    long lastCommitEndMs = Long.MIN_VALUE / 2;
    boolean behind; // a fire since the last request was later than BEHIND_MS
  }
}

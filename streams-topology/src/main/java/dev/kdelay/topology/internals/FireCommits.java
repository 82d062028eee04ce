package dev.kdelay.topology.internals;

import java.util.Map;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
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
 * (transactions of a dozen records, most of the thread's time waiting for commits). The end is seen
 * as a change of Kafka Streams' own {@code commit-total} metric of the thread, read at the next
 * punctuation; where that metric is missing (a test driver), the interval counts from the request.
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
  private final Function<ProcessingContext, LongSupplier> commitCounter;

  /** Records fired by this task that no commit request covers yet. */
  private boolean pending;

  /**
   * @param minIntervalMs the least work time between the end of a commit and the next request
   * @param backlogIntervalMs the same while the thread is behind; at least {@code minIntervalMs}
   */
  FireCommits(long minIntervalMs, long backlogIntervalMs) {
    this(minIntervalMs, backlogIntervalMs, FireCommits::threadCommitCount);
  }

  /**
   * @param commitCounter finds the stream thread's count of commits, or returns null if there is
   *     none to read
   */
  FireCommits(
      long minIntervalMs,
      long backlogIntervalMs,
      Function<ProcessingContext, LongSupplier> commitCounter) {
    this.minIntervalMs = minIntervalMs;
    this.backlogIntervalMs = Math.max(minIntervalMs, backlogIntervalMs);
    this.commitCounter = commitCounter;
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
    if (!thread.looked) {
      thread.looked = true;
      thread.commits = commitCounter.apply(context);
      thread.seenCommits = thread.commits == null ? 0 : thread.commits.getAsLong();
    }
    if (thread.commits != null) {
      long commits = thread.commits.getAsLong();
      if (commits != thread.seenCommits) {
        thread.seenCommits = commits;
        thread.lastCommitEndMs = nowMs;
      }
    }
    if (!pending) {
      return;
    }
    long interval = thread.behind ? backlogIntervalMs : minIntervalMs;
    if (nowMs - thread.lastCommitEndMs >= interval) {
      context.commit();
      pending = false;
      thread.behind = false;
      if (thread.commits == null) {
        thread.lastCommitEndMs = nowMs;
      }
    }
  }

  /**
   * Kafka Streams' {@code commit-total} of the calling stream thread, or null if it has none (the
   * metric is at the INFO recording level, the default).
   */
  static LongSupplier threadCommitCount(ProcessingContext context) {
    String thread = Thread.currentThread().getName();
    for (Map.Entry<MetricName, ? extends Metric> entry : context.metrics().metrics().entrySet()) {
      MetricName name = entry.getKey();
      if (name.name().equals("commit-total")
          && name.group().equals("stream-thread-metrics")
          && thread.equals(name.tags().get("thread-id"))) {
        Metric metric = entry.getValue();
        return () -> metric.metricValue() instanceof Number count ? count.longValue() : 0;
      }
    }
    return null;
  }

  /** What one stream thread knows of its commits. */
  private static final class ThreadState {
    boolean looked;
    LongSupplier commits;
    long seenCommits;
    long lastCommitEndMs = Long.MIN_VALUE / 2;
    boolean behind; // a fire since the last request was later than BEHIND_MS
  }
}

package dev.kdelay.topology.internals;

import org.apache.kafka.streams.processor.api.ProcessingContext;

/**
 * Asks Kafka Streams to commit soon after records were fired, but no more often than a minimum
 * interval per stream thread.
 *
 * <p>Under exactly-once a fired record becomes visible to {@code read_committed} consumers when its
 * transaction commits. Waiting for the regular commit interval would add up to that interval to
 * every task's lateness; committing after every punctuation that fired anything costs one
 * transaction (with its markers on every partition it touched) per punctuation, which at a few
 * hundred commits a second makes the broker the bottleneck. So: a quiet instance commits at once
 * after a fire, a busy one at most once per interval, with every fire since in that one commit.
 *
 * <p>All tasks of a stream thread share one transaction, so the limit is per thread. Runs on stream
 * threads only.
 */
final class FireCommits {

  private static final ThreadLocal<long[]> LAST_REQUEST =
      ThreadLocal.withInitial(() -> new long[] {Long.MIN_VALUE / 2});

  private final long minIntervalMs;

  /** Records fired by this task that no commit request covers yet. */
  private boolean pending;

  FireCommits(long minIntervalMs) {
    this.minIntervalMs = minIntervalMs;
  }

  /** Notes that records were fired and asks for a commit if the thread's interval allows. */
  void fired(ProcessingContext context, long nowMs) {
    pending = true;
    maybeRequest(context, nowMs);
  }

  /** Asks for a commit of earlier fires once the interval allows; cheap when nothing is pending. */
  void maybeRequest(ProcessingContext context, long nowMs) {
    if (!pending) {
      return;
    }
    long[] last = LAST_REQUEST.get();
    if (nowMs - last[0] >= minIntervalMs) {
      context.commit();
      last[0] = nowMs;
      pending = false;
    }
  }
}

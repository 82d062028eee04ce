package dev.kdelay.topology.internals.delivery;

/**
 * How many due entries one punctuation of a task may fire, after a refusal failed a transaction:
 * small steps, each in a transaction of its own, until commits succeed again. (A refused fired
 * record is usually rescued by the producer, and fails nothing; see {@link DeliveryQuarantine}.)
 *
 * <p>A refusal that is not rescued fails the whole transaction, and the records sent after it in
 * that transaction may never have reached the broker, so nobody knows whether they are good. Fired
 * again together, the next bad one among them fails the next transaction, and so on. Fired one per
 * transaction, a failure is always that one record's, and each commit that succeeds is progress. So
 * for {@link DeliveryQuarantine#RECOVERY_MS} after a refusal (and at once when one is learned while
 * the task runs) a punctuation fires one entry, asks for a commit, and fires nothing more until
 * that commit ended; each commit that ended doubles the step, until it is the usual batch again.
 * Healthy tasks lose a few dozen milliseconds; bad ones cost a failed transaction each and never a
 * loop.
 *
 * <p>One per task; runs on the stream thread only.
 */
public final class FireSteps {

  private final DeliveryQuarantine quarantine;
  private final int maxFires;
  private long learnedSeen;
  private int step;

  /** The thread's commits begun when the last step fired, or -1 when no step waits for one. */
  private long firedAtCommit = -1;

  public FireSteps(DeliveryQuarantine quarantine, int maxFires) {
    this.quarantine = quarantine;
    this.maxFires = maxFires;
    this.learnedSeen = quarantine.learned();
    this.step = quarantine.recovering() ? 1 : maxFires;
  }

  /**
   * How many entries this punctuation may fire: the usual batch, a step, or none while the last
   * step's commit has not ended.
   */
  public int allowed() {
    long learned = quarantine.learned();
    if (learned != learnedSeen) {
      learnedSeen = learned;
      step = 1;
      firedAtCommit = -1;
    }
    if (firedAtCommit >= 0) {
      if (FireCommits.commitsBegun() <= firedAtCommit) {
        return 0; // its commit has not begun yet
      }
      // It began after the step fired, and the thread is here again: it ended, and well (a failed
      // commit fails the thread instead).
      firedAtCommit = -1;
      step = (int) Math.min(maxFires, 2L * step);
    }
    return step;
  }

  /**
   * Notes that a punctuation fired {@code count} entries.
   *
   * @return whether they were a step, whose commit must be asked for now
   */
  public boolean fired(int count) {
    if (step >= maxFires || count == 0) {
      return false;
    }
    firedAtCommit = FireCommits.commitsBegun();
    return true;
  }

  /** Whether the task fires in steps now. */
  boolean stepping() {
    return step < maxFires;
  }
}

package dev.kdelay.topology;

/**
 * What kdelay knows of the topics requests target: whether they exist and how many partitions they
 * have. Checked when a request arrives (a missing topic or partition is dead-lettered at once) and
 * again when a task fires (a topic deleted since is dead-lettered, never handed to a producer that
 * would block on its metadata and stall the stream thread).
 *
 * <p>Implementations are called on stream threads; a first look-up of a topic may block briefly,
 * later ones must answer from memory.
 */
@FunctionalInterface
public interface TargetTopics {

  /** {@link #partitions} of a topic that does not exist. */
  int ABSENT = 0;

  /** {@link #partitions} of a topic whose existence cannot be told now (the cluster is slow). */
  int UNKNOWN = -1;

  /** Checks nothing: every topic may exist. For tests and for clusters that create on demand. */
  TargetTopics UNCHECKED = topic -> UNKNOWN;

  /**
   * The partition count of a topic.
   *
   * @param topic a legal topic name
   * @return its partition count, {@link #ABSENT} or {@link #UNKNOWN}
   */
  int partitions(String topic);
}

package dev.kdelay.topology;

/**
 * What kdelay knows of one target topic: whether it exists, its partition count, and the limits the
 * broker applies to a record written to it. A fired record that breaks one of them would fail the
 * producer's transaction, so it is dead-lettered before it reaches the producer.
 *
 * @param status whether the topic exists, or whether that cannot be told yet
 * @param partitions the partition count; 0 unless {@link Status#PRESENT}
 * @param maxMessageBytes the topic's {@code max.message.bytes}: the largest record batch the broker
 *     accepts; {@link Integer#MAX_VALUE} when not known
 * @param writable false only when the cluster said kdelay may not write to the topic (its
 *     authorized operations lack {@code WRITE}); true when it may, or when the cluster does not say
 *     (no authorizer)
 * @param maxTimestampAgeMs how far in the past a record's timestamp may be: the topic's {@code
 *     message.timestamp.before.max.ms} when it keeps {@code CreateTime}, else {@link
 *     Long#MAX_VALUE}. A fired record is stamped with its due time, so a task fired later than this
 *     after its due time is refused by the broker
 * @param compacted whether its {@code cleanup.policy} compacts: the broker then refuses a record
 *     without a key ({@code INVALID_RECORD})
 */
public record TargetTopic(
    Status status,
    int partitions,
    int maxMessageBytes,
    boolean writable,
    long maxTimestampAgeMs,
    boolean compacted) {

  /** Whether a topic exists. */
  public enum Status {
    /** The topic exists. */
    PRESENT,
    /** The topic does not exist. */
    ABSENT,
    /** Not known now: not looked up yet, or the cluster did not answer in time. */
    UNKNOWN
  }

  /** A topic not known to be compacted. */
  public TargetTopic(
      Status status,
      int partitions,
      int maxMessageBytes,
      boolean writable,
      long maxTimestampAgeMs) {
    this(status, partitions, maxMessageBytes, writable, maxTimestampAgeMs, false);
  }

  /** A topic whose existence cannot be told now. */
  public static final TargetTopic UNKNOWN =
      new TargetTopic(Status.UNKNOWN, 0, Integer.MAX_VALUE, true, Long.MAX_VALUE);

  /** A topic that does not exist. */
  public static final TargetTopic ABSENT =
      new TargetTopic(Status.ABSENT, 0, Integer.MAX_VALUE, true, Long.MAX_VALUE);

  /**
   * Creates a description.
   *
   * @throws IllegalArgumentException if a present topic has no partitions, or a limit is not
   *     positive
   */
  public TargetTopic {
    java.util.Objects.requireNonNull(status, "status cannot be null");
    if (status == Status.PRESENT && partitions <= 0) {
      throw new IllegalArgumentException(
          "a present topic has at least one partition, got " + partitions);
    }
    if (maxMessageBytes <= 0 || maxTimestampAgeMs < 0) {
      throw new IllegalArgumentException(
          "limits must be positive, got maxMessageBytes="
              + maxMessageBytes
              + " maxTimestampAgeMs="
              + maxTimestampAgeMs);
    }
  }

  /** An existing topic with this many partitions and no known limits. */
  public static TargetTopic present(int partitions) {
    return new TargetTopic(Status.PRESENT, partitions, Integer.MAX_VALUE, true, Long.MAX_VALUE);
  }

  /** The same topic with its {@code max.message.bytes}. */
  public TargetTopic withMaxMessageBytes(int bytes) {
    return new TargetTopic(status, partitions, bytes, writable, maxTimestampAgeMs, compacted);
  }

  /** The same topic, writable or not. */
  public TargetTopic withWritable(boolean mayWrite) {
    return new TargetTopic(
        status, partitions, maxMessageBytes, mayWrite, maxTimestampAgeMs, compacted);
  }

  /** The same topic with its {@code message.timestamp.before.max.ms} under {@code CreateTime}. */
  public TargetTopic withMaxTimestampAgeMs(long ageMs) {
    return new TargetTopic(status, partitions, maxMessageBytes, writable, ageMs, compacted);
  }

  /** The same topic, compacted or not. */
  public TargetTopic withCompacted(boolean compacts) {
    return new TargetTopic(
        status, partitions, maxMessageBytes, writable, maxTimestampAgeMs, compacts);
  }
}

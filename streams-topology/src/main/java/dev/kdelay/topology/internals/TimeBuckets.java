package dev.kdelay.topology.internals;

/**
 * Fixed-width time buckets that group task-store entries by due time (Kafka's {@code Segments}
 * idea, for a queue): a bucket whose entries have all fired is removed as a whole.
 */
final class TimeBuckets {

  private final long widthMs;

  TimeBuckets(long widthMs) {
    if (widthMs < 1) {
      throw new IllegalArgumentException("bucket width must be positive, got " + widthMs);
    }
    this.widthMs = widthMs;
  }

  /** The bucket a due time falls in. */
  long bucketId(long dueMs) {
    return Math.floorDiv(dueMs, widthMs);
  }

  /** The first due time of a bucket. */
  long bucketStart(long bucketId) {
    return bucketId * widthMs;
  }

  long widthMs() {
    return widthMs;
  }
}

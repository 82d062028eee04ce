package dev.kdelay.topology.internals.delivery;

import dev.kdelay.schemas.RejectionReason;
import org.apache.kafka.streams.processor.api.Record;

/** Receives what a due entry produces: fired records, or the dead letter of an unreadable one. */
public interface Firing {
  /**
   * Receives a fired record, fired at {@code nowMs}.
   *
   * @param readyMs when kdelay could first have fired it: its due time, or for a trigger when its
   *     request was stamped
   */
  void fire(Record<FiredKey, byte[]> record, long nowMs, long readyMs);

  /**
   * Receives the dead letter of a stored entry that cannot fire: one that cannot be decoded, or one
   * kdelay failed on.
   */
  void deadLetter(Record<byte[], byte[]> deadLetter, RejectionReason reason);
}

package dev.kdelay.topology.internals;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.Rejection;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.schemas.Schedule;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.Record;

/** Builds the records kdelay writes: fired records and dead letters. */
final class OutputRecords {

  private OutputRecords() {}

  /**
   * A fired record: the payload keyed by the target key, timestamped with the due time (or the fire
   * time, if earlier: a trigger), with the carried headers followed by kdelay's fired headers.
   */
  static Record<FiredKey, byte[]> fired(
      String id, Schedule schedule, long dueMs, long firedMs, long occurrence) {
    Headers headers = new RecordHeaders();
    for (Header carried : schedule.headers()) {
      headers.add(carried);
    }
    headers.add(DelayHeaders.ID, utf8(id));
    headers.add(DelayHeaders.IDEMPOTENCY_KEY, utf8(DelayHeaders.idempotencyKey(id, dueMs)));
    headers.add(DelayHeaders.DUE_AT, utf8(Long.toString(dueMs)));
    headers.add(DelayHeaders.FIRED_AT, utf8(Long.toString(firedMs)));
    if (schedule.recurring()) {
      headers.add(DelayHeaders.OCCURRENCE, utf8(Long.toString(occurrence)));
    }
    byte[] key = schedule.target().key() != null ? schedule.target().key() : utf8(id);
    int partition = schedule.target().partition().orElse(FiredKey.ANY_PARTITION);
    FiredKey firedKey = new FiredKey(schedule.target().topic(), key, partition);
    // Stamped with the due time, or the fire time when a trigger fired it early: a broker refuses
    // timestamps too far ahead (message.timestamp.after.max.ms, an hour by default).
    return new Record<>(firedKey, schedule.payload(), Math.min(dueMs, firedMs), headers);
  }

  /** A dead letter: the request as it came, plus the rejection code and message. */
  static Record<byte[], byte[]> deadLetter(Record<byte[], byte[]> request, Rejection rejection) {
    Headers headers = new RecordHeaders(request.headers().toArray());
    headers.add(DelayHeaders.ERROR, utf8(rejection.reason().name()));
    headers.add(DelayHeaders.ERROR_MESSAGE, utf8(rejection.message()));
    return new Record<>(request.key(), request.value(), request.timestamp(), headers);
  }

  /**
   * A fired record that cannot be delivered, as a dead letter: its key, payload and headers, plus
   * the target topic, the rejection code and message.
   */
  static Record<byte[], byte[]> undeliverable(Record<FiredKey, byte[]> fired, Rejection rejection) {
    Headers headers = new RecordHeaders(fired.headers().toArray());
    headers.add(DelayHeaders.TARGET_TOPIC, utf8(fired.key().topic()));
    headers.add(DelayHeaders.ERROR, utf8(rejection.reason().name()));
    headers.add(DelayHeaders.ERROR_MESSAGE, utf8(rejection.message()));
    return new Record<>(fired.key().key(), fired.value(), fired.timestamp(), headers);
  }

  /**
   * The dead letter of a stored task that cannot be decoded: the stored bytes keyed by the schedule
   * id, timestamped with the due time, with the id, due time, code and message as headers.
   */
  static Record<byte[], byte[]> unreadable(String id, long dueMs, byte[] stored, String problem) {
    Headers headers = new RecordHeaders();
    headers.add(DelayHeaders.ID, utf8(id));
    headers.add(DelayHeaders.DUE_AT, utf8(Long.toString(dueMs)));
    headers.add(DelayHeaders.ERROR, utf8(RejectionReason.UNREADABLE_TASK.name()));
    headers.add(
        DelayHeaders.ERROR_MESSAGE,
        utf8("the stored task cannot be decoded (" + problem + "); the value is its stored bytes"));
    return new Record<>(utf8(id), stored, dueMs, headers);
  }

  static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}

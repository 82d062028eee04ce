package dev.kdelay.topology.internals.delivery;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.Rejection;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.schemas.Schedule;
import dev.kdelay.schemas.TenantIds;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.OptionalLong;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;

/**
 * Builds the records kdelay writes: fired records and dead letters. Every method is total: it
 * builds a record from whatever it is given, and every timestamp it writes is one a broker takes
 * (never negative; a dead letter is stamped with the time it is written, which no topic's {@code
 * message.timestamp.*.max.ms} refuses).
 */
public final class OutputRecords {

  private OutputRecords() {}

  /**
   * A fired record: the payload keyed by the target key, timestamped with the due time (or the fire
   * time, if earlier: a trigger), with the carried headers followed by kdelay's fired headers. A
   * due time before the epoch, which only an older kdelay stored, gives timestamp 0 and is refused
   * by {@link Deliverability#atFire}; {@code delay-due-at} keeps it.
   */
  public static Record<FiredKey, byte[]> fired(
      String id, Schedule schedule, long dueMs, long firedMs, long occurrence) {
    Headers headers = new RecordHeaders();
    for (Header carried : schedule.headers()) {
      headers.add(carried);
    }
    // A tenant's id leaves kdelay as the tenant sent it, and delay-tenant names the tenant.
    TenantIds.Split split = split(id);
    headers.add(DelayHeaders.ID, utf8(split.id()));
    if (!split.tenant().isEmpty()) {
      headers.add(DelayHeaders.TENANT, utf8(split.tenant()));
    }
    headers.add(DelayHeaders.IDEMPOTENCY_KEY, utf8(DelayHeaders.idempotencyKey(split.id(), dueMs)));
    headers.add(DelayHeaders.DUE_AT, utf8(Long.toString(dueMs)));
    headers.add(DelayHeaders.FIRED_AT, utf8(Long.toString(firedMs)));
    if (schedule.recurring()) {
      headers.add(DelayHeaders.OCCURRENCE, utf8(Long.toString(occurrence)));
    }
    byte[] key = schedule.target().key() != null ? schedule.target().key() : utf8(split.id());
    int partition = schedule.target().partition().orElse(FiredKey.ANY_PARTITION);
    FiredKey firedKey = new FiredKey(schedule.target().topic(), key, partition);
    // Stamped with the due time, or the fire time when a trigger fired it early: a broker refuses
    // timestamps too far ahead (message.timestamp.after.max.ms, an hour by default).
    long timestamp = Math.max(0, Math.min(dueMs, firedMs));
    return new Record<>(firedKey, schedule.payload(), timestamp, headers);
  }

  /**
   * A request's dead letter: the request as it came, plus the rejection's code and message, where
   * it was read ({@code delay-source}) and its timestamp ({@code delay-requested-at}).
   *
   * @param source the request's topic, partition and offset, if known
   * @param nowMs when it is written: its timestamp
   */
  public static Record<byte[], byte[]> deadLetter(
      Record<byte[], byte[]> request,
      Optional<RecordMetadata> source,
      Rejection rejection,
      long nowMs) {
    Headers headers = new RecordHeaders(request.headers().toArray());
    // Only kdelay says whose a dead letter is: a request's own delay-tenant is not kept.
    headers.remove(DelayHeaders.TENANT);
    byte[] key = request.key();
    String tenant = TenantIds.isQualified(key) ? tenantOf(key) : "";
    if (!tenant.isEmpty()) {
      key = TenantIds.idBytes(key);
      headers.add(DelayHeaders.TENANT, utf8(tenant));
    }
    headers.add(DelayHeaders.ERROR, utf8(rejection.reason().name()));
    headers.add(DelayHeaders.ERROR_MESSAGE, utf8(rejection.message()));
    source
        .filter(metadata -> metadata.topic() != null)
        .ifPresent(
            metadata ->
                headers.add(
                    DelayHeaders.SOURCE,
                    utf8(metadata.topic() + "-" + metadata.partition() + "@" + metadata.offset())));
    headers.add(DelayHeaders.REQUESTED_AT, utf8(Long.toString(request.timestamp())));
    return new Record<>(key, request.value(), nowMs, headers);
  }

  /**
   * A fired record that cannot be delivered, as a dead letter: its key, payload and headers, plus
   * the target topic, the rejection code and message; stamped with {@code nowMs}.
   */
  public static Record<byte[], byte[]> undeliverable(
      Record<FiredKey, byte[]> fired, Rejection rejection, long nowMs) {
    Headers headers = new RecordHeaders(fired.headers().toArray());
    headers.add(DelayHeaders.TARGET_TOPIC, utf8(fired.key().topic()));
    headers.add(DelayHeaders.ERROR, utf8(rejection.reason().name()));
    headers.add(DelayHeaders.ERROR_MESSAGE, utf8(rejection.message()));
    return new Record<>(fired.key().key(), fired.value(), nowMs, headers);
  }

  /**
   * The dead letter of a stored entry kdelay cannot fire as it is: the stored bytes keyed by the
   * schedule id, with the id, the due time when the entry says one, the code and the message.
   *
   * @param dueMs the entry's due time, empty when its header cannot be read
   * @param nowMs when it is written: its timestamp
   */
  public static Record<byte[], byte[]> stored(
      String id,
      OptionalLong dueMs,
      byte[] stored,
      RejectionReason reason,
      String message,
      long nowMs) {
    Headers headers = new RecordHeaders();
    TenantIds.Split split = split(id);
    headers.add(DelayHeaders.ID, utf8(split.id()));
    if (!split.tenant().isEmpty()) {
      headers.add(DelayHeaders.TENANT, utf8(split.tenant()));
    }
    dueMs.ifPresent(due -> headers.add(DelayHeaders.DUE_AT, utf8(Long.toString(due))));
    headers.add(DelayHeaders.ERROR, utf8(reason.name()));
    headers.add(DelayHeaders.ERROR_MESSAGE, utf8(message));
    return new Record<>(utf8(split.id()), stored, nowMs, headers);
  }

  /** A dead letter of an entry that cannot be decoded: {@code UNREADABLE_TASK}. */
  public static Record<byte[], byte[]> unreadable(
      String id, OptionalLong dueMs, byte[] stored, String problem, long nowMs) {
    return stored(
        id,
        dueMs,
        stored,
        RejectionReason.UNREADABLE_TASK,
        "the stored task cannot be decoded (" + problem + "); the value is its stored bytes",
        nowMs);
  }

  /** The same dead letter, naming the error id of an {@code INTERNAL} failure. */
  public static Record<byte[], byte[]> withErrorId(
      Record<byte[], byte[]> deadLetter, String errorId) {
    Headers headers = new RecordHeaders(deadLetter.headers().toArray());
    headers.add(DelayHeaders.ERROR_ID, utf8(errorId));
    return deadLetter.withHeaders(headers);
  }

  /** A kept id's tenant and id; one not in the qualified form is a plain id, whole. */
  private static TenantIds.Split split(String id) {
    return TenantIds.split(id).orElseGet(() -> new TenantIds.Split("", id));
  }

  /** The tenant of a kept key, empty if it has none. */
  private static String tenantOf(byte[] key) {
    return TenantIds.tenantOf(new String(key, StandardCharsets.UTF_8));
  }

  public static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}

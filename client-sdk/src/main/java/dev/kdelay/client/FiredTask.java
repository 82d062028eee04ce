package dev.kdelay.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

import dev.kdelay.schemas.DelayHeaders;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * What kdelay wrote on a fired record: which schedule and occurrence it is, when it was due and
 * when it fired.
 *
 * <pre>{@code
 * for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(100))) {
 *   FiredTask task = FiredTask.from(record);
 *   if (alreadyProcessed(task.idempotencyKey())) {
 *     continue;
 *   }
 *   handle(record.value());
 *   latenessTimer.record(task.lateness());
 * }
 * }</pre>
 *
 * <p>The idempotency key is unique per occurrence and the same on every copy of it, so a consumer
 * that is not {@code read_committed}, or that forwards records at least once, can drop repeats by
 * it.
 */
public final class FiredTask {

  private final String id;
  private final String idempotencyKey;
  private final Instant dueAt;
  private final Instant firedAt;
  private final Long occurrence;
  private final String tenant;

  private FiredTask(
      String id,
      String idempotencyKey,
      Instant dueAt,
      Instant firedAt,
      Long occurrence,
      String tenant) {
    this.id = id;
    this.idempotencyKey = idempotencyKey;
    this.dueAt = dueAt;
    this.firedAt = firedAt;
    this.occurrence = occurrence;
    this.tenant = tenant;
  }

  /**
   * Reads the kdelay headers of a fired record. Where a header occurs more than once the last
   * occurrence counts, as kdelay appends its headers after the carried ones.
   *
   * @param record a record from a target topic
   * @return what kdelay wrote on it
   * @throws NullPointerException if {@code record} is null
   * @throws IllegalArgumentException if the record is not a kdelay fired record: {@code delay-id},
   *     {@code delay-idempotency-key}, {@code delay-due-at} or {@code delay-fired-at} is missing,
   *     or a time or {@code delay-occurrence} is not a number
   */
  public static FiredTask from(ConsumerRecord<?, ?> record) {
    requireNonNull(record, "record cannot be null");
    return from(record.headers());
  }

  /**
   * Reads the kdelay headers of a fired record from its headers alone, for code that sees headers
   * but no {@link ConsumerRecord} (a Kafka Streams processor, say).
   *
   * @param headers the headers of a record from a target topic
   * @return what kdelay wrote on it
   * @throws NullPointerException if {@code headers} is null
   * @throws IllegalArgumentException if the headers are not those of a kdelay fired record, as
   *     {@link #from(ConsumerRecord)} describes
   */
  public static FiredTask from(Headers headers) {
    requireNonNull(headers, "headers cannot be null");
    return new FiredTask(
        text(headers, DelayHeaders.ID),
        text(headers, DelayHeaders.IDEMPOTENCY_KEY),
        Instant.ofEpochMilli(number(headers, DelayHeaders.DUE_AT)),
        Instant.ofEpochMilli(number(headers, DelayHeaders.FIRED_AT)),
        occurrence(headers),
        headers.lastHeader(DelayHeaders.TENANT) == null
            ? null
            : text(headers, DelayHeaders.TENANT));
  }

  /**
   * Whether a record is a kdelay fired record, that is whether {@link #from(ConsumerRecord)} reads
   * it.
   *
   * @param record a record
   * @return true if {@link #from(ConsumerRecord)} would succeed
   * @throws NullPointerException if {@code record} is null
   */
  public static boolean isFired(ConsumerRecord<?, ?> record) {
    requireNonNull(record, "record cannot be null");
    return isFired(record.headers());
  }

  /**
   * Whether headers are those of a kdelay fired record, that is whether {@link #from(Headers)}
   * reads them.
   *
   * @param headers the headers of a record
   * @return true if {@link #from(Headers)} would succeed
   * @throws NullPointerException if {@code headers} is null
   */
  public static boolean isFired(Headers headers) {
    requireNonNull(headers, "headers cannot be null");
    // Most records that are not fired records lack delay-id; they are answered without the cost
    // of an exception.
    if (headers.lastHeader(DelayHeaders.ID) == null) {
      return false;
    }
    try {
      from(headers);
      return true;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  /**
   * The schedule id.
   *
   * @return the id
   */
  public String id() {
    return id;
  }

  /**
   * The idempotency key of this occurrence, {@code <id>@<due epoch ms>}.
   *
   * @return the idempotency key
   */
  public String idempotencyKey() {
    return idempotencyKey;
  }

  /**
   * When this occurrence was due.
   *
   * @return the due time, to the millisecond
   */
  public Instant dueAt() {
    return dueAt;
  }

  /**
   * When kdelay fired this occurrence.
   *
   * @return the fire time, to the millisecond
   */
  public Instant firedAt() {
    return firedAt;
  }

  /**
   * Which occurrence of a recurring schedule this is.
   *
   * @return the 1-based occurrence number, or empty for a one-shot schedule
   */
  public OptionalLong occurrence() {
    return occurrence == null ? OptionalLong.empty() : OptionalLong.of(occurrence);
  }

  /**
   * How late kdelay fired this occurrence.
   *
   * @return {@code firedAt - dueAt}
   */
  public Duration lateness() {
    return Duration.between(dueAt, firedAt);
  }

  private static String text(Headers headers, String name) {
    Header header = headers.lastHeader(name);
    if (header == null || header.value() == null) {
      throw new IllegalArgumentException(
          "not a kdelay fired record: header '" + name + "' is missing");
    }
    return new String(header.value(), UTF_8);
  }

  private static long number(Headers headers, String name) {
    String value = text(headers, name);
    try {
      return Long.parseLong(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "not a kdelay fired record: header '" + name + "' must be a number, got '" + value + "'",
          e);
    }
  }

  /**
   * The tenant whose schedule fired ({@code delay-tenant}), in a deployment with tenants: the id is
   * that tenant's, and another tenant's schedule may have the same one.
   *
   * @return the tenant's name; empty for a schedule of no tenant
   */
  public Optional<String> tenant() {
    return Optional.ofNullable(tenant);
  }

  private static Long occurrence(Headers headers) {
    if (headers.lastHeader(DelayHeaders.OCCURRENCE) == null) {
      return null;
    }
    long occurrence = number(headers, DelayHeaders.OCCURRENCE);
    if (occurrence < 1) {
      throw new IllegalArgumentException(
          "not a kdelay fired record: header '"
              + DelayHeaders.OCCURRENCE
              + "' must be at least 1, got "
              + occurrence);
    }
    return occurrence;
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof FiredTask that
        && id.equals(that.id)
        && idempotencyKey.equals(that.idempotencyKey)
        && dueAt.equals(that.dueAt)
        && firedAt.equals(that.firedAt)
        && Objects.equals(occurrence, that.occurrence)
        && Objects.equals(tenant, that.tenant);
  }

  @Override
  public int hashCode() {
    return Objects.hash(id, idempotencyKey, dueAt, firedAt, occurrence, tenant);
  }

  @Override
  public String toString() {
    return "FiredTask{id='"
        + id
        + "', idempotencyKey='"
        + idempotencyKey
        + "', dueAt="
        + dueAt
        + ", firedAt="
        + firedAt
        + (occurrence == null ? "" : ", occurrence=" + occurrence)
        + (tenant == null ? "" : ", tenant=" + tenant)
        + "}";
  }
}

package dev.kdelay.client;

import static java.util.Objects.requireNonNull;

import dev.kdelay.schemas.CronFlavor;
import dev.kdelay.schemas.CronOptions;
import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.Misfire;
import dev.kdelay.schemas.WireText;
import dev.kdelay.schemas.WireTimes;
import java.time.Instant;
import java.time.ZoneId;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import org.apache.kafka.common.header.Headers;

/**
 * When a recurring schedule fires: a cron expression and its options. Immutable; each option method
 * returns a copy with that option changed:
 *
 * <pre>{@code
 * CronSchedule nightly =
 *     CronSchedule.of("0 15 2 * * ?")
 *         .type(CronFlavor.QUARTZ)
 *         .zone(ZoneId.of("Europe/Berlin"))
 *         .startAt(Instant.parse("2026-01-01T00:00:00Z"))
 *         .maxFires(30)
 *         .misfire(Misfire.SKIP);
 * }</pre>
 *
 * <p>The expression itself is checked by kdelay, not here: an invalid one is dead-lettered with
 * {@code BAD_CRON}. Instants are written as epoch milliseconds; anything finer is dropped.
 */
public final class CronSchedule {

  private final String expression;
  private final CronFlavor type;
  private final ZoneId zone;
  private final Instant startAt;
  private final Instant endAt;
  private final Long maxFires;
  private final Misfire misfire;

  private CronSchedule(
      String expression,
      CronFlavor type,
      ZoneId zone,
      Instant startAt,
      Instant endAt,
      Long maxFires,
      Misfire misfire) {
    this.expression = expression;
    this.type = type;
    this.zone = zone;
    this.startAt = startAt;
    this.endAt = endAt;
    this.maxFires = maxFires;
    this.misfire = misfire;
  }

  /**
   * A schedule for a cron expression, with the defaults: {@link CronFlavor#QUARTZ}, zone {@code
   * UTC}, no bounds, no limit on occurrences, {@link Misfire#FIRE_ONCE}.
   *
   * @param expression the cron expression, in the syntax of the {@linkplain #type() cron type}
   * @return the schedule
   * @throws NullPointerException if {@code expression} is null
   * @throws IllegalArgumentException if {@code expression} is blank
   */
  public static CronSchedule of(String expression) {
    requireNonNull(expression, "expression cannot be null");
    if (expression.isBlank()) {
      throw new IllegalArgumentException(
          "expression must be a cron expression, got '" + expression + "'");
    }
    return new CronSchedule(
        expression,
        CronOptions.DEFAULT_FLAVOR,
        CronOptions.DEFAULT_ZONE,
        null,
        null,
        null,
        CronOptions.DEFAULT_MISFIRE);
  }

  /**
   * Returns a copy that reads the expression as the given cron flavour.
   *
   * @param type the cron flavour
   * @return the changed copy
   * @throws NullPointerException if {@code type} is null
   */
  public CronSchedule type(CronFlavor type) {
    requireNonNull(type, "type cannot be null");
    return new CronSchedule(expression, type, zone, startAt, endAt, maxFires, misfire);
  }

  /**
   * Returns a copy that evaluates the expression in the given time zone, so that {@code 0 0 2 * *
   * ?} means 02:00 local time across daylight-saving changes. Written as {@link ZoneId#getId()};
   * the contract names IANA region ids such as {@code Europe/Berlin}.
   *
   * @param zone the time zone
   * @return the changed copy
   * @throws NullPointerException if {@code zone} is null
   */
  public CronSchedule zone(ZoneId zone) {
    requireNonNull(zone, "zone cannot be null");
    return new CronSchedule(expression, type, zone, startAt, endAt, maxFires, misfire);
  }

  /**
   * Returns a copy that fires no occurrence before the given instant.
   *
   * @param startAt the first instant an occurrence may be due at
   * @return the changed copy
   * @throws NullPointerException if {@code startAt} is null
   * @throws IllegalArgumentException if {@code startAt} is after the end bound, or outside the
   *     range of epoch milliseconds
   */
  public CronSchedule startAt(Instant startAt) {
    WireTimes.requireEpochMillis(startAt, "startAt");
    checkBounds(startAt, endAt);
    return new CronSchedule(expression, type, zone, startAt, endAt, maxFires, misfire);
  }

  /**
   * Returns a copy that fires no occurrence after the given instant.
   *
   * @param endAt the last instant an occurrence may be due at
   * @return the changed copy
   * @throws NullPointerException if {@code endAt} is null
   * @throws IllegalArgumentException if {@code endAt} is before the start bound, or outside the
   *     range of epoch milliseconds
   */
  public CronSchedule endAt(Instant endAt) {
    WireTimes.requireEpochMillis(endAt, "endAt");
    checkBounds(startAt, endAt);
    return new CronSchedule(expression, type, zone, startAt, endAt, maxFires, misfire);
  }

  /**
   * Returns a copy that stops after the given number of occurrences.
   *
   * @param maxFires how many occurrences fire at most
   * @return the changed copy
   * @throws IllegalArgumentException if {@code maxFires} is less than 1
   */
  public CronSchedule maxFires(long maxFires) {
    if (maxFires < 1) {
      throw new IllegalArgumentException("maxFires must be at least 1, got " + maxFires);
    }
    return new CronSchedule(expression, type, zone, startAt, endAt, maxFires, misfire);
  }

  /**
   * Returns a copy with the given policy for occurrences missed while nothing could fire.
   *
   * @param misfire the misfire policy
   * @return the changed copy
   * @throws NullPointerException if {@code misfire} is null
   */
  public CronSchedule misfire(Misfire misfire) {
    requireNonNull(misfire, "misfire cannot be null");
    return new CronSchedule(expression, type, zone, startAt, endAt, maxFires, misfire);
  }

  /**
   * The cron expression.
   *
   * @return the expression, as given
   */
  public String expression() {
    return expression;
  }

  /**
   * The cron flavour the expression is read as.
   *
   * @return the cron type; {@link CronFlavor#QUARTZ} unless set
   */
  public CronFlavor type() {
    return type;
  }

  /**
   * The time zone the expression is evaluated in.
   *
   * @return the zone; {@code UTC} unless set
   */
  public ZoneId zone() {
    return zone;
  }

  /**
   * The first instant an occurrence may be due at.
   *
   * @return the start bound, or empty if unbounded
   */
  public Optional<Instant> startAt() {
    return Optional.ofNullable(startAt);
  }

  /**
   * The last instant an occurrence may be due at.
   *
   * @return the end bound, or empty if unbounded
   */
  public Optional<Instant> endAt() {
    return Optional.ofNullable(endAt);
  }

  /**
   * How many occurrences fire at most.
   *
   * @return the limit, or empty if unlimited
   */
  public OptionalLong maxFires() {
    return maxFires == null ? OptionalLong.empty() : OptionalLong.of(maxFires);
  }

  /**
   * What happens to occurrences missed while nothing could fire.
   *
   * @return the misfire policy; {@link Misfire#FIRE_ONCE} unless set
   */
  public Misfire misfire() {
    return misfire;
  }

  /**
   * Appends the cron request headers. Type, zone and misfire policy are always written, defaults
   * included, so a request says what it means without relying on the reader's defaults.
   */
  void addTo(Headers headers) {
    headers.add(DelayHeaders.CRON, WireText.of(expression));
    headers.add(DelayHeaders.CRON_TYPE, WireText.of(type.wireName()));
    headers.add(DelayHeaders.ZONE, WireText.of(zone.getId()));
    if (startAt != null) {
      headers.add(DelayHeaders.START_AT, WireText.of(startAt.toEpochMilli()));
    }
    if (endAt != null) {
      headers.add(DelayHeaders.END_AT, WireText.of(endAt.toEpochMilli()));
    }
    if (maxFires != null) {
      headers.add(DelayHeaders.MAX_FIRES, WireText.of(maxFires));
    }
    headers.add(DelayHeaders.MISFIRE, WireText.of(misfire.wireName()));
  }

  private static void checkBounds(Instant startAt, Instant endAt) {
    if (startAt != null && endAt != null && endAt.isBefore(startAt)) {
      throw new IllegalArgumentException(
          "endAt must not be before startAt, got startAt " + startAt + " and endAt " + endAt);
    }
  }

  @Override
  public boolean equals(Object other) {
    if (this == other) {
      return true;
    }
    return other instanceof CronSchedule that
        && expression.equals(that.expression)
        && type == that.type
        && zone.equals(that.zone)
        && Objects.equals(startAt, that.startAt)
        && Objects.equals(endAt, that.endAt)
        && Objects.equals(maxFires, that.maxFires)
        && misfire == that.misfire;
  }

  @Override
  public int hashCode() {
    return Objects.hash(expression, type, zone, startAt, endAt, maxFires, misfire);
  }

  @Override
  public String toString() {
    return "CronSchedule{expression='"
        + expression
        + "', type="
        + type
        + ", zone="
        + zone
        + ", startAt="
        + startAt
        + ", endAt="
        + endAt
        + ", maxFires="
        + maxFires
        + ", misfire="
        + misfire
        + "}";
  }
}

package dev.kdelay.schemas.generators;

import java.math.BigInteger;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

/**
 * Generators of the texts the time headers carry ({@code delay-fire-at}, {@code delay-start-at},
 * {@code delay-end-at} and {@code delay-after}), each knowing what it denotes: valid values in
 * every written form the contract accepts, the boundaries (the epoch and before it, year 1, 9999
 * and beyond, leap seconds, offsets at their limits, 18 and 19 digits), and garbage.
 *
 * <p>An instant is generated as a {@link Moment}: relative to the time the request is sent, or
 * absolute, and rendered only then ({@link Moment#render}), since a property's clock moves between
 * generating a request and sending it.
 */
public final class TimeTexts {

  private static final long SECOND = 1_000;
  private static final long DAY = 86_400_000L;
  private static final long YEAR = 365 * DAY;

  private TimeTexts() {}

  /** How an instant is written. */
  public enum Style {
    /** Decimal epoch milliseconds. */
    EPOCH_MS,
    /** {@code Instant.toString()}: {@code 2030-01-01T09:00:00.123Z}. */
    ISO_INSTANT,
    /** An offset date-time: {@code 2030-01-01T10:00:00.123+01:00}. */
    ISO_OFFSET,
    /** Lower-case {@code t} and {@code z}, which ISO-8601 parsers take. */
    ISO_LOWER_CASE,
    /** Nanoseconds written out: {@code 2030-01-01T09:00:00.123000000Z}. */
    ISO_NANOS,
    /** Without seconds, when the instant has none: {@code 2030-01-01T09:00Z}. */
    ISO_NO_SECONDS
  }

  /**
   * An instant as a request names it.
   *
   * @param relative whether {@code ms} counts from when the request is sent
   * @param ms epoch ms, or ms from when the request is sent
   * @param style how it is written
   * @param offsetMinutes the offset of {@link Style#ISO_OFFSET}
   * @param literal a fixed text that overrides all of the above, or null
   * @param literalDenotes what the literal denotes; null for garbage
   */
  public record Moment(
      boolean relative,
      long ms,
      Style style,
      int offsetMinutes,
      String literal,
      BigInteger literalDenotes) {

    /** The header text, and the instant it denotes, for a request sent at {@code nowMs}. */
    public Denoted render(long nowMs) {
      if (literal != null) {
        return literalDenotes == null
            ? Denoted.garbage(literal)
            : Denoted.of(literal, literalDenotes);
      }
      long at = relative ? nowMs + ms : ms;
      return Denoted.of(written(at), at);
    }

    private String written(long at) {
      Instant instant = Instant.ofEpochMilli(at);
      return switch (style) {
        case EPOCH_MS -> Long.toString(at);
        case ISO_INSTANT -> instant.toString();
        case ISO_OFFSET ->
            instant
                .atOffset(ZoneOffset.ofTotalSeconds(offsetMinutes * 60))
                .format(DateTimeFormatter.ISO_OFFSET_DATE_TIME);
        case ISO_LOWER_CASE -> instant.toString().toLowerCase(Locale.ROOT);
        case ISO_NANOS ->
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSSSSS'Z'")
                .withZone(ZoneOffset.UTC)
                .format(instant);
        case ISO_NO_SECONDS ->
            at % 60_000 == 0
                ? instant.toString().replace(":00Z", "Z")
                : instant.toString(); // has seconds: written in full
      };
    }

    @Override
    public String toString() {
      if (literal != null) {
        return "'" + literal + "'";
      }
      return (relative ? "now" + (ms >= 0 ? "+" : "") + ms + "ms" : "@" + ms) + "/" + style;
    }
  }

  /**
   * A duration as {@code delay-after} names it.
   *
   * @param text the header text
   * @param denotesMs the milliseconds it stands for (may be negative or beyond a long), or null for
   *     garbage
   */
  public record Span(String text, BigInteger denotesMs) {

    /** The text and what it denotes. */
    public Denoted denoted() {
      return denotesMs == null ? Denoted.garbage(text) : Denoted.of(text, denotesMs);
    }

    @Override
    public String toString() {
      return "'" + text + "'";
    }
  }

  /** Instants a schedule could be due at: mostly near now, some far, some at the boundaries. */
  public static Moment moment(Choices c) {
    return switch (c.weighted(8, 2, 2, 1)) {
      case 0 -> relative(c, c.between(-3 * SECOND, 20 * SECOND));
      case 1 -> relative(c, c.between(-2 * YEAR, 11 * YEAR));
      case 2 -> boundary(c);
      default -> garbage(c);
    };
  }

  /** Instants near now only, for schedules meant to fire within a test. */
  public static Moment soon(Choices c) {
    return relative(c, c.between(-2 * SECOND, 10 * SECOND));
  }

  private static Moment relative(Choices c, long offset) {
    return new Moment(true, offset, c.pick(Style.values()), c.intBetween(-1080, 1080), null, null);
  }

  /** Absolute instants at the edges of what a timestamp can hold, and odd ways to write them. */
  private static Moment boundary(Choices c) {
    if (c.chance(50)) {
      long ms =
          c.pick(
              0L, // the epoch
              1L,
              -1L, // 1969-12-31T23:59:59.999Z
              -14_182_940_000L, // 1969-07-20T20:17:40Z, a moon landing
              -62_135_596_800_000L, // 0001-01-01T00:00:00Z, Go's zero time
              253_402_300_799_999L, // 9999-12-31T23:59:59.999Z
              253_402_300_800_000L, // +10000-01-01T00:00:00Z
              Long.MAX_VALUE / 4,
              1_483_228_799_000L); // 2016-12-31T23:59:59Z, a leap second's neighbour
      return new Moment(false, ms, c.pick(Style.values()), c.pick(0, -1080, 1080), null, null);
    }
    return c.pick(
        literal("2016-12-31T23:59:60Z", 1_483_228_799_000L), // a leap second
        literal("2016-12-31T23:59:60.5Z", 1_483_228_799_500L),
        literal("2016-12-31T23:59:60+00:00", 1_483_228_799_000L),
        literal("2017-01-01T00:59:60+01:00", 1_483_228_799_000L),
        literal("1970-01-01T00:00:00Z", 0),
        literal("0000000000000000000001", 1), // 22 digits, leading zeros
        literal("000123", 123),
        literal("-1", -1),
        new Moment(false, 0, Style.EPOCH_MS, 0, "-0", null),
        literal("9223372036854775807", Long.MAX_VALUE),
        literal("9223372036854775808", BigInteger.ONE.shiftLeft(63)),
        literal("99999999999999999999", new BigInteger("99999999999999999999")),
        literal("+1000000000-12-31T23:59:59.999999999Z", new BigInteger("31556889864403199999")),
        literal("-999999999-01-01T00:00:00Z", new BigInteger("-31557014135596800000")),
        literal("2030-01-01T00:00:00+18:00", 1_893_391_200_000L),
        literal("2030-01-01T00:00:00-18:00", 1_893_520_800_000L));
  }

  /** Texts that are no instant at all. */
  private static Moment garbage(Choices c) {
    String text =
        c.chance(70)
            ? c.pick(
                "",
                " ",
                "now",
                "tomorrow",
                "2030-01-01",
                "2030-01-01T00:00:00",
                "2030-13-01T00:00:00Z",
                "2030-02-30T00:00:00Z",
                "2030-01-01T24:00:01Z",
                "2030-01-01T00:00:00+19:00",
                "2030-01-01T00:00:00 Z",
                "2030-01-01 00:00:00Z",
                "1.5",
                "1e12",
                "0x10",
                "+5",
                " 5",
                "5 ",
                "\u0663",
                "NaN",
                "2030-W01-1T00:00:00Z")
            : c.text(40);
    if (!text.isEmpty() && text.chars().allMatch(Character::isDigit)) {
      text = text + "x"; // digits alone denote epoch milliseconds, and this is meant as garbage
    }
    return new Moment(false, 0, Style.EPOCH_MS, 0, text, null);
  }

  private static Moment literal(String text, long denotes) {
    return literal(text, BigInteger.valueOf(denotes));
  }

  private static Moment literal(String text, BigInteger denotes) {
    return new Moment(false, 0, Style.EPOCH_MS, 0, text, denotes);
  }

  /** Durations for {@code delay-after}: mostly short and valid, in every form; some odd. */
  public static Span span(Choices c) {
    return switch (c.weighted(5, 3, 2)) {
      case 0 -> {
        long ms = c.between(0, 15 * SECOND);
        yield span(Long.toString(ms), ms);
      }
      case 1 -> {
        long ms = c.between(0, 15 * SECOND);
        yield span(java.time.Duration.ofMillis(ms).toString(), ms);
      }
      default ->
          c.pick(
              span("0", 0),
              span("PT0S", 0),
              span("pt1s", 1_000),
              span("P0D", 0),
              span("PT0.0001S", 0), // below a millisecond
              span("P-1DT25H", 3_600_000),
              span("PT-0S", 0),
              span("000000000000000000000001", 1),
              span("-5", -5),
              span("PT-1S", -1_000),
              span("-PT1S", -1_000),
              span("P3650D", 3650 * DAY),
              span("P4000D", 4000 * DAY),
              span("315360000000", 315_360_000_000L),
              span("999999999999999999", 999_999_999_999_999_999L),
              span("9999999999999999999", new BigInteger("9999999999999999999")),
              span("P999999999999D", new BigInteger("86399999999999913600000")),
              span("PT9223372036854775807S", new BigInteger("9223372036854775807000")),
              garbageSpan(""),
              garbageSpan("30s"),
              garbageSpan("1e3"),
              garbageSpan("PT"),
              garbageSpan("P1Y"),
              garbageSpan("P1M"),
              garbageSpan("+5"),
              garbageSpan(" 5"),
              garbageSpan("5.5"),
              garbageSpan("soon"));
    };
  }

  private static Span span(String text, long ms) {
    return new Span(text, BigInteger.valueOf(ms));
  }

  private static Span span(String text, BigInteger ms) {
    return new Span(text, ms);
  }

  private static Span garbageSpan(String text) {
    return new Span(text, null);
  }
}

package dev.kdelay.service.input;

import dev.kdelay.schemas.WireTimes;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations and instants as people type them, on the CLI and in the HTTP API: the wire contract's
 * formats ({@link WireTimes}), surrounding spaces ignored, plus the short units people type.
 *
 * <ul>
 *   <li>duration: ISO-8601 ({@code PT30S}, {@code P1DT2H}) or a number with a unit, {@code ms},
 *       {@code s}, {@code m}, {@code h} or {@code d} ({@code 500ms}, {@code 30s}, {@code 5m}); a
 *       bare number is milliseconds, as in the {@code delay-after} header;
 *   <li>instant: ISO-8601 instant or offset date-time ({@code 2030-01-01T09:00:00Z}, {@code
 *       2030-01-01T10:00:00+01:00}) or epoch milliseconds.
 * </ul>
 */
public final class TimeArguments {

  private static final Pattern PLAIN_DURATION = Pattern.compile("(\\d{1,18})(ms|s|m|h|d)?");

  private TimeArguments() {}

  /**
   * Parses a duration.
   *
   * @throws IllegalArgumentException if the text is no duration, or a negative one
   */
  public static Duration duration(String text) {
    String trimmed = text.trim().toLowerCase(Locale.ROOT);
    Matcher plain = PLAIN_DURATION.matcher(trimmed);
    if (plain.matches()) {
      long amount = Long.parseLong(plain.group(1));
      return plainDuration(amount, plain.group(2) == null ? "ms" : plain.group(2), text);
    }
    OptionalLong millis = WireTimes.durationMillis(trimmed);
    if (millis.isEmpty()) {
      throw new IllegalArgumentException(
          "not a duration: '"
              + text
              + "'; expected a non-negative ISO-8601 duration such as PT30S, or a number with a"
              + " unit: 500ms, 30s, 5m, 2h, 1d");
    }
    return Duration.ofMillis(millis.getAsLong());
  }

  /**
   * Parses an instant.
   *
   * @throws IllegalArgumentException if the text is no instant
   */
  public static Instant instant(String text) {
    OptionalLong epochMillis = WireTimes.epochMillis(text.trim());
    if (epochMillis.isEmpty()) {
      throw new IllegalArgumentException(
          "not an instant: '"
              + text
              + "'; expected ISO-8601 such as 2030-01-01T09:00:00Z or 2030-01-01T10:00:00+01:00,"
              + " or epoch milliseconds");
    }
    return Instant.ofEpochMilli(epochMillis.getAsLong());
  }

  private static Duration plainDuration(long amount, String unit, String text) {
    try {
      return switch (unit) {
        case "ms" -> Duration.ofMillis(amount);
        case "s" -> Duration.ofSeconds(amount);
        case "m" -> Duration.ofMinutes(amount);
        case "h" -> Duration.ofHours(amount);
        case "d" -> Duration.ofDays(amount);
        default -> throw new IllegalStateException("unreachable: unit " + unit);
      };
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException("duration too long: '" + text + "'");
    }
  }
}

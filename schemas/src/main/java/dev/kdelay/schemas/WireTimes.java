package dev.kdelay.schemas;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.OptionalLong;

/**
 * Instants and durations as the wire contract writes them.
 *
 * <ul>
 *   <li>an instant ({@code delay-fire-at}, {@code delay-start-at}, {@code delay-end-at}): epoch
 *       milliseconds, or an ISO-8601 instant ({@code 2030-01-01T09:00:00Z}) or offset date-time
 *       ({@code 2030-01-01T10:00:00+01:00});
 *   <li>a duration ({@code delay-after}): milliseconds, or a non-negative ISO-8601 duration ({@code
 *       PT30S}).
 * </ul>
 *
 * <p>Both are held as milliseconds: what does not fit in a long of them is not a wire time. Writers
 * send decimal milliseconds ({@link WireText#of(long)}), after checking their value fits.
 *
 * <pre>{@code
 * OptionalLong dueMs = WireTimes.epochMillis("2030-01-01T09:00:00Z");   // 1893488400000
 * OptionalLong delayMs = WireTimes.durationMillis("PT30S");              // 30000
 * }</pre>
 */
public final class WireTimes {

  private WireTimes() {}

  /**
   * Reads an instant: epoch milliseconds, or an ISO-8601 instant or offset date-time.
   *
   * @param text the text
   * @return epoch milliseconds (negative before 1970), or empty if the text is no instant or one
   *     outside the range of a long of milliseconds
   */
  public static OptionalLong epochMillis(String text) {
    OptionalLong millis = WireText.nonNegativeDecimal(text);
    if (millis.isPresent() || text.chars().allMatch(Character::isDigit)) {
      return millis;
    }
    try {
      return OptionalLong.of(Instant.parse(text).toEpochMilli());
    } catch (DateTimeParseException | ArithmeticException notAnInstant) {
      try {
        return OptionalLong.of(OffsetDateTime.parse(text).toInstant().toEpochMilli());
      } catch (DateTimeParseException | ArithmeticException e) {
        return OptionalLong.empty();
      }
    }
  }

  /**
   * Reads a duration: milliseconds, or a non-negative ISO-8601 duration such as {@code PT30S}.
   *
   * @param text the text
   * @return milliseconds, or empty if the text is no duration, a negative one or one too long for a
   *     long of milliseconds
   */
  public static OptionalLong durationMillis(String text) {
    OptionalLong millis = WireText.nonNegativeDecimal(text);
    if (millis.isPresent() || text.chars().allMatch(Character::isDigit)) {
      return millis;
    }
    try {
      Duration duration = Duration.parse(text);
      return duration.isNegative() ? OptionalLong.empty() : OptionalLong.of(duration.toMillis());
    } catch (DateTimeParseException | ArithmeticException e) {
      return OptionalLong.empty();
    }
  }

  /**
   * Checks that an instant can be written: that it is within the range of epoch milliseconds.
   *
   * @param instant the instant
   * @param what what the instant is, for the message
   * @return the instant
   * @throws NullPointerException if instant is null
   * @throws IllegalArgumentException if it lies outside that range
   */
  public static Instant requireEpochMillis(Instant instant, String what) {
    requireNonNull(instant, what + " cannot be null");
    try {
      instant.toEpochMilli();
      return instant;
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException(
          what + " must be within the range of epoch milliseconds, got " + instant, e);
    }
  }

  /**
   * Checks that a duration can be written: non-negative, and within a long of milliseconds.
   *
   * @param duration the duration
   * @param what what the duration is, for the message
   * @return the duration
   * @throws NullPointerException if duration is null
   * @throws IllegalArgumentException if it is negative or too long
   */
  public static Duration requireMillis(Duration duration, String what) {
    requireNonNull(duration, what + " cannot be null");
    if (duration.isNegative()) {
      throw new IllegalArgumentException(what + " must not be negative, got " + duration);
    }
    try {
      duration.toMillis();
      return duration;
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException(
          what + " must fit in a long of milliseconds, got " + duration, e);
    }
  }
}

package dev.kdelay.schemas;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.OptionalLong;

/** Parsing of the text formats the headers use. Every method is total: bad input is empty. */
final class WireFormats {

  private WireFormats() {}

  /** Strict UTF-8 decoding: malformed input is empty, never replaced. */
  static Optional<String> utf8(byte[] bytes) {
    try {
      return Optional.of(
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(bytes))
              .toString());
    } catch (CharacterCodingException e) {
      return Optional.empty();
    }
  }

  /** A non-negative decimal integer of at most 18 digits, so it cannot overflow a long. */
  static OptionalLong nonNegativeDecimal(String text) {
    if (text.isEmpty() || text.length() > 18) {
      return OptionalLong.empty();
    }
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c < '0' || c > '9') {
        return OptionalLong.empty();
      }
    }
    return OptionalLong.of(Long.parseLong(text));
  }

  /** Epoch milliseconds, or an ISO-8601 instant ({@code ...Z}) or offset date-time. */
  static OptionalLong instant(String text) {
    OptionalLong millis = nonNegativeDecimal(text);
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

  /** Milliseconds, or a non-negative ISO-8601 duration such as {@code PT30S}. */
  static OptionalLong durationMillis(String text) {
    OptionalLong millis = nonNegativeDecimal(text);
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

  /** A legal Kafka topic name: 1..249 of {@code [a-zA-Z0-9._-]}, not "." or "..". */
  static boolean legalTopicName(String name) {
    if (name.isEmpty() || name.length() > 249 || name.equals(".") || name.equals("..")) {
      return false;
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      boolean legal =
          (c >= 'a' && c <= 'z')
              || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9')
              || c == '.'
              || c == '_'
              || c == '-';
      if (!legal) {
        return false;
      }
    }
    return true;
  }
}

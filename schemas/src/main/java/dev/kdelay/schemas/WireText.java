package dev.kdelay.schemas;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Text as the wire contract carries it: request keys and header values are strict UTF-8, and
 * numbers are plain decimal digits.
 *
 * <p>"Strict" means malformed input is refused, never replaced: Java's {@code new String(bytes,
 * UTF_8)} and {@code String.getBytes(UTF_8)} silently substitute {@code U+FFFD} or {@code '?'},
 * which would turn one id into another. The {@code Optional} methods are total, for readers that
 * turn bad input into data (a dead letter, a 400); the {@code require} methods throw, for callers
 * whose arguments are at fault.
 *
 * <pre>{@code
 * String id = WireText.decode(record.key()).orElse(null);      // null: not UTF-8
 * byte[] key = WireText.requireEncoded(id, "id");              // throws on an unpaired surrogate
 * headers.add(DelayHeaders.FIRE_AT, WireText.of(dueAt.toEpochMilli()));
 * }</pre>
 */
public final class WireText {

  /** How much of a rejected value an exception message quotes. */
  private static final int QUOTED_CHARS = 64;

  /** Most digits of a decimal: eighteen always fit in a long. */
  private static final int MAX_DECIMAL_DIGITS = 18;

  private WireText() {}

  /**
   * Decodes strict UTF-8.
   *
   * @param bytes the bytes
   * @return the text, or empty if the bytes are not well-formed UTF-8
   */
  public static Optional<String> decode(byte[] bytes) {
    return decode(bytes, 0, bytes.length);
  }

  /**
   * Decodes part of an array as strict UTF-8.
   *
   * @param bytes the bytes
   * @param offset where the text starts
   * @param length how many bytes it has
   * @return the text, or empty if those bytes are not well-formed UTF-8
   * @throws IndexOutOfBoundsException if offset and length do not lie within the array
   */
  public static Optional<String> decode(byte[] bytes, int offset, int length) {
    try {
      return Optional.of(
          UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(bytes, offset, length))
              .toString());
    } catch (CharacterCodingException e) {
      return Optional.empty();
    }
  }

  /**
   * Encodes text as strict UTF-8.
   *
   * @param text the text
   * @return its UTF-8 bytes, or empty if it is not well-formed Unicode (an unpaired surrogate)
   */
  public static Optional<byte[]> encode(String text) {
    try {
      ByteBuffer encoded =
          UTF_8
              .newEncoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .encode(CharBuffer.wrap(text));
      byte[] bytes = new byte[encoded.remaining()];
      encoded.get(bytes);
      return Optional.of(bytes);
    } catch (CharacterCodingException e) {
      return Optional.empty();
    }
  }

  /**
   * Decodes bytes that must be well-formed UTF-8, as every request header value must be.
   *
   * @param bytes the bytes
   * @param what what the bytes are, for the message
   * @return the text
   * @throws IllegalArgumentException if the bytes are not well-formed UTF-8
   */
  public static String requireDecoded(byte[] bytes, String what) {
    return decode(bytes)
        .orElseThrow(
            () ->
                new IllegalArgumentException(
                    what
                        + " must be well-formed UTF-8, got "
                        + bytes.length
                        + " bytes that are not"));
  }

  /**
   * Encodes text that must be well-formed Unicode.
   *
   * @param text the text
   * @param what what the text is, for the message
   * @return its UTF-8 bytes
   * @throws IllegalArgumentException if the text holds an unpaired surrogate
   */
  public static byte[] requireEncoded(String text, String what) {
    return encode(text)
        .orElseThrow(
            () ->
                new IllegalArgumentException(
                    what + " must be well-formed Unicode text, got '" + quote(text) + "'"));
  }

  /**
   * The header value of text already known to be well-formed (a name, a wire name).
   *
   * @param text the text
   * @return its UTF-8 bytes
   * @throws NullPointerException if text is null
   */
  public static byte[] of(String text) {
    return requireNonNull(text, "text cannot be null").getBytes(UTF_8);
  }

  /**
   * The header value of a number: its decimal digits.
   *
   * @param number the number
   * @return the digits as UTF-8 bytes
   */
  public static byte[] of(long number) {
    return of(Long.toString(number));
  }

  /**
   * Reads a number as the headers write it: a non-negative decimal of at most eighteen ASCII
   * digits, so that it cannot overflow a long. No sign, no spaces, no other digits.
   *
   * @param text the text
   * @return the number, or empty if the text is not such a decimal
   */
  public static OptionalLong nonNegativeDecimal(String text) {
    if (text.isEmpty() || text.length() > MAX_DECIMAL_DIGITS || !asciiDigits(text)) {
      return OptionalLong.empty();
    }
    return OptionalLong.of(Long.parseLong(text));
  }

  private static boolean asciiDigits(String text) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c < '0' || c > '9') {
        return false;
      }
    }
    return true;
  }

  /** A value for an exception message, cut to {@value #QUOTED_CHARS} characters. */
  static String quote(String value) {
    return value.length() <= QUOTED_CHARS ? value : value.substring(0, QUOTED_CHARS) + "...";
  }
}

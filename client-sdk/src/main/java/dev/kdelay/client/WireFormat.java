package dev.kdelay.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

import dev.kdelay.schemas.RequestLimits;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.time.Duration;
import java.time.Instant;
import java.util.regex.Pattern;

/**
 * How the client writes request keys and header values: UTF-8 text, numbers and times as decimal
 * epoch milliseconds. Every check here throws {@link IllegalArgumentException} naming the value and
 * what was expected, so that a request the service would dead-letter fails at the caller instead.
 */
final class WireFormat {

  /** Longest schedule id, in UTF-8 bytes. */
  static final int MAX_ID_BYTES = RequestLimits.CONTRACT_MAX_ID_BYTES;

  /** Kafka's own limit and alphabet for topic names. */
  private static final int MAX_TOPIC_LENGTH = 249;

  private static final Pattern LEGAL_TOPIC = Pattern.compile("[a-zA-Z0-9._-]+");

  /** How much of a rejected value an exception message quotes. */
  private static final int QUOTED_CHARS = 64;

  private WireFormat() {}

  /** The request key: the id as 1..{@value #MAX_ID_BYTES} bytes of well-formed UTF-8. */
  static byte[] scheduleId(String id) {
    requireNonNull(id, "id cannot be null");
    byte[] bytes = strictUtf8(id, "id");
    if (bytes.length == 0 || bytes.length > MAX_ID_BYTES) {
      throw new IllegalArgumentException(
          "id must be 1.."
              + MAX_ID_BYTES
              + " UTF-8 bytes, got "
              + bytes.length
              + " bytes: '"
              + quote(id)
              + "'");
    }
    return bytes;
  }

  /** Checks that a topic name is one Kafka accepts. */
  static String topic(String topic, String what) {
    requireNonNull(topic, what + " cannot be null");
    if (topic.isEmpty()
        || topic.length() > MAX_TOPIC_LENGTH
        || topic.equals(".")
        || topic.equals("..")
        || !LEGAL_TOPIC.matcher(topic).matches()) {
      throw new IllegalArgumentException(
          what
              + " must be a legal Kafka topic name (1.."
              + MAX_TOPIC_LENGTH
              + " of [a-zA-Z0-9._-], not '.' or '..'), got '"
              + quote(topic)
              + "'");
    }
    return topic;
  }

  /** Encodes text, refusing unpaired surrogates rather than silently writing '?' for them. */
  static byte[] strictUtf8(String text, String what) {
    try {
      ByteBuffer encoded =
          UTF_8
              .newEncoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .encode(CharBuffer.wrap(text));
      byte[] bytes = new byte[encoded.remaining()];
      encoded.get(bytes);
      return bytes;
    } catch (CharacterCodingException e) {
      throw new IllegalArgumentException(
          what + " must be well-formed Unicode text, got '" + quote(text) + "'", e);
    }
  }

  /** Decodes bytes that must be well-formed UTF-8, as every request header value must be. */
  static String strictUtf8(byte[] bytes, String what) {
    try {
      return UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes))
          .toString();
    } catch (CharacterCodingException e) {
      throw new IllegalArgumentException(
          what + " must be well-formed UTF-8, got " + bytes.length + " bytes that are not", e);
    }
  }

  /** A header value for text already known to be well-formed. */
  static byte[] text(String text) {
    return text.getBytes(UTF_8);
  }

  /** A header value for a number: decimal digits. */
  static byte[] number(long value) {
    return text(Long.toString(value));
  }

  /** Checks that an instant can be written as epoch milliseconds. */
  static Instant epochMillisRange(Instant instant, String what) {
    requireNonNull(instant, what + " cannot be null");
    try {
      instant.toEpochMilli();
      return instant;
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException(
          what + " must be within the range of epoch milliseconds, got " + instant, e);
    }
  }

  /** Checks that a duration is non-negative and can be written as milliseconds. */
  static Duration millisRange(Duration duration, String what) {
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

  private static String quote(String value) {
    return value.length() <= QUOTED_CHARS ? value : value.substring(0, QUOTED_CHARS) + "...";
  }
}

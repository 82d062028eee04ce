package dev.kdelay.client.retry;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * Names of the headers a {@link RetryHandler} writes on the records it retries and dead-letters.
 * Values are UTF-8 text, numbers and times in decimal (times as epoch milliseconds).
 *
 * <p>They start with {@code kdelay-retry-}, not {@code delay-}: kdelay steers requests with {@code
 * delay-*} headers and writes its own on fired records, and none of them may be mistaken for these.
 * A retried record carries the headers of the record that failed (less these and kdelay's {@code
 * delay-*} ones), then these, then kdelay's fired-record headers ({@code delay-id}, ...).
 *
 * <pre>{@code
 * int attempt = RetryHeaders.attempt(record.headers()) + 1;   // 1 on the first delivery
 * }</pre>
 */
public final class RetryHeaders {

  /** Common prefix of the retry headers. */
  public static final String PREFIX = "kdelay-retry-";

  /**
   * The 1-based number of the delivery attempt that failed and made this record: 1 on the first
   * retry, {@code maxAttempts} on a dead letter of a record that failed every attempt.
   */
  public static final String ATTEMPT = PREFIX + "attempt";

  /** When the first attempt failed, epoch milliseconds; the same on every retry of a record. */
  public static final String FIRST_FAILURE_AT = PREFIX + "first-failure-at";

  /** The topic the record was first consumed from (not the retry topic). */
  public static final String ORIGIN_TOPIC = PREFIX + "origin-topic";

  /** The partition the record was first consumed from. */
  public static final String ORIGIN_PARTITION = PREFIX + "origin-partition";

  /** The offset the record was first consumed at. */
  public static final String ORIGIN_OFFSET = PREFIX + "origin-offset";

  /** The class name of the exception the last attempt threw. */
  public static final String EXCEPTION = PREFIX + "exception";

  /**
   * The message of the exception the last attempt threw, cut to {@value #MAX_MESSAGE_CHARS}
   * characters ({@code ...} marks a cut); empty if it had none.
   */
  public static final String EXCEPTION_MESSAGE = PREFIX + "exception-message";

  /** Dead letters only: why the record was not retried, a {@link DeadLetterReason} name. */
  public static final String DEAD_LETTER_REASON = PREFIX + "dead-letter-reason";

  /**
   * Longest exception message written, in characters: a stack of causes must not bloat a record.
   */
  public static final int MAX_MESSAGE_CHARS = 400;

  private RetryHeaders() {}

  /**
   * Whether a header name is one of the retry headers.
   *
   * @param name a header name
   * @return true if it starts with {@value #PREFIX}
   * @throws NullPointerException if {@code name} is null
   */
  public static boolean isRetryHeader(String name) {
    return name.startsWith(PREFIX);
  }

  /**
   * How many attempts of this record failed before it was delivered: the value of {@link #ATTEMPT},
   * or 0 for a record that is not a retry. A value that is not a positive number counts as absent.
   *
   * @param headers the headers of a consumed record
   * @return the number of failed attempts, 0 if none
   * @throws NullPointerException if {@code headers} is null
   */
  public static int attempt(Headers headers) {
    requireNonNull(headers, "headers cannot be null");
    long value = number(headers, ATTEMPT);
    return value > 0 && value <= Integer.MAX_VALUE ? (int) value : 0;
  }

  /** The last value of a numeric header, or -1 if it is absent or not a non-negative number. */
  static long number(Headers headers, String name) {
    Header header = headers.lastHeader(name);
    if (header == null || header.value() == null) {
      return -1;
    }
    try {
      long value = Long.parseLong(new String(header.value(), UTF_8));
      return value < 0 ? -1 : value;
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** The last value of a text header, or null if it is absent. */
  static String text(Headers headers, String name) {
    Header header = headers.lastHeader(name);
    return header == null || header.value() == null ? null : new String(header.value(), UTF_8);
  }

  /** An exception message as the {@link #EXCEPTION_MESSAGE} header holds it. */
  static String message(Throwable exception) {
    String message = exception.getMessage();
    if (message == null) {
      return "";
    }
    if (message.length() <= MAX_MESSAGE_CHARS) {
      return message;
    }
    int end = MAX_MESSAGE_CHARS - 3;
    // Never split a surrogate pair: half of one is not well-formed UTF-8.
    if (Character.isHighSurrogate(message.charAt(end - 1))) {
      end--;
    }
    return message.substring(0, end) + "...";
  }
}

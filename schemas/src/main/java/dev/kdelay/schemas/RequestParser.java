package dev.kdelay.schemas;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.OptionalLong;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * Turns a record from the request topic into a {@link DelayRequest}, or a {@link Rejection} that
 * says exactly what is wrong. Never throws on bad input: bad records are data.
 *
 * <pre>{@code
 * RequestParser parser = new RequestParser(RequestLimits.DEFAULTS);
 * ParseResult result = parser.parse(record.key(), record.value(), record.headers(),
 *     record.timestamp(), System.currentTimeMillis());
 * if (result instanceof ParseResult.Rejected rejected) {
 *   deadLetter(record, rejected.rejection());
 * }
 * }</pre>
 *
 * <p>Thread-safe and stateless.
 */
public final class RequestParser {

  private final RequestLimits limits;

  /**
   * Creates a parser.
   *
   * @param limits the bounds requests must stay within
   * @throws NullPointerException if limits is null
   */
  public RequestParser(RequestLimits limits) {
    this.limits = Objects.requireNonNull(limits, "limits cannot be null");
  }

  /**
   * Parses one request record.
   *
   * @param key the record key (the schedule id), may be null
   * @param value the record value (the payload), may be null
   * @param headers the record headers
   * @param recordTimestamp the record timestamp, epoch ms; {@code delay-after} counts from it (a
   *     negative timestamp, meaning none, counts from {@code nowMs})
   * @param nowMs the current wall-clock time, epoch ms, for the horizon check
   * @return the request, or why it was rejected
   */
  public ParseResult parse(
      byte[] key, byte[] value, Headers headers, long recordTimestamp, long nowMs) {
    try {
      return new ParseResult.Accepted(request(key, value, headers, recordTimestamp, nowMs));
    } catch (RejectionException e) {
      return new ParseResult.Rejected(e.rejection());
    }
  }

  private DelayRequest request(
      byte[] key, byte[] value, Headers headers, long recordTimestamp, long nowMs) {
    String id = id(key);
    RequestHeaders request = RequestHeaders.of(headers, limits.maxHeaders());
    Action action = action(request, value);
    long timestamp = recordTimestamp >= 0 ? recordTimestamp : nowMs;
    if (action == Action.RESCHEDULE) {
      rejectTargetHeaders(request);
      return new DelayRequest(action, id, timestamp, null, timing(request, timestamp, nowMs));
    }
    if (action != Action.SCHEDULE) {
      return new DelayRequest(action, id, timestamp, null);
    }
    if (value != null && value.length > limits.maxPayloadBytes()) {
      throw reject(
          RejectionReason.TOO_LARGE,
          "payload of " + value.length + " bytes exceeds the limit of " + limits.maxPayloadBytes());
    }
    Target target = target(request);
    Timing timing = timing(request, timestamp, nowMs);
    return new DelayRequest(
        action, id, timestamp, new Schedule(target, timing, value, carried(headers)));
  }

  private String id(byte[] key) {
    if (key == null || key.length == 0) {
      throw reject(RejectionReason.BAD_ID, "the record key (the schedule id) is missing or empty");
    }
    if (key.length > limits.maxIdBytes()) {
      throw reject(
          RejectionReason.BAD_ID,
          "the schedule id is " + key.length + " bytes; the limit is " + limits.maxIdBytes());
    }
    return WireText.decode(key)
        .orElseThrow(() -> reject(RejectionReason.BAD_ID, "the schedule id is not valid UTF-8"));
  }

  private static Action action(RequestHeaders request, byte[] value) {
    String name = request.text(DelayHeaders.ACTION);
    if (name == null) {
      // A bare tombstone is a cancel; everything else without an action is a schedule.
      return value == null ? Action.CANCEL : Action.SCHEDULE;
    }
    return Action.fromWireName(name)
        .orElseThrow(
            () ->
                reject(
                    RejectionReason.UNKNOWN_ACTION,
                    DelayHeaders.ACTION
                        + " is '"
                        + name
                        + "'; expected schedule, cancel, pause, resume, trigger or"
                        + " reschedule"));
  }

  /**
   * A reschedule moves the time only: target headers on one would be silently ignored, so they are
   * refused instead.
   */
  private static void rejectTargetHeaders(RequestHeaders request) {
    for (String name :
        List.of(
            DelayHeaders.TARGET_TOPIC, DelayHeaders.TARGET_KEY, DelayHeaders.TARGET_PARTITION)) {
      if (request.has(name)) {
        throw reject(
            RejectionReason.BAD_HEADER,
            name
                + " does not apply to a reschedule, which moves the time only; send a schedule"
                + " to change the target");
      }
    }
  }

  private static Target target(RequestHeaders request) {
    String topic = request.text(DelayHeaders.TARGET_TOPIC);
    if (topic == null) {
      throw reject(RejectionReason.MISSING_TARGET, DelayHeaders.TARGET_TOPIC + " is required");
    }
    if (!TopicNames.isLegal(topic)) {
      throw reject(
          RejectionReason.BAD_TARGET,
          "'" + topic + "' is not a legal topic name (1-249 of a-z A-Z 0-9 . _ -)");
    }
    return new Target(topic, request.bytes(DelayHeaders.TARGET_KEY), partition(request));
  }

  private static OptionalInt partition(RequestHeaders request) {
    String text = request.text(DelayHeaders.TARGET_PARTITION);
    if (text == null) {
      return OptionalInt.empty();
    }
    OptionalLong partition = WireText.nonNegativeDecimal(text);
    if (partition.isEmpty() || partition.getAsLong() > Integer.MAX_VALUE) {
      throw reject(
          RejectionReason.BAD_PARTITION,
          DelayHeaders.TARGET_PARTITION + " is '" + text + "'; expected a non-negative integer");
    }
    return OptionalInt.of((int) partition.getAsLong());
  }

  private Timing timing(RequestHeaders request, long timestamp, long nowMs) {
    String fireAt = request.text(DelayHeaders.FIRE_AT);
    String after = request.text(DelayHeaders.AFTER);
    String cron = request.text(DelayHeaders.CRON);
    int given = (fireAt != null ? 1 : 0) + (after != null ? 1 : 0) + (cron != null ? 1 : 0);
    if (given == 0) {
      throw reject(
          RejectionReason.MISSING_TIME,
          "a schedule or reschedule needs one of delay-fire-at, delay-after or delay-cron");
    }
    if (given > 1) {
      throw reject(
          RejectionReason.CONFLICTING_TIMES,
          "give exactly one of delay-fire-at, delay-after and delay-cron");
    }
    if (cron != null) {
      return CronRequest.spec(request, cron, nowMs, limits.horizonMs());
    }
    CronRequest.rejectCronOnlyHeaders(request);
    long dueMs =
        fireAt != null
            ? instant(DelayHeaders.FIRE_AT, fireAt)
            : afterTimestamp(timestamp, duration(DelayHeaders.AFTER, after));
    checkHorizon(dueMs, nowMs, limits.horizonMs());
    return new Timing.Once(dueMs);
  }

  private static long afterTimestamp(long timestamp, long delayMs) {
    try {
      return Math.addExact(timestamp, delayMs);
    } catch (ArithmeticException e) {
      throw reject(
          RejectionReason.TOO_FAR, DelayHeaders.AFTER + " of " + delayMs + " ms is out of range");
    }
  }

  static long instant(String header, String text) {
    long instant =
        WireTimes.epochMillis(text)
            .orElseThrow(
                () ->
                    reject(
                        RejectionReason.BAD_TIME,
                        header
                            + " is '"
                            + text
                            + "'; expected epoch milliseconds or an ISO-8601 instant such as"
                            + " 2030-01-01T00:00:00Z"));
    if (instant < 0) {
      // A fired record is stamped with its due time, and a Kafka record cannot carry a negative
      // timestamp: accepted, such a task could never be written anywhere.
      throw reject(
          RejectionReason.BAD_TIME,
          header
              + " is '"
              + text
              + "', before the Unix epoch (1970-01-01T00:00:00Z); Kafka cannot carry such a"
              + " time");
    }
    return instant;
  }

  private static long duration(String header, String text) {
    long millis =
        WireTimes.durationMillis(text)
            .orElseThrow(
                () ->
                    reject(
                        RejectionReason.BAD_TIME,
                        header
                            + " is '"
                            + text
                            + "'; expected non-negative milliseconds or an ISO-8601 duration such"
                            + " as PT30S"));
    if (millis > CronSpec.NO_END / 4) {
      throw reject(RejectionReason.TOO_FAR, header + " of " + millis + " ms is out of range");
    }
    return millis;
  }

  static void checkHorizon(long dueMs, long nowMs, long horizonMs) {
    // Compared without subtracting: a due time far in the past must not overflow into "ahead".
    if (dueMs > nowMs && dueMs - nowMs > horizonMs) {
      throw reject(
          RejectionReason.TOO_FAR,
          "due time "
              + dueMs
              + " lies more than "
              + horizonMs
              + " ms ahead (the configured horizon)");
    }
  }

  private static List<Header> carried(Headers headers) {
    List<Header> carried = new ArrayList<>();
    for (Header header : headers) {
      if (DelayHeaders.isCarried(header.key())) {
        carried.add(header);
      }
    }
    return carried;
  }

  /** Carries a rejection out of the nested checks, to {@link #parse}. */
  static RejectionException reject(RejectionReason reason, String message) {
    return new RejectionException(reason, message);
  }

  /** The request headers of one record, each at most once, values checked as UTF-8. */
  static final class RequestHeaders {
    private final Map<String, byte[]> values = new HashMap<>();

    static RequestHeaders of(Headers headers, int maxHeaders) {
      RequestHeaders request = new RequestHeaders();
      int count = 0;
      for (Header header : headers) {
        if (++count > maxHeaders) {
          throw reject(
              RejectionReason.TOO_LARGE, "more than " + maxHeaders + " headers on one request");
        }
        if (DelayHeaders.REQUEST_HEADERS.contains(header.key())) {
          request.add(header);
        }
      }
      return request;
    }

    private void add(Header header) {
      if (header.value() == null) {
        throw reject(RejectionReason.BAD_HEADER, header.key() + " has no value");
      }
      if (values.putIfAbsent(header.key(), header.value()) != null) {
        throw reject(
            RejectionReason.BAD_HEADER, header.key() + " is given more than once; give it once");
      }
      if (WireText.decode(header.value()).isEmpty()) {
        throw reject(RejectionReason.BAD_HEADER, header.key() + " is not valid UTF-8");
      }
    }

    boolean has(String name) {
      return values.containsKey(name);
    }

    byte[] bytes(String name) {
      return values.get(name);
    }

    String text(String name) {
      byte[] value = values.get(name);
      return value == null ? null : new String(value, StandardCharsets.UTF_8);
    }
  }

  /** The cron part of a request. */
  static final class CronRequest {
    private static final List<String> CRON_ONLY =
        List.of(
            DelayHeaders.CRON_TYPE,
            DelayHeaders.ZONE,
            DelayHeaders.START_AT,
            DelayHeaders.END_AT,
            DelayHeaders.MAX_FIRES,
            DelayHeaders.MISFIRE);

    private CronRequest() {}

    static void rejectCronOnlyHeaders(RequestHeaders request) {
      for (String name : CRON_ONLY) {
        if (request.has(name)) {
          throw reject(
              RejectionReason.CONFLICTING_TIMES,
              name + " applies to delay-cron schedules only, not to one-shot delays");
        }
      }
    }

    static CronSpec spec(RequestHeaders request, String expression, long nowMs, long horizonMs) {
      CronFlavor flavor =
          CronOptions.flavor(DelayHeaders.CRON_TYPE, request.text(DelayHeaders.CRON_TYPE));
      try {
        CronExpressions.parse(expression, flavor);
      } catch (IllegalArgumentException e) {
        throw reject(
            RejectionReason.BAD_CRON,
            "'"
                + expression
                + "' is not a valid "
                + flavor.wireName()
                + " cron expression: "
                + e.getMessage());
      }
      long startAt = bound(request, DelayHeaders.START_AT, CronSpec.NO_START);
      long endAt = bound(request, DelayHeaders.END_AT, CronSpec.NO_END);
      if (endAt < startAt) {
        throw reject(
            RejectionReason.BAD_TIME,
            DelayHeaders.END_AT
                + " ("
                + endAt
                + ") is before "
                + DelayHeaders.START_AT
                + " ("
                + startAt
                + ")");
      }
      if (startAt != CronSpec.NO_START) {
        checkHorizon(startAt, nowMs, horizonMs);
      }
      return new CronSpec(
          expression,
          flavor,
          CronOptions.zone(DelayHeaders.ZONE, request.text(DelayHeaders.ZONE)),
          startAt,
          endAt,
          CronOptions.maxFires(DelayHeaders.MAX_FIRES, request.text(DelayHeaders.MAX_FIRES)),
          CronOptions.misfire(DelayHeaders.MISFIRE, request.text(DelayHeaders.MISFIRE)));
    }

    private static long bound(RequestHeaders request, String header, long absent) {
      String text = request.text(header);
      return text == null ? absent : instant(header, text);
    }
  }
}

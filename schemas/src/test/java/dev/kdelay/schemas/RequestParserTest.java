package dev.kdelay.schemas;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What the request vectors cannot express: robustness on arbitrary input, the default limits, and
 * the wording of rejection messages.
 */
class RequestParserTest {

  private static final long NOW = 1_767_225_600_000L;
  private static final RequestParser PARSER = new RequestParser(RequestLimits.DEFAULTS);

  /** Plausible values that reach deep into the parser, mixed with garbage. */
  private static final List<String> VALUES =
      List.of(
          "schedule",
          "cancel",
          "pause",
          "resume",
          "trigger",
          "reschedule",
          "t",
          "orders.timeouts",
          "bad topic",
          "",
          "0",
          "3",
          "-1",
          "2147483648",
          "1767225900000",
          "2026-01-01T00:05:00Z",
          "2026-01-01T01:05:00+01:00",
          "-292275055-05-16T16:47:04.192Z",
          "PT30S",
          "P4000D",
          "PT-1S",
          "999999999999999999",
          "0 0 12 * * ?",
          "*/5 * * * *",
          "0 0 9-17 * * MON-FRI",
          "0 0 0 ? * MON#2",
          "0 0 0 L * ?",
          "quartz",
          "unix",
          "spring",
          "UTC",
          "Europe/Berlin",
          "Mars/Base",
          "fire-once",
          "fire-all",
          "skip",
          "10",
          "\u0000",
          "é",
          "🕒");

  private static final List<String> HEADER_NAMES = headerNames();

  // ------------------------------------------------------------------------------ robustness

  @Test
  void shouldReturnAResultAndNeverThrowWhenRecordsAreRandom() {
    Random random = new Random(0x6b64656c6179L);
    Set<String> outcomes = new TreeSet<>();
    for (int i = 0; i < 40_000; i++) {
      byte[] key = randomKey(random);
      byte[] value = random.nextInt(4) == 0 ? null : randomBytes(random, 16);
      Headers headers = randomHeaders(random);
      long timestamp = pick(random, -1L, 0L, NOW - 10_000, NOW, Long.MAX_VALUE, Long.MIN_VALUE);
      long now = pick(random, NOW, 0L, Long.MAX_VALUE);
      String input =
          "key="
              + hex(key)
              + " value="
              + hex(value)
              + " headers="
              + describe(headers)
              + " ts="
              + timestamp
              + " now="
              + now;

      ParseResult result;
      try {
        result = PARSER.parse(key, value, headers, timestamp, now);
      } catch (RuntimeException e) {
        throw new AssertionError("parse threw on " + input, e);
      }

      assertWellFormed(result, input);
      outcomes.add(outcome(result));
    }

    // The fuzz reaches deep: accepted schedules of both kinds and most rejection codes.
    assertThat(outcomes).contains("SCHEDULE once", "SCHEDULE cron", "CANCEL", "PAUSE", "RESUME");
    assertThat(outcomes.stream().filter(o -> o.startsWith("rejected ")))
        .hasSizeGreaterThanOrEqualTo(10);
  }

  @ParameterizedTest
  @CsvSource({"quartz, 0 0 0 ? * 1#", "spring, 0 0 0 * * MON#"})
  void shouldRejectWithBadCronNotThrowWhenDayOfWeekEndsInADanglingHash(
      String flavor, String expression) {
    ParseResult result =
        PARSER.parse(
            bytes("id"),
            bytes("v"),
            headers("delay-target-topic", "t", "delay-cron", expression, "delay-cron-type", flavor),
            NOW,
            NOW);

    assertRejected(result, RejectionReason.BAD_CRON);
  }

  @Test
  void shouldRejectAsBadTimeWhenATimeLiesBeforeTheEpoch() {
    // Found by RequestParserPropertiesTest ("parser: odd requests"), shrunk to a one-shot due
    // 1969-12-31T23:59:59.999Z. Accepted, it crash-looped the stream thread at its due time: a
    // Kafka record cannot carry a negative timestamp.
    for (String time :
        List.of(
            "1969-12-31T23:59:59.999Z",
            "0001-01-01T00:00:00Z",
            "-292275055-05-16T16:47:04.192Z",
            "1970-01-01T00:59:59+01:00")) {
      ParseResult result =
          PARSER.parse(
              bytes("id"),
              bytes("v"),
              headers("delay-target-topic", "t", "delay-fire-at", time),
              NOW,
              NOW);
      assertThat(result).as(time).isInstanceOf(ParseResult.Rejected.class);
      Rejection rejection = ((ParseResult.Rejected) result).rejection();
      assertThat(rejection.reason()).isEqualTo(RejectionReason.BAD_TIME);
      assertThat(rejection.message()).contains("before the Unix epoch");
    }
    for (String bound : List.of("delay-start-at", "delay-end-at")) {
      ParseResult result =
          PARSER.parse(
              bytes("id"),
              bytes("v"),
              headers(
                  "delay-target-topic",
                  "t",
                  "delay-cron",
                  "0 0 * * * ?",
                  bound,
                  "1969-07-20T20:17:40Z"),
              NOW,
              NOW);
      assertThat(((ParseResult.Rejected) result).rejection().reason())
          .as(bound)
          .isEqualTo(RejectionReason.BAD_TIME);
    }
  }

  @Test
  void shouldAcceptTheEpochItselfAsADueTimeInThePast() {
    ParseResult result =
        PARSER.parse(
            bytes("id"),
            bytes("v"),
            headers("delay-target-topic", "t", "delay-fire-at", "1970-01-01T00:00:00Z"),
            NOW,
            NOW);

    assertThat(((ParseResult.Accepted) result).request().schedule().timing())
        .isEqualTo(new Timing.Once(0));
  }

  @Test
  void shouldRejectAsTooFarWhenRecordTimestampPlusAfterOverflows() {
    ParseResult result =
        PARSER.parse(
            bytes("id"),
            bytes("v"),
            headers("delay-target-topic", "t", "delay-after", "PT2000000000000000S"),
            8_000_000_000_000_000_000L,
            NOW);

    assertRejected(result, RejectionReason.TOO_FAR);
  }

  // ------------------------------------------------------------------------------ default limits

  @Test
  void shouldAcceptPayloadWhenItIsExactlyTheDefaultLimit() {
    byte[] payload = new byte[RequestLimits.DEFAULTS.maxPayloadBytes()];

    ParseResult result = PARSER.parse(bytes("id"), payload, oneShot(), NOW, NOW);

    assertThat(result).isInstanceOf(ParseResult.Accepted.class);
    assertThat(RequestLimits.DEFAULTS.maxPayloadBytes()).isEqualTo(1024 * 1024);
  }

  @Test
  void shouldRejectWithTooLargeWhenPayloadExceedsTheDefaultLimit() {
    byte[] payload = new byte[RequestLimits.DEFAULTS.maxPayloadBytes() + 1];

    ParseResult result = PARSER.parse(bytes("id"), payload, oneShot(), NOW, NOW);

    assertRejected(result, RejectionReason.TOO_LARGE);
  }

  @Test
  void shouldAcceptSixtyFourHeadersAndRejectSixtyFiveWhenLimitsAreTheDefaults() {
    Headers sixtyFour = oneShot();
    for (int i = 0; i < 62; i++) {
      sixtyFour.add("h" + i, bytes("v"));
    }
    Headers sixtyFive = oneShot();
    for (int i = 0; i < 63; i++) {
      sixtyFive.add("h" + i, bytes("v"));
    }

    assertThat(PARSER.parse(bytes("id"), bytes("v"), sixtyFour, NOW, NOW))
        .isInstanceOf(ParseResult.Accepted.class);
    assertRejected(
        PARSER.parse(bytes("id"), bytes("v"), sixtyFive, NOW, NOW), RejectionReason.TOO_LARGE);
  }

  @Test
  void shouldAcceptIdOf1024BytesAndRejectLongerWhenLimitsAreTheDefaults() {
    assertThat(PARSER.parse(bytes("k".repeat(1024)), bytes("v"), oneShot(), NOW, NOW))
        .isInstanceOf(ParseResult.Accepted.class);
    assertRejected(
        PARSER.parse(bytes("k".repeat(1025)), bytes("v"), oneShot(), NOW, NOW),
        RejectionReason.BAD_ID);
  }

  @Test
  void shouldHaveAHorizonOfAtLeastTenYearsWhenLimitsAreTheDefaults() {
    assertThat(RequestLimits.DEFAULTS.horizonMs()).isGreaterThanOrEqualTo(3652L * 86_400_000L);
    assertThat(RequestLimits.DEFAULTS.maxIdBytes()).isEqualTo(1024);
  }

  // ------------------------------------------------------------------------------ messages

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "BAD_PARTITION | delay-target-partition | -3        | delay-after | 0",
        "BAD_TIME      | delay-fire-at          | tomorrow  | x           | x",
        "BAD_TIME      | delay-after            | soon      | x           | x",
        "BAD_ZONE      | delay-zone             | Mars/Base | delay-cron  | 0 0 12 * * ?",
        "BAD_HEADER    | delay-misfire          | later     | delay-cron  | 0 0 12 * * ?",
        "BAD_HEADER    | delay-max-fires        | many      | delay-cron  | 0 0 12 * * ?",
        "BAD_CRON      | delay-cron-type        | cron4j    | delay-cron  | 0 0 12 * * ?",
        "BAD_TIME      | delay-start-at         | later     | delay-cron  | 0 0 12 * * ?",
      })
  void shouldNameTheHeaderAndTheValueWhenRejecting(
      String code, String header, String value, String otherHeader, String otherValue) {
    ParseResult result =
        PARSER.parse(
            bytes("id"),
            bytes("v"),
            headers("delay-target-topic", "t", otherHeader, otherValue, header, value),
            NOW,
            NOW);

    assertThat(assertRejected(result, RejectionReason.valueOf(code)).message())
        .contains(header)
        .contains("'" + value + "'");
  }

  @Test
  void shouldNameTheActionWhenRejectingAnUnknownOne() {
    ParseResult result =
        PARSER.parse(bytes("id"), bytes("v"), headers("delay-action", "delete"), NOW, NOW);

    assertThat(assertRejected(result, RejectionReason.UNKNOWN_ACTION).message())
        .contains("delay-action")
        .contains("'delete'");
  }

  @Test
  void shouldNameTheRepeatedHeaderWhenRejectingADuplicate() {
    ParseResult result =
        PARSER.parse(
            bytes("id"),
            bytes("v"),
            headers("delay-target-topic", "t", "delay-after", "0", "delay-after", "1"),
            NOW,
            NOW);

    assertThat(assertRejected(result, RejectionReason.BAD_HEADER).message())
        .contains("delay-after");
  }

  @Test
  void shouldExplainTheCronErrorWhenRejectingAnExpression() {
    ParseResult result =
        PARSER.parse(
            bytes("id"),
            bytes("v"),
            headers("delay-target-topic", "t", "delay-cron", "0 0 25 * * ?"),
            NOW,
            NOW);

    assertThat(assertRejected(result, RejectionReason.BAD_CRON).message())
        .contains("'0 0 25 * * ?'")
        .contains("quartz")
        .contains("25");
  }

  // ------------------------------------------------------------------------------ construction

  @Test
  void shouldThrowWhenLimitsAreNull() {
    assertThatThrownBy(() -> new RequestParser(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("limits");
  }

  @ParameterizedTest
  @CsvSource({"0, 1, 1, 1", "1025, 1, 1, 1", "1, -1, 1, 1", "1, 1, -1, 1", "1, 1, 1, 0"})
  void shouldThrowWhenALimitIsOutOfRange(
      int maxIdBytes, int maxPayloadBytes, int maxHeaders, long horizonMs) {
    assertThatThrownBy(() -> new RequestLimits(maxIdBytes, maxPayloadBytes, maxHeaders, horizonMs))
        .isInstanceOf(IllegalArgumentException.class);
  }

  // ------------------------------------------------------------------------------ helpers

  private static String outcome(ParseResult result) {
    if (result instanceof ParseResult.Rejected rejected) {
      return "rejected " + rejected.rejection().reason();
    }
    DelayRequest request = ((ParseResult.Accepted) result).request();
    if (request.schedule() == null) {
      return request.action().name();
    }
    return "SCHEDULE " + (request.schedule().recurring() ? "cron" : "once");
  }

  private static void assertWellFormed(ParseResult result, String input) {
    assertThat(result).as(input).isNotNull();
    if (result instanceof ParseResult.Rejected rejected) {
      assertThat(rejected.rejection().message()).as(input).isNotBlank();
      assertThat(rejected.rejection().reason())
          .as(input)
          .isNotIn(RequestVectorsTest.DECIDED_BY_SERVICE.toArray());
      return;
    }
    DelayRequest request = ((ParseResult.Accepted) result).request();
    assertThat(request.id()).as(input).isNotEmpty();
    assertThat(request.schedule() != null).as(input).isEqualTo(request.action() == Action.SCHEDULE);
    if (request.schedule() != null) {
      assertThat(TopicNames.isLegal(request.schedule().target().topic())).as(input).isTrue();
      for (Header carried : request.schedule().headers()) {
        assertThat(DelayHeaders.isCarried(carried.key())).as(input).isTrue();
      }
    }
  }

  private static List<String> headerNames() {
    List<String> names = new ArrayList<>(DelayHeaders.REQUEST_HEADERS);
    names.addAll(DelayHeaders.OUTPUT_HEADERS);
    names.addAll(List.of("traceparent", "x", "Delay-Action", ""));
    names.sort(null); // a stable order, so the seed decides the run
    return names;
  }

  private static Headers randomHeaders(Random random) {
    return random.nextBoolean() ? arbitraryHeaders(random) : requestShapedHeaders(random);
  }

  /** Any names in any number, duplicates and null values included. */
  private static Headers arbitraryHeaders(Random random) {
    RecordHeaders headers = new RecordHeaders();
    int count = random.nextInt(20) == 0 ? 60 + random.nextInt(10) : random.nextInt(8);
    for (int i = 0; i < count; i++) {
      headers.add(HEADER_NAMES.get(random.nextInt(HEADER_NAMES.size())), randomValue(random));
    }
    return headers;
  }

  /** Each request header at most once, mostly with plausible values: reaches the later checks. */
  private static Headers requestShapedHeaders(Random random) {
    RecordHeaders headers = new RecordHeaders();
    for (String name : HEADER_NAMES) {
      if (random.nextInt(4) == 0 || name.equals(DelayHeaders.TARGET_TOPIC)) {
        headers.add(name, random.nextInt(10) == 0 ? randomValue(random) : plausible(random));
      }
    }
    return headers;
  }

  private static byte[] randomValue(Random random) {
    return switch (random.nextInt(4)) {
      case 0 -> null;
      case 1 -> randomBytes(random, 12);
      default -> plausible(random);
    };
  }

  private static byte[] plausible(Random random) {
    return bytes(VALUES.get(random.nextInt(VALUES.size())));
  }

  private static byte[] randomKey(Random random) {
    return switch (random.nextInt(5)) {
      case 0 -> null;
      case 1 -> new byte[0];
      case 2 -> randomBytes(random, 1100);
      default -> bytes("id-" + random.nextInt(100));
    };
  }

  private static byte[] randomBytes(Random random, int maxLength) {
    byte[] bytes = new byte[random.nextInt(maxLength + 1)];
    random.nextBytes(bytes);
    return bytes;
  }

  private static long pick(Random random, long... values) {
    return values[random.nextInt(values.length)];
  }

  private static Rejection assertRejected(ParseResult result, RejectionReason reason) {
    assertThat(result).isInstanceOf(ParseResult.Rejected.class);
    Rejection rejection = ((ParseResult.Rejected) result).rejection();
    assertThat(rejection.reason()).as(rejection.message()).isEqualTo(reason);
    return rejection;
  }

  private static Headers oneShot() {
    return headers("delay-target-topic", "t", "delay-after", "0");
  }

  private static Headers headers(String... namesAndValues) {
    RecordHeaders headers = new RecordHeaders();
    for (int i = 0; i < namesAndValues.length; i += 2) {
      headers.add(namesAndValues[i], bytes(namesAndValues[i + 1]));
    }
    return headers;
  }

  private static String describe(Headers headers) {
    List<String> parts = new ArrayList<>();
    for (Header header : headers) {
      parts.add(header.key() + "=" + hex(header.value()));
    }
    return parts.toString();
  }

  private static String hex(byte[] bytes) {
    return bytes == null ? "null" : HexFormat.of().formatHex(bytes);
  }

  private static byte[] bytes(String text) {
    return text.getBytes(UTF_8);
  }
}

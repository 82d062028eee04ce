package dev.kdelay.service.faults;

import static dev.kdelay.schemas.RejectionReason.BAD_CRON;
import static dev.kdelay.schemas.RejectionReason.BAD_HEADER;
import static dev.kdelay.schemas.RejectionReason.BAD_ID;
import static dev.kdelay.schemas.RejectionReason.BAD_PARTITION;
import static dev.kdelay.schemas.RejectionReason.BAD_TARGET;
import static dev.kdelay.schemas.RejectionReason.BAD_TIME;
import static dev.kdelay.schemas.RejectionReason.BAD_ZONE;
import static dev.kdelay.schemas.RejectionReason.CONFLICTING_TIMES;
import static dev.kdelay.schemas.RejectionReason.MISSING_TARGET;
import static dev.kdelay.schemas.RejectionReason.MISSING_TIME;
import static dev.kdelay.schemas.RejectionReason.NOT_APPLICABLE;
import static dev.kdelay.schemas.RejectionReason.TARGET_NOT_ALLOWED;
import static dev.kdelay.schemas.RejectionReason.TOO_FAR;
import static dev.kdelay.schemas.RejectionReason.TOO_LARGE;
import static dev.kdelay.schemas.RejectionReason.UNKNOWN_ACTION;
import static dev.kdelay.schemas.RejectionReason.UNKNOWN_TOPIC;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.service.faults.FuzzCase.Kind;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Random;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * Generates a seeded mix of valid and malformed requests, each with exactly one thing wrong (or
 * nothing), so that the code kdelay must answer with is known: garbage and duplicated headers,
 * wrong encodings, huge ids and payloads, times out of range, conflicting headers, unknown actions,
 * null keys, forged output headers, next to valid requests in every accepted format.
 */
final class RequestFuzzer {

  private static final int CATEGORIES = 40;

  private final Random random;
  private final String requestsTopic;
  private final String target;
  private final int targetPartitions;
  private final int maxPayloadBytes;

  /**
   * @param target an existing topic with {@code targetPartitions} partitions valid requests go to
   * @param maxPayloadBytes the service's {@code delay.max.payload.bytes}
   */
  RequestFuzzer(
      long seed, String requestsTopic, String target, int targetPartitions, int maxPayloadBytes) {
    this.random = new Random(seed);
    this.requestsTopic = requestsTopic;
    this.target = target;
    this.targetPartitions = targetPartitions;
    this.maxPayloadBytes = maxPayloadBytes;
  }

  /** The next case; its category is drawn at random. */
  FuzzCase next(int n) {
    Builder b = new Builder(n);
    int category = random.nextInt(CATEGORIES);
    return switch (category) {
      case 0 -> b.valid("fire-at epoch ms").fires();
      case 1 -> b.target().header(DelayHeaders.AFTER, Long.toString(soonMs())).fires("after ms");
      case 2 -> b.target().header(DelayHeaders.AFTER, isoSoon()).fires("after ISO-8601");
      case 3 ->
          b.target()
              .header(DelayHeaders.FIRE_AT, Instant.ofEpochMilli(dueSoon()).toString())
              .fires("fire-at ISO instant");
      case 4 ->
          b.target()
              .header(
                  DelayHeaders.FIRE_AT,
                  Instant.ofEpochMilli(dueSoon())
                      .atOffset(ZoneOffset.ofHoursMinutes(5, 30))
                      .toString())
              .fires("fire-at offset date-time");
      case 5 ->
          b.target()
              .header(
                  DelayHeaders.FIRE_AT,
                  random.nextBoolean() ? "0" : Long.toString(random.nextInt(1 << 30)))
              .fires("fire-at long past");
      case 6 -> b.key(maxLengthId(n)).valid("id of exactly 1024 bytes").fires();
      case 7 ->
          b.key(utf8("fuzz-" + n + "-" + unicode(1 + random.nextInt(40))))
              .valid("unicode id")
              .fires();
      case 8 ->
          b.value(null)
              .header(DelayHeaders.ACTION, "schedule")
              .valid("scheduled tombstone")
              .fires();
      case 9 ->
          b.value(bytes(random.nextInt(4096)))
              .carriedGarbage()
              .valid("binary payload, odd headers")
              .fires();
      case 10 ->
          b.header(DelayHeaders.IDEMPOTENCY_KEY, "forged")
              .header(DelayHeaders.ID, "forged")
              .header(DelayHeaders.ERROR, "FORGED")
              .valid("forged output headers")
              .fires();
      case 11 ->
          b.header("Delay-Target-Topic", "elsewhere").valid("header name in other case").fires();
      case 12 ->
          b.header(DelayHeaders.TARGET_PARTITION, Integer.toString(targetPartitions - 1))
              .valid("target partition")
              .firesTo(targetPartitions - 1);
      case 13 ->
          b.header(DelayHeaders.TARGET_KEY, unicode(1 + random.nextInt(20)))
              .valid("target key")
              .fires();
      case 14 -> b.value(bytes(maxPayloadBytes)).valid("payload at the limit").fires();
      case 15 ->
          b.target()
              .header(DelayHeaders.CRON, "* * * * * ?")
              .header(DelayHeaders.MAX_FIRES, "1")
              .fires("cron firing once");
      case 16 -> b.value(null).nothing("cancel of an unknown id (tombstone)");
      case 17 -> b.header(DelayHeaders.ACTION, "cancel").nothing("cancel of an unknown id");
      case 18 -> b.key(null).valid("null key").rejected(BAD_ID);
      case 19 -> b.key(new byte[0]).valid("empty key").rejected(BAD_ID);
      case 20 -> b.key(bytes(1025 + random.nextInt(20_000))).valid("huge key").rejected(BAD_ID);
      case 21 ->
          b.key(new byte[] {'f', (byte) 0xC3, 0x28, (byte) 0xFF})
              .valid("key not UTF-8")
              .rejected(BAD_ID);
      case 22 ->
          b.header(DelayHeaders.ACTION, pick("explode", "SCHEDULE", "", " schedule", "re-schedule"))
              .valid("unknown action")
              .rejected(UNKNOWN_ACTION);
      case 23 ->
          b.header(DelayHeaders.FIRE_AT, Long.toString(dueSoon()))
              .rejected(MISSING_TARGET, "no target");
      case 24 ->
          b.due()
              .header(
                  DelayHeaders.TARGET_TOPIC,
                  pick("has space", "a/b", "a".repeat(250), ".", "..", "", "ünï"))
              .rejected(BAD_TARGET, "illegal topic name");
      case 25 ->
          b.due()
              .header(DelayHeaders.TARGET_TOPIC, "fuzz-nowhere-" + n)
              .rejected(UNKNOWN_TOPIC, "unknown topic");
      case 26 ->
          b.due()
              .header(DelayHeaders.TARGET_TOPIC, pick("__consumer_offsets", "__transaction_state"))
              .rejected(TARGET_NOT_ALLOWED, "internal topic");
      case 27 ->
          b.header(
                  DelayHeaders.TARGET_PARTITION,
                  pick("-1", "x", "2147483648", "1.5", "", Integer.toString(targetPartitions + 5)))
              .valid("bad partition")
              .rejected(BAD_PARTITION);
      case 28 -> b.target().rejected(MISSING_TIME, "no time");
      case 29 ->
          b.valid("two times")
              .header(
                  random.nextBoolean() ? DelayHeaders.AFTER : DelayHeaders.CRON,
                  random.nextBoolean() ? "1000" : "* * * * * ?")
              .rejected(CONFLICTING_TIMES);
      case 30 ->
          b.header(DelayHeaders.ZONE, "Europe/Berlin")
              .valid("zone on a one-shot")
              .rejected(CONFLICTING_TIMES);
      case 31 ->
          b.target()
              .header(
                  DelayHeaders.FIRE_AT,
                  pick(
                      "tomorrow",
                      "-5",
                      "99999999999999999999",
                      "2030-13-45T00:00:00Z",
                      "1e9",
                      "",
                      "12:00"))
              .rejected(BAD_TIME, "bad fire-at");
      case 32 ->
          b.target()
              .header(DelayHeaders.AFTER, pick("-100", "PT-5S", "soon", "P1X"))
              .rejected(BAD_TIME, "bad after");
      case 33 ->
          (random.nextBoolean()
                  ? b.target().header(DelayHeaders.FIRE_AT, "999999999999999999")
                  : b.target().header(DelayHeaders.AFTER, pick("P36600D", "999999999999999999")))
              .rejected(TOO_FAR, "beyond the horizon");
      case 34 ->
          b.target()
              .header(
                  DelayHeaders.CRON,
                  random.nextBoolean()
                      ? pick("not a cron", "* * *", "61 * * * * ?")
                      : "* * * * * ?")
              .header(DelayHeaders.CRON_TYPE, random.nextBoolean() ? "quartz" : "cobol")
              .rejectedUnlessValidCron(BAD_CRON);
      case 35 ->
          b.target()
              .header(DelayHeaders.CRON, "0 0 * * * ?")
              .header(DelayHeaders.ZONE, pick("Mars/Olympus_Mons", "UTC+99", ""))
              .rejected(BAD_ZONE, "unknown zone");
      case 36 ->
          b.valid(
                  pick(
                      "duplicated header",
                      "request header not UTF-8",
                      "request header without value"))
              .badHeader()
              .rejected(BAD_HEADER);
      case 37 ->
          b.value(bytes(maxPayloadBytes + 1 + random.nextInt(65_536)))
              .valid("payload over the limit")
              .rejected(TOO_LARGE);
      case 38 ->
          b.valid("too many headers").manyHeaders(65 + random.nextInt(40)).rejected(TOO_LARGE);
      default ->
          b.header(DelayHeaders.ACTION, random.nextBoolean() ? "pause" : "resume")
              .rejected(NOT_APPLICABLE, "pause or resume of an unknown id");
    };
  }

  private long soonMs() {
    return 500 + random.nextInt(2_500);
  }

  private long dueSoon() {
    return System.currentTimeMillis() + soonMs();
  }

  private String isoSoon() {
    long ms = soonMs();
    return "PT" + ms / 1000 + "." + String.format("%03d", ms % 1000) + "S";
  }

  private String pick(String... choices) {
    return choices[random.nextInt(choices.length)];
  }

  private byte[] bytes(int length) {
    byte[] bytes = new byte[length];
    random.nextBytes(bytes);
    return bytes;
  }

  private String unicode(int length) {
    StringBuilder text = new StringBuilder();
    List<Integer> alphabet = List.of(0x61, 0xE9, 0x416, 0x4E2D, 0x1F600, 0x10348, 0x5F, 0x2D);
    for (int i = 0; i < length; i++) {
      text.appendCodePoint(alphabet.get(random.nextInt(alphabet.size())));
    }
    return text.toString();
  }

  /** A unique id of exactly 1024 UTF-8 bytes, of one- to four-byte characters. */
  private byte[] maxLengthId(int n) {
    StringBuilder id = new StringBuilder("fuzz-" + n + "-");
    while (utf8(id.toString()).length < 1024 - 4) {
      id.appendCodePoint(List.of(0x61, 0xE9, 0x4E2D, 0x1F600).get(random.nextInt(4)));
    }
    while (utf8(id.toString()).length < 1024) {
      id.append('x');
    }
    return utf8(id.toString());
  }

  private static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  /** Builds one request: a unique id, a small text payload and the case header by default. */
  private final class Builder {
    private final int n;
    private byte[] key;
    private byte[] value;
    private final RecordHeaders headers = new RecordHeaders();
    private String category;

    Builder(int n) {
      this.n = n;
      this.key = utf8("fuzz-" + n);
      this.value = utf8("payload of case " + n);
      headers.add(FuzzCase.CASE_HEADER, utf8(Integer.toString(n)));
    }

    Builder key(byte[] key) {
      this.key = key;
      return this;
    }

    Builder value(byte[] value) {
      this.value = value;
      return this;
    }

    Builder header(String name, String value) {
      headers.add(name, utf8(value));
      return this;
    }

    Builder target() {
      return header(DelayHeaders.TARGET_TOPIC, target);
    }

    Builder due() {
      return header(DelayHeaders.FIRE_AT, Long.toString(dueSoon()));
    }

    /** Target and due time: valid unless something else is added. */
    Builder valid(String category) {
      this.category = category;
      return target().due();
    }

    Builder carriedGarbage() {
      for (int i = random.nextInt(6); i > 0; i--) {
        headers.add(
            "x-" + unicode(1 + random.nextInt(8)),
            random.nextBoolean() ? bytes(random.nextInt(64)) : null);
      }
      return this;
    }

    Builder manyHeaders(int count) {
      for (int i = 0; i < count; i++) {
        headers.add("x-filler-" + i, bytes(8));
      }
      return this;
    }

    /** One of: a duplicated target header, a request header not UTF-8, one without a value. */
    Builder badHeader() {
      switch (category) {
        case "duplicated header" -> target();
        case "request header not UTF-8" ->
            headers.add(DelayHeaders.TARGET_KEY, new byte[] {(byte) 0xFF, (byte) 0xFE});
        default -> headers.add(DelayHeaders.TARGET_KEY, null);
      }
      return this;
    }

    FuzzCase fires() {
      return build(Kind.FIRES, null, -1);
    }

    FuzzCase fires(String category) {
      this.category = category;
      return fires();
    }

    FuzzCase firesTo(int partition) {
      return build(Kind.FIRES, null, partition);
    }

    FuzzCase nothing(String category) {
      this.category = category;
      return build(Kind.NOTHING, null, -1);
    }

    FuzzCase rejected(RejectionReason code) {
      return build(Kind.DEAD_LETTER, code, -1);
    }

    FuzzCase rejected(RejectionReason code, String category) {
      this.category = category;
      return rejected(code);
    }

    /** A quartz "* * * * * ?" with no max-fires would fire every second: give it one fire. */
    FuzzCase rejectedUnlessValidCron(RejectionReason code) {
      String cron =
          new String(headers.lastHeader(DelayHeaders.CRON).value(), StandardCharsets.UTF_8);
      String type =
          new String(headers.lastHeader(DelayHeaders.CRON_TYPE).value(), StandardCharsets.UTF_8);
      if (cron.equals("* * * * * ?") && type.equals("quartz")) {
        header(DelayHeaders.MAX_FIRES, "1");
        return fires("valid quartz cron, once");
      }
      return rejected(code, "bad cron or cron type");
    }

    private FuzzCase build(Kind kind, RejectionReason code, int partition) {
      return new FuzzCase(
          n,
          category,
          new ProducerRecord<>(requestsTopic, null, key, value, headers),
          kind,
          code,
          partition);
    }
  }
}

package dev.kdelay.schemas.generators;

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
import static dev.kdelay.schemas.RejectionReason.TOO_FAR;
import static dev.kdelay.schemas.RejectionReason.TOO_LARGE;
import static dev.kdelay.schemas.RejectionReason.UNKNOWN_ACTION;

import dev.kdelay.schemas.Action;
import dev.kdelay.schemas.CronFlavor;
import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.Misfire;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.schemas.generators.GeneratedRequest.Expectation;
import dev.kdelay.schemas.generators.GeneratedRequest.Intent;
import dev.kdelay.schemas.generators.GeneratedRequest.Timing;
import dev.kdelay.schemas.generators.HeaderTexts.CronText;
import dev.kdelay.schemas.generators.RequestSpec.Time;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.time.DateTimeException;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.kafka.common.header.Header;

/**
 * What the contract (the README's header table and "Rejected requests") makes of a request, written
 * from the contract and not from the parser: every problem a request has is found, and a request
 * with several may be dead-lettered for any of them. Numbers and instants are judged by what their
 * text denotes ({@link Denoted}), so the oracle never parses a time itself.
 *
 * <p>Only what the request alone tells: a target that does not exist, or an action that does not
 * apply to its id's state, is the topology's model to judge.
 */
public final class ParseOracle {

  private static final Pattern LEGAL_TOPIC = Pattern.compile("[a-zA-Z0-9._-]{1,249}");
  private static final List<String> CRON_ONLY =
      List.of(
          DelayHeaders.CRON_TYPE,
          DelayHeaders.ZONE,
          DelayHeaders.START_AT,
          DelayHeaders.END_AT,
          DelayHeaders.MAX_FIRES,
          DelayHeaders.MISFIRE);

  /** The largest decimal the contract promises to read (more digits may be refused). */
  private static final BigInteger EIGHTEEN_DIGITS = new BigInteger("999999999999999999");

  private ParseOracle() {}

  /**
   * The limits a request is judged by.
   *
   * @param maxIdBytes {@code delay.max.id.bytes}
   * @param maxPayloadBytes {@code delay.max.payload.bytes}
   * @param maxHeaders {@code delay.max.headers}
   * @param horizonMs {@code delay.horizon.ms}
   * @param maxClockSkewMs {@code delay.max.clock.skew.ms}
   */
  public record Limits(
      int maxIdBytes, int maxPayloadBytes, int maxHeaders, long horizonMs, long maxClockSkewMs) {}

  static Expectation expect(
      GeneratedRequest request, RequestSpec.Rendered rendered, Limits limits) {
    Judgement judged = new Judgement(request, rendered, limits);
    return judged.run();
  }

  /** The judgement of one request. */
  private static final class Judgement {
    private final GeneratedRequest request;
    private final RequestSpec.Rendered rendered;
    private final Limits limits;
    private final long nowMs;
    private final Set<RejectionReason> codes = EnumSet.noneOf(RejectionReason.class);
    private final Set<RejectionReason> maybe = EnumSet.noneOf(RejectionReason.class);
    private final Map<String, String> texts = new HashMap<>();

    Judgement(GeneratedRequest request, RequestSpec.Rendered rendered, Limits limits) {
      this.request = request;
      this.rendered = rendered;
      this.limits = limits;
      this.nowMs = request.sentAtMs();
    }

    Expectation run() {
      String id = id();
      structure();
      if (!codes.isEmpty()) {
        return Expectation.rejected(codes);
      }
      Action action = action();
      if (action == null) {
        return Expectation.rejected(codes);
      }
      long stamped = stamped();
      Intent intent =
          switch (action) {
            case SCHEDULE -> schedule(id, stamped);
            case RESCHEDULE -> reschedule(id, stamped);
            default -> new Intent(action, id, stamped, null, null, -1, null, null, List.of());
          };
      if (!codes.isEmpty() || intent == null) {
        codes.addAll(maybe);
        return Expectation.rejected(codes);
      }
      return Expectation.accepted(intent, maybe);
    }

    /** The id, or null after noting BAD_ID. */
    private String id() {
      byte[] key = request.key();
      if (key == null || key.length == 0 || key.length > limits.maxIdBytes()) {
        codes.add(BAD_ID);
        return null;
      }
      Optional<String> text = utf8(key);
      if (text.isEmpty()) {
        codes.add(BAD_ID);
        return null;
      }
      return text.get();
    }

    /** Too many headers, and request headers given twice, without a value, or not UTF-8. */
    private void structure() {
      if (request.headers().size() > limits.maxHeaders()) {
        codes.add(TOO_LARGE);
      }
      for (Header header : request.headers()) {
        if (!DelayHeaders.REQUEST_HEADERS.contains(header.key())) {
          continue;
        }
        Optional<String> text = header.value() == null ? Optional.empty() : utf8(header.value());
        if (text.isEmpty() || texts.containsKey(header.key())) {
          codes.add(BAD_HEADER);
        } else {
          texts.put(header.key(), text.get());
        }
      }
    }

    private Action action() {
      String text = texts.get(DelayHeaders.ACTION);
      if (text == null) {
        return request.value() == null ? Action.CANCEL : Action.SCHEDULE;
      }
      for (Action action : Action.values()) {
        if (action.wireName().equals(text)) {
          return action;
        }
      }
      codes.add(UNKNOWN_ACTION);
      return null;
    }

    /** The request's timestamp, unless it has none or it lies too far ahead: then now. */
    private long stamped() {
      long timestamp = request.timestamp();
      return timestamp < 0 || timestamp - nowMs > limits.maxClockSkewMs() ? nowMs : timestamp;
    }

    private Intent schedule(String id, long stamped) {
      if (request.value() != null && request.value().length > limits.maxPayloadBytes()) {
        codes.add(TOO_LARGE);
      }
      String topic = texts.get(DelayHeaders.TARGET_TOPIC);
      if (topic == null) {
        codes.add(MISSING_TARGET);
      } else if (!LEGAL_TOPIC.matcher(topic).matches() || topic.equals(".") || topic.equals("..")) {
        codes.add(BAD_TARGET);
      }
      int partition = partition();
      Timing timing = timing(stamped);
      if (!codes.isEmpty() || timing == null) {
        return null;
      }
      String key = texts.get(DelayHeaders.TARGET_KEY);
      return new Intent(
          Action.SCHEDULE,
          id,
          stamped,
          topic,
          key == null ? null : HeaderTexts.utf8(key),
          partition,
          timing,
          request.value(),
          carried());
    }

    private Intent reschedule(String id, long stamped) {
      for (String name :
          List.of(
              DelayHeaders.TARGET_TOPIC, DelayHeaders.TARGET_KEY, DelayHeaders.TARGET_PARTITION)) {
        if (texts.containsKey(name)) {
          codes.add(BAD_HEADER);
        }
      }
      Timing timing = timing(stamped);
      if (!codes.isEmpty() || timing == null) {
        return null;
      }
      return new Intent(Action.RESCHEDULE, id, stamped, null, null, -1, timing, null, List.of());
    }

    private int partition() {
      if (!texts.containsKey(DelayHeaders.TARGET_PARTITION)) {
        return -1;
      }
      Denoted denoted = request.spec().partition();
      if (denoted == null
          || !denoted.text().equals(texts.get(DelayHeaders.TARGET_PARTITION))
          || denoted.denotes().isEmpty()
          || denoted.denotes().get().signum() < 0
          || denoted.denotes().get().compareTo(BigInteger.valueOf(Integer.MAX_VALUE)) > 0) {
        codes.add(BAD_PARTITION);
        return -1;
      }
      return denoted.denotes().get().intValueExact();
    }

    private Timing timing(long stamped) {
      boolean fireAt = texts.containsKey(DelayHeaders.FIRE_AT);
      boolean after = texts.containsKey(DelayHeaders.AFTER);
      boolean cron = texts.containsKey(DelayHeaders.CRON);
      int given = (fireAt ? 1 : 0) + (after ? 1 : 0) + (cron ? 1 : 0);
      if (given == 0) {
        codes.add(MISSING_TIME);
        return null;
      }
      if (given > 1) {
        codes.add(CONFLICTING_TIMES);
        return null;
      }
      if (cron) {
        return cron();
      }
      for (String option : CRON_ONLY) {
        if (texts.containsKey(option)) {
          codes.add(CONFLICTING_TIMES);
        }
      }
      long due;
      if (fireAt) {
        Long instant = instant(rendered.fireAt);
        if (instant == null) {
          return null;
        }
        due = instant;
      } else {
        Denoted span = request.spec().time() instanceof Time.After a ? a.span().denoted() : null;
        if (span == null || span.denotes().isEmpty()) {
          codes.add(BAD_TIME);
          return null;
        }
        if (span.denotes().get().signum() < 0) {
          codes.add(BAD_TIME);
          return null;
        }
        BigInteger sum = BigInteger.valueOf(stamped).add(span.denotes().get());
        if (sum.bitLength() >= Long.SIZE) {
          codes.add(TOO_FAR);
          maybe.add(BAD_TIME); // a duration too long to hold may count as unreadable
          return null;
        }
        if (span.text().length() > 18 && span.text().chars().allMatch(Character::isDigit)) {
          maybe.add(BAD_TIME); // more digits than promised
        }
        due = sum.longValueExact();
      }
      if (due > nowMs && due - nowMs > limits.horizonMs()) {
        codes.add(TOO_FAR);
        return null;
      }
      return new Timing.Once(due);
    }

    /**
     * An instant header's value: null after noting its code. Before the epoch is {@code BAD_TIME}:
     * Kafka cannot carry a negative timestamp.
     */
    private Long instant(Denoted denoted) {
      if (denoted == null || denoted.denotes().isEmpty()) {
        codes.add(BAD_TIME);
        return null;
      }
      BigInteger ms = denoted.denotes().get();
      if (ms.signum() < 0) {
        codes.add(BAD_TIME);
        return null;
      }
      if (!denoted.fitsLong()) {
        codes.add(TOO_FAR);
        maybe.add(BAD_TIME);
        return null;
      }
      if (ms.compareTo(EIGHTEEN_DIGITS) > 0 || denoted.text().length() > 18) {
        maybe.add(BAD_TIME); // more digits than promised
      }
      return ms.longValueExact();
    }

    private Timing cron() {
      CronText text =
          request.spec().time() instanceof Time.Cron c
              ? c.text()
              : new CronText(texts.get(DelayHeaders.CRON), CronFlavor.QUARTZ, 0, null);
      CronFlavor flavor = CronFlavor.QUARTZ;
      String type = texts.get(DelayHeaders.CRON_TYPE);
      if (type != null) {
        Optional<CronFlavor> named = CronFlavor.fromWireName(type);
        if (named.isEmpty()) {
          codes.add(BAD_CRON);
          return null;
        }
        flavor = named.get();
      }
      Boolean valid = flavor == text.flavor() ? text.valid() : null;
      if (Boolean.FALSE.equals(valid)) {
        codes.add(BAD_CRON);
      } else if (valid == null) {
        maybe.add(BAD_CRON);
      }
      long start = bound(DelayHeaders.START_AT, rendered.startAt, Long.MIN_VALUE);
      long end = bound(DelayHeaders.END_AT, rendered.endAt, Long.MAX_VALUE);
      if (start != Long.MIN_VALUE && end != Long.MAX_VALUE && end < start) {
        codes.add(BAD_TIME);
      }
      if (start != Long.MIN_VALUE && start > nowMs && start - nowMs > limits.horizonMs()) {
        codes.add(TOO_FAR);
      }
      ZoneId zone = zone(texts.getOrDefault(DelayHeaders.ZONE, "UTC"));
      long maxFires = maxFires();
      Misfire misfire = misfire();
      if (!codes.isEmpty() || zone == null || misfire == null || maxFires < 0) {
        return null;
      }
      long period = flavor == text.flavor() && periodic(text, zone) ? text.periodMs() : 0;
      return new Timing.Cron(
          text.expression(), flavor, zone, start, end, maxFires, misfire, period);
    }

    /** Minute periods stay periodic in absolute time only where the zone is UTC. */
    private static boolean periodic(CronText text, ZoneId zone) {
      if (text.periodMs() == 0) {
        return false;
      }
      return text.periodMs() < 60_000
          || (zone.getRules().isFixedOffset()
              && zone.getRules().getOffset(java.time.Instant.EPOCH).equals(ZoneOffset.UTC));
    }

    private long bound(String header, Denoted denoted, long absent) {
      if (!texts.containsKey(header)) {
        return absent;
      }
      Long instant = instant(denoted);
      return instant == null ? absent : instant;
    }

    private ZoneId zone(String text) {
      try {
        return ZoneId.of(text);
      } catch (DateTimeException e) {
        codes.add(BAD_ZONE);
        return null;
      }
    }

    /** The fire limit, 0 for none, or -1 after noting BAD_HEADER. */
    private long maxFires() {
      String text = texts.get(DelayHeaders.MAX_FIRES);
      if (text == null) {
        return 0;
      }
      Denoted denoted = request.spec().cron().maxFires();
      if (denoted == null
          || !denoted.text().equals(text)
          || denoted.denotes().isEmpty()
          || denoted.denotes().get().signum() <= 0
          || !denoted.fitsLong()) {
        codes.add(BAD_HEADER);
        return -1;
      }
      if (denoted.denotes().get().compareTo(EIGHTEEN_DIGITS) > 0 || text.length() > 18) {
        maybe.add(BAD_HEADER);
      }
      return denoted.value();
    }

    private Misfire misfire() {
      String text = texts.get(DelayHeaders.MISFIRE);
      if (text == null) {
        return Misfire.FIRE_ONCE;
      }
      Optional<Misfire> named = Misfire.fromWireName(text);
      if (named.isEmpty()) {
        codes.add(BAD_HEADER);
        return null;
      }
      return named.get();
    }

    /** The headers carried to a fired record: all but kdelay's own, in order. */
    private List<Header> carried() {
      List<Header> carried = new ArrayList<>();
      for (Header header : request.headers()) {
        if (DelayHeaders.isCarried(header.key())) {
          carried.add(header);
        }
      }
      return carried;
    }
  }

  static Optional<String> utf8(byte[] bytes) {
    try {
      return Optional.of(
          StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes)).toString());
    } catch (CharacterCodingException e) {
      return Optional.empty();
    }
  }
}

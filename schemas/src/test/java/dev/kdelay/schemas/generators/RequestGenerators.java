package dev.kdelay.schemas.generators;

import dev.kdelay.schemas.CronFlavor;
import dev.kdelay.schemas.generators.HeaderTexts.CronText;
import dev.kdelay.schemas.generators.HeaderTexts.Named;
import dev.kdelay.schemas.generators.RequestSpec.CronOptions;
import dev.kdelay.schemas.generators.RequestSpec.Fault;
import dev.kdelay.schemas.generators.RequestSpec.Time;
import java.util.List;

/**
 * Requests for property-based tests, built from a generator per header ({@link TimeTexts}, {@link
 * HeaderTexts}):
 *
 * <ul>
 *   <li>{@link #wellFormed}: every action on a small set of ids, with valid values in every written
 *       form, due soon or recurring quickly: the kind a model follows step by step;
 *   <li>{@link #odd}: requests whose headers take odd but plausible values, boundary values and
 *       garbage, with at most one fault put in on purpose, so that the code kdelay must answer with
 *       is known ({@link ParseOracle});
 *   <li>{@link #chaos}: header values drawn from every header's generator in any combination, with
 *       any fault, to which kdelay must give exactly one answer of some kind.
 * </ul>
 *
 * <p>A request is drawn as a {@link RequestSpec} and written as a record when it is sent ({@link
 * RequestSpec#render}), since a test's clock moves between drawing a request and sending it.
 */
public final class RequestGenerators {

  private final List<String> ids;
  private final List<String> targets;
  private final List<String> oddTargets;
  private final int maxIdBytes;
  private final int maxPayloadBytes;

  /**
   * @param ids the ids well-formed requests use
   * @param targets existing target topics
   * @param oddTargets topics a request should not get to target: absent, illegal, internal
   * @param maxIdBytes {@code delay.max.id.bytes}
   * @param maxPayloadBytes {@code delay.max.payload.bytes}
   */
  public RequestGenerators(
      List<String> ids,
      List<String> targets,
      List<String> oddTargets,
      int maxIdBytes,
      int maxPayloadBytes) {
    this.ids = List.copyOf(ids);
    this.targets = List.copyOf(targets);
    this.oddTargets = List.copyOf(oddTargets);
    this.maxIdBytes = maxIdBytes;
    this.maxPayloadBytes = maxPayloadBytes;
  }

  /** A well-formed request of any action for one of the ids, due soon or recurring quickly. */
  public RequestSpec wellFormed(Choices c) {
    byte[] id = HeaderTexts.utf8(c.pick(ids));
    return switch (c.weighted(5, 4, 1)) {
      case 0 -> {
        TimeChoice time = soonTime(c);
        byte[] payload = payload(c);
        yield new RequestSpec(
            id,
            payload == null ? "schedule" : null,
            payload,
            c.pick(targets),
            null,
            null,
            time.time(),
            time.options(),
            HeaderTexts.carried(c),
            null,
            stamp(c));
      }
      case 1 -> {
        // A bare tombstone is a cancel, the simplest of them.
        String action = c.pick(null, "cancel", "pause", "resume", "trigger");
        yield new RequestSpec(
            id,
            action,
            action == null ? null : new byte[0],
            null,
            null,
            null,
            new Time.None(),
            CronOptions.NONE,
            List.of(),
            null,
            stamp(c));
      }
      default -> {
        TimeChoice time = soonTime(c);
        yield new RequestSpec(
            id,
            "reschedule",
            null,
            null,
            null,
            null,
            time.time(),
            time.options(),
            List.of(),
            null,
            stamp(c));
      }
    };
  }

  /** An odd but plausible request, with at most one fault. */
  public RequestSpec odd(Choices c) {
    byte[] id =
        switch (c.weighted(4, 1, 1)) {
          case 0 -> HeaderTexts.utf8(c.pick(ids));
          case 1 -> HeaderTexts.oddId(c, maxIdBytes);
          default -> null;
        };
    String action =
        switch (c.weighted(6, 3, 1)) {
          case 0 -> null;
          case 1 -> c.pick("schedule", "cancel", "pause", "resume", "trigger");
          default -> c.pick("reschedule", "Schedule", "SCHEDULE", "", "delete", "fire");
        };
    boolean scheduling = action == null || action.equals("schedule");
    boolean rescheduling = "reschedule".equals(action);
    byte[] payload = payload(c);
    String target =
        switch (c.weighted(6, 2, 1)) {
          case 0 -> c.pick(targets);
          case 1 -> c.pick(oddTargets);
          default -> null;
        };
    String targetKey = c.chance(20) ? c.text(20) : null;
    Denoted partition = c.chance(20) ? HeaderTexts.partition(c) : null;
    TimeChoice time = oddTime(c);
    List<org.apache.kafka.common.header.Header> carried = HeaderTexts.carried(c);
    Fault fault = c.chance(8) ? c.pick(Fault.values()) : null;
    long stamp = stamp(c);
    // The fault that fits the request: a target header on a reschedule, a cron option on a
    // one-shot, a payload on a schedule. Others apply to any request.
    if (fault == Fault.TARGET_ON_RESCHEDULE && !rescheduling) {
      fault = null;
    }
    if (fault == Fault.CRON_OPTION_ON_ONE_SHOT
        && (!(scheduling || rescheduling) || time.time() instanceof Time.Cron)) {
      fault = null;
    }
    if (fault == Fault.PAYLOAD_TOO_LARGE && !scheduling) {
      fault = null;
    }
    boolean timed = scheduling || rescheduling;
    return new RequestSpec(
        id,
        action,
        scheduling ? payload : null,
        scheduling ? target : null,
        scheduling ? targetKey : null,
        scheduling ? partition : null,
        timed ? time.time() : new Time.None(),
        timed ? time.options() : CronOptions.NONE,
        carried,
        fault,
        stamp);
  }

  /** Any combination of header values, valid or not, with any fault. */
  public RequestSpec chaos(Choices c) {
    byte[] id = c.chance(80) ? HeaderTexts.oddId(c, maxIdBytes) : null;
    String action =
        c.chance(60)
            ? c.pick("schedule", "cancel", "pause", "resume", "trigger", "reschedule", "")
            : null;
    byte[] payload = payload(c);
    String target = c.chance(70) ? c.pick(c.chance(50) ? targets : oddTargets) : null;
    String targetKey = c.chance(30) ? c.text(10) : null;
    Denoted partition = c.chance(30) ? HeaderTexts.partition(c) : null;
    Time time =
        switch (c.below(4)) {
          case 0 -> new Time.None();
          case 1 -> new Time.FireAt(TimeTexts.moment(c));
          case 2 -> new Time.After(TimeTexts.span(c));
          default -> new Time.Cron(HeaderTexts.cron(c));
        };
    CronOptions options =
        new CronOptions(
            c.chance(60) ? HeaderTexts.cronType(c) : null,
            c.chance(60) ? HeaderTexts.zone(c) : null,
            c.chance(60) ? TimeTexts.moment(c) : null,
            c.chance(60) ? TimeTexts.moment(c) : null,
            c.chance(60) ? HeaderTexts.maxFires(c) : null,
            c.chance(60) ? HeaderTexts.misfire(c) : null);
    return new RequestSpec(
        id,
        action,
        payload,
        target,
        targetKey,
        partition,
        time,
        options,
        HeaderTexts.carried(c),
        c.chance(40) ? c.pick(Fault.values()) : null,
        stamp(c));
  }

  /** A time header and its options, for a request drawn by {@link #odd}. */
  private static TimeChoice oddTime(Choices c) {
    return switch (c.weighted(4, 2, 3, 1)) {
      case 0 -> new TimeChoice(new Time.FireAt(TimeTexts.moment(c)), CronOptions.NONE);
      case 1 -> new TimeChoice(new Time.After(TimeTexts.span(c)), CronOptions.NONE);
      case 2 -> {
        CronText text = HeaderTexts.cron(c);
        yield new TimeChoice(
            new Time.Cron(text),
            new CronOptions(
                cronType(c, text.flavor()),
                c.chance(40) ? HeaderTexts.zone(c) : null,
                c.chance(30) ? TimeTexts.moment(c) : null,
                c.chance(30) ? TimeTexts.moment(c) : null,
                c.chance(30) ? HeaderTexts.maxFires(c) : null,
                c.chance(30) ? HeaderTexts.misfire(c) : null));
      }
      default -> new TimeChoice(new Time.None(), CronOptions.NONE);
    };
  }

  /**
   * A time meant to fire within a test: a due time near now, a short delay, or a cron expression
   * firing every few seconds, with options now and then.
   */
  private static TimeChoice soonTime(Choices c) {
    return switch (c.weighted(4, 2, 3)) {
      case 0 -> new TimeChoice(new Time.FireAt(TimeTexts.soon(c)), CronOptions.NONE);
      case 1 -> {
        long ms = c.between(0, 8_000);
        yield new TimeChoice(
            new Time.After(new TimeTexts.Span(Long.toString(ms), java.math.BigInteger.valueOf(ms))),
            CronOptions.NONE);
      }
      default -> {
        CronText text = HeaderTexts.periodic(c);
        if (text.periodMs() > 10_000) {
          text = new CronText("*/2 * * * * ?", CronFlavor.QUARTZ, 2_000, true);
        }
        yield new TimeChoice(
            new Time.Cron(text),
            new CronOptions(
                text.flavor() == CronFlavor.QUARTZ ? null : cronTypeOf(text.flavor()),
                c.chance(30) ? c.pick("Europe/Berlin", "Asia/Kathmandu", "UTC") : null,
                c.chance(20) ? TimeTexts.soon(c) : null,
                c.chance(20) ? TimeTexts.soon(c) : null,
                c.chance(30) ? maxFires(c.intBetween(1, 4)) : null,
                c.chance(50) ? HeaderTexts.validMisfire(c) : null));
      }
    };
  }

  private static Denoted maxFires(int n) {
    return Denoted.of(Integer.toString(n), n);
  }

  /** The cron-type header for a flavour: left out for quartz now and then, odd once in ten. */
  private static Named cronType(Choices c, CronFlavor flavor) {
    return switch (c.weighted(6, 3, 1)) {
      case 0 -> flavor == CronFlavor.QUARTZ ? null : cronTypeOf(flavor);
      case 1 -> cronTypeOf(flavor);
      default -> HeaderTexts.cronType(c);
    };
  }

  private static Named cronTypeOf(CronFlavor flavor) {
    return new Named(flavor.wireName(), flavor.wireName());
  }

  /** Payloads: small now and then, null, empty, and at the size limit. */
  private byte[] payload(Choices c) {
    return switch (c.weighted(6, 1, 1, 1)) {
      case 0 -> c.bytes(32);
      case 1 -> null;
      case 2 -> new byte[0];
      default -> new byte[maxPayloadBytes];
    };
  }

  /**
   * Record timestamps, from the moment of sending: now, a little or much earlier (a late request),
   * ahead (a fast clock), or none at all.
   */
  private static long stamp(Choices c) {
    return switch (c.weighted(6, 2, 1, 1, 1)) {
      case 0 -> 0;
      case 1 -> c.between(-5_000, 0);
      case 2 -> c.between(-86_400_000L * 30, 0);
      case 3 -> c.between(1, 7_200_000);
      default -> RequestSpec.NO_TIMESTAMP;
    };
  }

  /** A time header with its cron options. */
  record TimeChoice(Time time, CronOptions options) {}
}

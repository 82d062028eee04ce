package dev.kdelay.schemas.generators;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.generators.HeaderTexts.CronText;
import dev.kdelay.schemas.generators.HeaderTexts.Named;
import dev.kdelay.schemas.generators.TimeTexts.Moment;
import dev.kdelay.schemas.generators.TimeTexts.Span;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;

/**
 * A request as a generator drew it: each header as what it denotes and how it is written, and at
 * most one {@link Fault} put in on purpose. {@link #render} writes it as a record for a moment in
 * time, and the {@link ParseOracle} says what the contract makes of it.
 *
 * @param id the record key, or null
 * @param action the {@code delay-action} text, or null for none
 * @param payload the record value, or null
 * @param target the {@code delay-target-topic} text, or null for none
 * @param targetKey the {@code delay-target-key} text, or null for none
 * @param partition the {@code delay-target-partition} text, or null for none
 * @param time which time header the request carries, and its value
 * @param cron the cron options, when {@code time} is a {@link Time.Cron}
 * @param carried headers that are not kdelay's, in order
 * @param fault what was put in wrong on purpose, or null
 * @param timestampOffsetMs the record timestamp, from the moment it is sent; {@link #NO_TIMESTAMP}
 *     for a record without one (-1, as old clients write)
 */
public record RequestSpec(
    byte[] id,
    String action,
    byte[] payload,
    String target,
    String targetKey,
    Denoted partition,
    Time time,
    CronOptions cron,
    List<Header> carried,
    Fault fault,
    long timestampOffsetMs) {

  /** {@link #timestampOffsetMs} of a record stamped -1. */
  public static final long NO_TIMESTAMP = Long.MIN_VALUE;

  /** The time header a request carries. */
  public sealed interface Time {
    /** None of them. */
    record None() implements Time {}

    /** {@code delay-fire-at}. */
    record FireAt(Moment moment) implements Time {}

    /** {@code delay-after}. */
    record After(Span span) implements Time {}

    /** {@code delay-cron}, with {@link CronOptions}. */
    record Cron(CronText text) implements Time {}
  }

  /**
   * The options of a cron schedule; each null when its header is absent.
   *
   * @param type {@code delay-cron-type}: the flavour of {@link Time.Cron}'s text, or odd
   * @param zone {@code delay-zone}
   * @param startAt {@code delay-start-at}
   * @param endAt {@code delay-end-at}
   * @param maxFires {@code delay-max-fires}
   * @param misfire {@code delay-misfire}
   */
  public record CronOptions(
      Named type, String zone, Moment startAt, Moment endAt, Denoted maxFires, Named misfire) {
    /** No options. */
    public static final CronOptions NONE = new CronOptions(null, null, null, null, null, null);
  }

  /** One thing wrong put in on purpose; the rest of the request is well-formed. */
  public enum Fault {
    /** A request header given twice. */
    DUPLICATE_HEADER,
    /** A request header with a null value. */
    NULL_HEADER_VALUE,
    /** A request header whose value is not UTF-8. */
    INVALID_UTF8_HEADER,
    /** More headers than {@code delay.max.headers}. */
    TOO_MANY_HEADERS,
    /** A second time header (two, when the request has none). */
    SECOND_TIME_HEADER,
    /** A cron option on a one-shot. */
    CRON_OPTION_ON_ONE_SHOT,
    /** A target header on a reschedule. */
    TARGET_ON_RESCHEDULE,
    /** A payload larger than {@code delay.max.payload.bytes}. */
    PAYLOAD_TOO_LARGE
  }

  /** The same request for another id. */
  public RequestSpec withId(byte[] newId) {
    return new RequestSpec(
        newId,
        action,
        payload,
        target,
        targetKey,
        partition,
        time,
        cron,
        carried,
        fault,
        timestampOffsetMs);
  }

  /**
   * The same request for an id of its own, so that what one case leaves behind never meets another:
   * a textual id gets {@code prefix-} in front, or, when that would take it past {@code
   * maxIdBytes}, in place of its first characters (its length in bytes kept within the limit, so an
   * id at the limit stays at it). An id that is no text, empty, or over the limit already is
   * refused whatever it says, and stays as it is.
   */
  public RequestSpec withIdPrefix(String prefix, int maxIdBytes) {
    if (id == null || id.length == 0 || id.length > maxIdBytes) {
      return this;
    }
    String text;
    try {
      text = StandardCharsets.UTF_8.newDecoder().decode(java.nio.ByteBuffer.wrap(id)).toString();
    } catch (java.nio.charset.CharacterCodingException e) {
      return this;
    }
    String head = prefix + "-";
    String kept = text;
    int drop = 0;
    while ((head + kept.substring(drop)).getBytes(StandardCharsets.UTF_8).length > maxIdBytes
        && drop < kept.length()) {
      drop++;
    }
    return withId((head + kept.substring(drop)).getBytes(StandardCharsets.UTF_8));
  }

  /** The request as a record sent at {@code nowMs}, with what must become of it. */
  public GeneratedRequest render(long nowMs, ParseOracle.Limits limits) {
    List<Header> headers = new ArrayList<>();
    Rendered rendered = new Rendered();
    if (action != null) {
      headers.add(header(DelayHeaders.ACTION, action));
    }
    if (target != null) {
      headers.add(header(DelayHeaders.TARGET_TOPIC, target));
    }
    if (targetKey != null) {
      headers.add(header(DelayHeaders.TARGET_KEY, targetKey));
    }
    if (partition != null) {
      headers.add(header(DelayHeaders.TARGET_PARTITION, partition.text()));
    }
    if (time instanceof Time.FireAt at) {
      rendered.fireAt = at.moment().render(nowMs);
      headers.add(header(DelayHeaders.FIRE_AT, rendered.fireAt.text()));
    } else if (time instanceof Time.After after) {
      headers.add(header(DelayHeaders.AFTER, after.span().text()));
    } else if (time instanceof Time.Cron cronTime) {
      headers.add(header(DelayHeaders.CRON, cronTime.text().expression()));
    }
    if (cron.type() != null) {
      headers.add(header(DelayHeaders.CRON_TYPE, cron.type().text()));
    }
    if (cron.zone() != null) {
      headers.add(header(DelayHeaders.ZONE, cron.zone()));
    }
    if (cron.startAt() != null) {
      rendered.startAt = cron.startAt().render(nowMs);
      headers.add(header(DelayHeaders.START_AT, rendered.startAt.text()));
    }
    if (cron.endAt() != null) {
      rendered.endAt = cron.endAt().render(nowMs);
      headers.add(header(DelayHeaders.END_AT, rendered.endAt.text()));
    }
    if (cron.maxFires() != null) {
      headers.add(header(DelayHeaders.MAX_FIRES, cron.maxFires().text()));
    }
    if (cron.misfire() != null) {
      headers.add(header(DelayHeaders.MISFIRE, cron.misfire().text()));
    }
    headers.addAll(carried);
    byte[] value = payload;
    if (fault != null) {
      switch (fault) {
        case DUPLICATE_HEADER -> headers.add(copyOfFirstRequestHeader(headers));
        case NULL_HEADER_VALUE -> headers.add(new RecordHeader(DelayHeaders.MISFIRE, null));
        case INVALID_UTF8_HEADER ->
            headers.add(new RecordHeader(DelayHeaders.TARGET_KEY, HeaderTexts.INVALID_UTF8.get(0)));
        case TOO_MANY_HEADERS -> {
          while (headers.size() <= limits.maxHeaders()) {
            headers.add(header("padding", "p"));
          }
        }
        case SECOND_TIME_HEADER -> {
          if (!(time instanceof Time.After)) {
            headers.add(header(DelayHeaders.AFTER, "1000"));
          }
          if (!(time instanceof Time.FireAt)) {
            headers.add(header(DelayHeaders.FIRE_AT, Long.toString(nowMs)));
          }
        }
        case CRON_OPTION_ON_ONE_SHOT -> headers.add(header(DelayHeaders.ZONE, "UTC"));
        case TARGET_ON_RESCHEDULE -> headers.add(header(DelayHeaders.TARGET_TOPIC, "target"));
        case PAYLOAD_TOO_LARGE -> value = new byte[limits.maxPayloadBytes() + 1];
      }
    }
    long timestamp =
        timestampOffsetMs == NO_TIMESTAMP ? -1 : Math.max(0, nowMs + timestampOffsetMs);
    GeneratedRequest request =
        new GeneratedRequest(this, id, value, List.copyOf(headers), timestamp, nowMs, null);
    return request.withExpectation(ParseOracle.expect(request, rendered, limits));
  }

  /** The time headers' texts as written at the moment the request was rendered. */
  static final class Rendered {
    Denoted fireAt;
    Denoted startAt;
    Denoted endAt;
  }

  /** A copy of the first request header, to give it twice; a second one if there is none. */
  private static Header copyOfFirstRequestHeader(List<Header> headers) {
    for (Header header : headers) {
      if (DelayHeaders.REQUEST_HEADERS.contains(header.key())) {
        return new RecordHeader(header.key(), header.value());
      }
    }
    headers.add(header(DelayHeaders.MISFIRE, "skip"));
    return header(DelayHeaders.MISFIRE, "skip");
  }

  static Header header(String name, String value) {
    return new RecordHeader(name, HeaderTexts.utf8(value));
  }

  @Override
  public String toString() {
    StringBuilder out = new StringBuilder("Request[");
    out.append("id=").append(id == null ? "null" : '"' + GeneratedRequest.text(id) + '"');
    if (action != null) {
      out.append(", action='").append(action).append('\'');
    }
    if (target != null) {
      out.append(", target='").append(target).append('\'');
    }
    if (targetKey != null) {
      out.append(", key='").append(targetKey).append('\'');
    }
    if (partition != null) {
      out.append(", partition=").append(partition);
    }
    out.append(", time=").append(time);
    if (!cron.equals(CronOptions.NONE)) {
      out.append(", cron=").append(cron);
    }
    out.append(", payload=").append(payload == null ? "null" : payload.length + "B");
    if (!carried.isEmpty()) {
      out.append(", carried=").append(carried.size());
    }
    if (fault != null) {
      out.append(", fault=").append(fault);
    }
    if (timestampOffsetMs != 0) {
      out.append(", timestamp=")
          .append(timestampOffsetMs == NO_TIMESTAMP ? "-1" : "now+" + timestampOffsetMs);
    }
    return out.append(']').toString();
  }
}

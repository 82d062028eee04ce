package dev.kdelay.service.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeType;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kdelay.client.CronSchedule;
import dev.kdelay.client.DelayClient;
import dev.kdelay.client.DelayedMessage;
import dev.kdelay.schemas.CronExpressions;
import dev.kdelay.schemas.CronFlavor;
import dev.kdelay.schemas.CronOptions;
import dev.kdelay.schemas.RejectionException;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.schemas.WireText;
import dev.kdelay.service.input.TimeArguments;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * The JSON body of {@code POST /schedules}, read into the client SDK's {@link DelayedMessage}. Its
 * fields mirror the request headers in camelCase:
 *
 * <pre>{@code
 * {"id": "order-42", "targetTopic": "orders.timeouts", "after": "PT15M",
 *  "payload": "{\"order\":42}", "headers": {"traceparent": "00-..."}}
 * }</pre>
 *
 * <p>{@code id} and {@code targetTopic} are required, and exactly one of {@code fireAt}, {@code
 * after} and {@code cron}. {@code payload} is text, {@code payloadBase64} bytes; an explicit {@code
 * "payload": null} schedules a tombstone. Any other field given as {@code null} counts as absent.
 * Times are ISO-8601 text or epoch milliseconds, durations ISO-8601 ({@code PT30S}), a number with
 * a unit ({@code 30s}) or milliseconds, as on the CLI.
 *
 * <p>Everything the request topic would reject for its form is rejected here, with the same {@link
 * RejectionReason} code, each found by the check that failed: a schedule that passes is written to
 * the request topic, where kdelay still checks what depends on the cluster (the target exists and
 * is allowed). A body that is not a schedule at all (not JSON, an unknown field, a value of the
 * wrong type) is {@code BAD_REQUEST}.
 */
public final class ScheduleBody {

  /** The one field whose {@code null} means something: a tombstone. */
  private static final String PAYLOAD = "payload";

  /** The fields of a time, and all a reschedule's body may hold. */
  private static final Set<String> TIME_FIELDS =
      Set.of(
          "fireAt", "after", "cron", "cronType", "zone", "startAt", "endAt", "maxFires", "misfire");

  private static final Set<String> FIELDS =
      Set.of(
          "id",
          "targetTopic",
          "targetKey",
          "targetPartition",
          "payload",
          "payloadBase64",
          "fireAt",
          "after",
          "cron",
          "cronType",
          "zone",
          "startAt",
          "endAt",
          "maxFires",
          "misfire",
          "headers");

  /** The body without the fields given as null, except {@link #PAYLOAD}. */
  private final ObjectNode json;

  private final ServiceLimits limits;
  private final long nowMs;

  private ScheduleBody(ObjectNode json, ServiceLimits limits, long nowMs) {
    this.json = json;
    this.limits = limits;
    this.nowMs = nowMs;
  }

  /**
   * The service's limits on requests.
   *
   * @param maxIdBytes longest id, UTF-8 bytes
   * @param maxPayloadBytes largest payload
   * @param horizonMs furthest a due time may lie ahead
   */
  public record ServiceLimits(int maxIdBytes, int maxPayloadBytes, long horizonMs) {}

  /**
   * Reads a body.
   *
   * @param body the JSON text
   * @param limits the service's limits
   * @param nowMs the current time, for the horizon check
   * @return the message to send
   * @throws ApiException 400 with a rejection code if the body is not a valid schedule
   */
  static DelayedMessage parse(byte[] body, ServiceLimits limits, long nowMs) {
    return new ScheduleBody(object(body, FIELDS), limits, nowMs).message();
  }

  /**
   * Reads the body of {@code POST /schedules/{id}/reschedule}: only the time fields of a schedule's
   * body, {@code {"after": "PT30M"}} or {@code {"cron": "0 0 9 * * ?", "zone": "Europe/Berlin"}}.
   *
   * @throws ApiException 400 with a rejection code if the body is not a valid time
   */
  static NewTime parseTime(byte[] body, ServiceLimits limits, long nowMs) {
    return new ScheduleBody(object(body, TIME_FIELDS), limits, nowMs).time();
  }

  /**
   * A schedule's new time: exactly one of a due time, a delay and a cron cadence.
   *
   * @param fireAt the new due time
   * @param after the new delay, counted from the request's timestamp
   * @param cron the new cadence
   */
  record NewTime(Optional<Instant> fireAt, Optional<Duration> after, Optional<CronSchedule> cron) {

    /** Sends the reschedule of an id with the client. */
    CompletableFuture<RecordMetadata> send(DelayClient client, String id) {
      if (fireAt.isPresent()) {
        return client.rescheduleAt(id, fireAt.get());
      }
      if (after.isPresent()) {
        return client.rescheduleAfter(id, after.get());
      }
      return client.rescheduleCron(id, cron.orElseThrow());
    }

    private void applyTo(DelayedMessage.Builder builder) {
      fireAt.ifPresent(builder::fireAt);
      after.ifPresent(builder::after);
      cron.ifPresent(builder::cron);
    }
  }

  /** The body as an object of known fields, without the fields given as null. */
  private static ObjectNode object(byte[] body, Set<String> fields) {
    JsonNode json;
    try {
      json = ApiResponse.MAPPER.readTree(body);
    } catch (JsonProcessingException e) {
      throw ApiException.malformed("the body is not JSON: " + e.getOriginalMessage());
    } catch (IOException e) {
      throw ApiException.malformed("the body cannot be read: " + e);
    }
    if (!(json instanceof ObjectNode object)) {
      throw ApiException.malformed("the body must be a JSON object");
    }
    for (Map.Entry<String, JsonNode> field : object.properties()) {
      String name = field.getKey();
      if (!fields.contains(name)) {
        throw ApiException.malformed(
            "unknown field '" + name + "'; expected one of " + new TreeSet<>(fields));
      }
    }
    return withoutNulls(object);
  }

  /**
   * An explicit null is an absent field: {@code "fireAt": null} next to {@code "after": "1s"} is a
   * one-shot after a second, not two times. Only {@code "payload": null} means something.
   */
  private static ObjectNode withoutNulls(ObjectNode json) {
    ObjectNode present = json.deepCopy();
    List<String> nulls = new ArrayList<>();
    for (Map.Entry<String, JsonNode> field : json.properties()) {
      if (field.getValue().isNull() && !field.getKey().equals(PAYLOAD)) {
        nulls.add(field.getKey());
      }
    }
    present.remove(nulls);
    return present;
  }

  private DelayedMessage message() {
    String id =
        text("id")
            .orElseThrow(() -> ApiException.rejected(RejectionReason.BAD_ID, "id is required"));
    String topic =
        text("targetTopic")
            .orElseThrow(
                () ->
                    ApiException.rejected(
                        RejectionReason.MISSING_TARGET, "targetTopic is required"));
    checkId(id);
    DelayedMessage.Builder builder;
    try {
      builder = DelayedMessage.builder(id, topic);
    } catch (IllegalArgumentException e) {
      // The id passed the SDK's own checks above, so what the SDK refuses is the topic name.
      throw ApiException.rejected(RejectionReason.BAD_TARGET, e.getMessage());
    }
    text("targetKey")
        .ifPresent(
            key -> check(RejectionReason.BAD_HEADER, "targetKey", () -> builder.targetKey(key)));
    integer("targetPartition")
        .ifPresent(
            partition ->
                check(
                    RejectionReason.BAD_PARTITION,
                    "targetPartition",
                    () -> builder.targetPartition(Math.toIntExact(partition))));
    payload(builder);
    time().applyTo(builder);
    headers(builder);
    // Cannot fail: payload() and timing() have checked that exactly one of each was given.
    return builder.build();
  }

  /** The SDK's checks of an id, with the service's own limit: 1..max UTF-8 bytes, well-formed. */
  private void checkId(String id) {
    int idBytes = id.getBytes(StandardCharsets.UTF_8).length;
    if (idBytes < 1 || idBytes > limits.maxIdBytes()) {
      throw ApiException.rejected(
          RejectionReason.BAD_ID,
          "id must be 1.." + limits.maxIdBytes() + " UTF-8 bytes, got " + idBytes);
    }
    if (WireText.encode(id).isEmpty()) {
      throw ApiException.rejected(
          RejectionReason.BAD_ID, "id is not well-formed Unicode (an unpaired surrogate)");
    }
  }

  private void payload(DelayedMessage.Builder builder) {
    boolean text = json.has(PAYLOAD);
    boolean base64 = json.has("payloadBase64");
    if (text == base64) {
      throw ApiException.malformed(
          "give exactly one of payload (text; null for a tombstone) and payloadBase64");
    }
    if (text && json.get(PAYLOAD).isNull()) {
      builder.tombstone();
      return;
    }
    byte[] payload =
        text ? text(PAYLOAD).orElseThrow().getBytes(StandardCharsets.UTF_8) : base64Payload();
    if (payload.length > limits.maxPayloadBytes()) {
      throw ApiException.rejected(
          RejectionReason.TOO_LARGE,
          "payload of "
              + payload.length
              + " bytes exceeds the limit of "
              + limits.maxPayloadBytes());
    }
    builder.payload(payload);
  }

  private byte[] base64Payload() {
    try {
      return Base64.getDecoder().decode(text("payloadBase64").orElseThrow());
    } catch (IllegalArgumentException e) {
      throw ApiException.malformed("payloadBase64 is not base64: " + e.getMessage());
    }
  }

  private NewTime time() {
    List<String> times = new ArrayList<>();
    for (String name : List.of("fireAt", "after", "cron")) {
      if (json.has(name)) {
        times.add(name);
      }
    }
    if (times.isEmpty()) {
      throw ApiException.rejected(
          RejectionReason.MISSING_TIME, "give one of fireAt, after and cron");
    }
    if (times.size() > 1) {
      throw ApiException.rejected(
          RejectionReason.CONFLICTING_TIMES,
          "give only one of fireAt, after and cron, got " + times);
    }
    if (!json.has("cron")) {
      for (String name : List.of("cronType", "zone", "startAt", "endAt", "maxFires", "misfire")) {
        if (json.has(name)) {
          throw ApiException.rejected(
              RejectionReason.CONFLICTING_TIMES, name + " applies to cron schedules only");
        }
      }
    }
    Optional<Instant> fireAt = instant("fireAt");
    fireAt.ifPresent(at -> checkHorizon("fireAt", at.toEpochMilli()));
    Optional<Duration> after = duration("after");
    after.ifPresent(
        delay -> checkHorizon("after", nowMs + Math.min(delay.toMillis(), limits.horizonMs() + 1)));
    Optional<CronSchedule> cron = text("cron").map(this::cron);
    return new NewTime(fireAt, after, cron);
  }

  private CronSchedule cron(String expression) {
    CronFlavor type = cronOption(() -> CronOptions.flavor("cronType", optionText("cronType")));
    check(RejectionReason.BAD_CRON, "cron", () -> CronExpressions.parse(expression, type));
    CronSchedule cron =
        option(null, RejectionReason.BAD_CRON, "cron", ignored -> CronSchedule.of(expression));
    cron = cron.type(type).zone(cronOption(() -> CronOptions.zone("zone", optionText("zone"))));
    Optional<Instant> start = instant("startAt");
    if (start.isPresent()) {
      checkHorizon("startAt", start.get().toEpochMilli());
      cron = option(cron, RejectionReason.BAD_TIME, "startAt", c -> c.startAt(start.get()));
    }
    Optional<Instant> end = instant("endAt");
    if (end.isPresent()) {
      cron = option(cron, RejectionReason.BAD_TIME, "endAt", c -> c.endAt(end.get()));
    }
    Optional<Long> maxFires = integer("maxFires");
    if (maxFires.isPresent()) {
      cron = option(cron, RejectionReason.BAD_HEADER, "maxFires", c -> c.maxFires(maxFires.get()));
    }
    return cron.misfire(cronOption(() -> CronOptions.misfire("misfire", optionText("misfire"))));
  }

  /** Reads a cron option, turning its rejection into a 400 with the same code. */
  private static <T> T cronOption(Supplier<T> read) {
    try {
      return read.get();
    } catch (RejectionException e) {
      throw ApiException.rejected(e.reason(), e.getMessage());
    }
  }

  /** A text field, or null when absent: {@link CronOptions} then gives the default. */
  private String optionText(String name) {
    return text(name).orElse(null);
  }

  /** Sets an option of a cron schedule, turning the SDK's argument errors into a 400. */
  private static CronSchedule option(
      CronSchedule cron, RejectionReason reason, String field, UnaryOperator<CronSchedule> option) {
    return check(reason, field, () -> option.apply(cron));
  }

  private void headers(DelayedMessage.Builder builder) {
    JsonNode headers = json.get("headers");
    if (headers == null) {
      return;
    }
    if (!headers.isObject()) {
      throw ApiException.rejected(
          RejectionReason.BAD_HEADER, "headers must be an object of text values");
    }
    for (Map.Entry<String, JsonNode> header : headers.properties()) {
      JsonNode value = header.getValue();
      if (!value.isTextual() && !value.isNull()) {
        throw ApiException.rejected(
            RejectionReason.BAD_HEADER,
            "header '" + header.getKey() + "' must have a text value or null");
      }
      byte[] bytes = value.isNull() ? null : value.asText().getBytes(StandardCharsets.UTF_8);
      check(RejectionReason.BAD_HEADER, "headers", () -> builder.header(header.getKey(), bytes));
    }
  }

  private void checkHorizon(String field, long dueMs) {
    if (dueMs - nowMs > limits.horizonMs()) {
      throw ApiException.rejected(
          RejectionReason.TOO_FAR,
          field + " lies beyond the horizon of " + Duration.ofMillis(limits.horizonMs()));
    }
  }

  private Optional<String> text(String name) {
    JsonNode node = json.get(name);
    if (node == null) {
      return Optional.empty();
    }
    if (!node.isTextual()) {
      throw ApiException.malformed(name + " must be text, got " + kind(node));
    }
    return Optional.of(node.asText());
  }

  private Optional<Long> integer(String name) {
    JsonNode node = json.get(name);
    if (node == null) {
      return Optional.empty();
    }
    if (!node.isIntegralNumber() || !node.canConvertToLong()) {
      throw ApiException.malformed(name + " must be an integer, got " + kind(node));
    }
    return Optional.of(node.asLong());
  }

  private Optional<Instant> instant(String name) {
    // An instant outside the range of epoch milliseconds is none: it fails here, as BAD_TIME.
    return timeField(name, TimeArguments::instant);
  }

  private Optional<Duration> duration(String name) {
    return timeField(name, TimeArguments::duration);
  }

  /** A time given as text, or as a number of milliseconds. */
  private <T> Optional<T> timeField(String name, Function<String, T> parse) {
    JsonNode node = json.get(name);
    if (node == null) {
      return Optional.empty();
    }
    if (!node.isTextual() && !node.isIntegralNumber()) {
      throw ApiException.rejected(
          RejectionReason.BAD_TIME,
          name + " must be text or a number of milliseconds, got " + kind(node));
    }
    return Optional.of(check(RejectionReason.BAD_TIME, name, () -> parse.apply(node.asText())));
  }

  private static String kind(JsonNode node) {
    JsonNodeType type = node.getNodeType();
    return type.name().toLowerCase(Locale.ROOT);
  }

  /** Runs a step of the SDK's builder, turning its argument errors into a 400 with a code. */
  private static <T> T check(RejectionReason reason, String field, Supplier<T> step) {
    try {
      return step.get();
    } catch (IllegalArgumentException | ArithmeticException e) {
      throw ApiException.rejected(reason, field + ": " + e.getMessage());
    }
  }
}

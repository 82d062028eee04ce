package dev.kdelay.service;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeType;
import dev.kdelay.client.CronSchedule;
import dev.kdelay.client.DelayedMessage;
import dev.kdelay.schemas.CronExpressions;
import dev.kdelay.schemas.CronFlavor;
import dev.kdelay.schemas.Misfire;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

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
 * "payload": null} schedules a tombstone. Times are ISO-8601 text or epoch milliseconds, durations
 * ISO-8601 ({@code PT30S}), a number with a unit ({@code 30s}) or milliseconds, as on the CLI.
 *
 * <p>Everything the request topic would reject for its form is rejected here, with the same code: a
 * schedule that passes is written to the request topic, where kdelay still checks what depends on
 * the cluster (the target exists and is allowed).
 */
final class ScheduleBody {

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

  private final JsonNode json;
  private final ServiceLimits limits;
  private final long nowMs;

  private ScheduleBody(JsonNode json, ServiceLimits limits, long nowMs) {
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
  record ServiceLimits(int maxIdBytes, int maxPayloadBytes, long horizonMs) {}

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
    JsonNode json;
    try {
      json = ApiResponse.MAPPER.readTree(body);
    } catch (JsonProcessingException e) {
      throw ApiException.badRequest(
          "BAD_REQUEST", "the body is not JSON: " + e.getOriginalMessage());
    } catch (IOException e) {
      throw ApiException.badRequest("BAD_REQUEST", "the body cannot be read: " + e);
    }
    if (json == null || !json.isObject()) {
      throw ApiException.badRequest("BAD_REQUEST", "the body must be a JSON object");
    }
    return new ScheduleBody(json, limits, nowMs).message();
  }

  private DelayedMessage message() {
    for (Map.Entry<String, JsonNode> field : json.properties()) {
      String name = field.getKey();
      if (!FIELDS.contains(name)) {
        throw ApiException.badRequest(
            "BAD_REQUEST", "unknown field '" + name + "'; expected one of " + FIELDS);
      }
    }
    String id = text("id").orElseThrow(() -> ApiException.badRequest("BAD_ID", "id is required"));
    String topic =
        text("targetTopic")
            .orElseThrow(
                () -> ApiException.badRequest("MISSING_TARGET", "targetTopic is required"));
    int idBytes = id.getBytes(StandardCharsets.UTF_8).length;
    if (idBytes < 1 || idBytes > limits.maxIdBytes()) {
      throw ApiException.badRequest(
          "BAD_ID", "id must be 1.." + limits.maxIdBytes() + " UTF-8 bytes, got " + idBytes);
    }
    DelayedMessage.Builder builder;
    try {
      builder = DelayedMessage.builder(id, topic);
    } catch (IllegalArgumentException e) {
      // The SDK names the argument first: "id must be ..." or "targetTopic must be ...".
      throw ApiException.badRequest(
          e.getMessage().startsWith("id ") ? "BAD_ID" : "BAD_TARGET", e.getMessage());
    }
    text("targetKey")
        .ifPresent(key -> check("BAD_HEADER", "targetKey", () -> builder.targetKey(key)));
    integer("targetPartition")
        .ifPresent(
            partition ->
                check(
                    "BAD_PARTITION",
                    "targetPartition",
                    () -> builder.targetPartition(Math.toIntExact(partition))));
    payload(builder);
    timing(builder);
    headers(builder);
    try {
      return builder.build();
    } catch (IllegalStateException e) {
      throw ApiException.badRequest(
          e.getMessage().contains("payload") ? "BAD_REQUEST" : "CONFLICTING_TIMES", e.getMessage());
    }
  }

  private void payload(DelayedMessage.Builder builder) {
    boolean text = json.has("payload");
    boolean base64 = json.has("payloadBase64");
    if (text == base64) {
      throw ApiException.badRequest(
          "BAD_REQUEST",
          "give exactly one of payload (text; null for a tombstone) and payloadBase64");
    }
    if (text && json.get("payload").isNull()) {
      builder.tombstone();
      return;
    }
    byte[] payload =
        text
            ? text("payload").orElseThrow().getBytes(StandardCharsets.UTF_8)
            : check(
                "BAD_REQUEST",
                "payloadBase64",
                () -> Base64.getDecoder().decode(text("payloadBase64").orElseThrow()));
    if (payload.length > limits.maxPayloadBytes()) {
      throw ApiException.badRequest(
          "TOO_LARGE",
          "payload of "
              + payload.length
              + " bytes exceeds the limit of "
              + limits.maxPayloadBytes());
    }
    builder.payload(payload);
  }

  private void timing(DelayedMessage.Builder builder) {
    List<String> times = new ArrayList<>();
    for (String name : List.of("fireAt", "after", "cron")) {
      if (json.has(name)) {
        times.add(name);
      }
    }
    if (times.isEmpty()) {
      throw ApiException.badRequest("MISSING_TIME", "give one of fireAt, after and cron");
    }
    if (times.size() > 1) {
      throw ApiException.badRequest(
          "CONFLICTING_TIMES", "give only one of fireAt, after and cron, got " + times);
    }
    if (!json.has("cron")) {
      for (String name : List.of("cronType", "zone", "startAt", "endAt", "maxFires", "misfire")) {
        if (json.has(name)) {
          throw ApiException.badRequest(
              "CONFLICTING_TIMES", name + " applies to cron schedules only");
        }
      }
    }
    instant("fireAt")
        .ifPresent(
            at -> {
              checkHorizon("fireAt", at.toEpochMilli());
              builder.fireAt(at);
            });
    duration("after")
        .ifPresent(
            after -> {
              checkHorizon("after", nowMs + Math.min(after.toMillis(), limits.horizonMs() + 1));
              builder.after(after);
            });
    text("cron").ifPresent(expression -> builder.cron(cron(expression)));
  }

  private CronSchedule cron(String expression) {
    CronFlavor type = text("cronType").map(ScheduleBody::cronType).orElse(CronFlavor.QUARTZ);
    check("BAD_CRON", "cron", () -> CronExpressions.parse(expression, type));
    CronSchedule cron = option(null, "BAD_CRON", "cron", ignored -> CronSchedule.of(expression));
    cron = cron.type(type);
    Optional<String> zone = text("zone");
    if (zone.isPresent()) {
      cron = cron.zone(zone(zone.get()));
    }
    Optional<Instant> start = instant("startAt");
    if (start.isPresent()) {
      checkHorizon("startAt", start.get().toEpochMilli());
      cron = option(cron, "BAD_TIME", "startAt", c -> c.startAt(start.get()));
    }
    Optional<Instant> end = instant("endAt");
    if (end.isPresent()) {
      cron = option(cron, "BAD_TIME", "endAt", c -> c.endAt(end.get()));
    }
    Optional<Long> maxFires = integer("maxFires");
    if (maxFires.isPresent()) {
      cron = option(cron, "BAD_HEADER", "maxFires", c -> c.maxFires(maxFires.get()));
    }
    Optional<String> misfire = text("misfire");
    if (misfire.isPresent()) {
      cron = cron.misfire(misfire(misfire.get()));
    }
    return cron;
  }

  private static CronFlavor cronType(String name) {
    return CronFlavor.fromWireName(name)
        .orElseThrow(
            () ->
                ApiException.badRequest(
                    "BAD_CRON", "cronType is '" + name + "'; expected quartz, unix or spring"));
  }

  private static ZoneId zone(String name) {
    try {
      return ZoneId.of(name);
    } catch (DateTimeException e) {
      throw ApiException.badRequest(
          "BAD_ZONE", "zone is '" + name + "'; expected an IANA time zone such as Europe/Berlin");
    }
  }

  private static Misfire misfire(String name) {
    return Misfire.fromWireName(name)
        .orElseThrow(
            () ->
                ApiException.badRequest(
                    "BAD_HEADER",
                    "misfire is '" + name + "'; expected fire-once, fire-all or skip"));
  }

  /** Sets an option of a cron schedule, turning the SDK's argument errors into a 400. */
  private static CronSchedule option(
      CronSchedule cron, String code, String field, UnaryOperator<CronSchedule> option) {
    return check(code, field, () -> option.apply(cron));
  }

  private void headers(DelayedMessage.Builder builder) {
    JsonNode headers = json.get("headers");
    if (headers == null || headers.isNull()) {
      return;
    }
    if (!headers.isObject()) {
      throw ApiException.badRequest("BAD_HEADER", "headers must be an object of text values");
    }
    for (Map.Entry<String, JsonNode> header : headers.properties()) {
      JsonNode value = header.getValue();
      if (!value.isTextual() && !value.isNull()) {
        throw ApiException.badRequest(
            "BAD_HEADER", "header '" + header.getKey() + "' must have a text value or null");
      }
      byte[] bytes = value.isNull() ? null : value.asText().getBytes(StandardCharsets.UTF_8);
      check("BAD_HEADER", "headers", () -> builder.header(header.getKey(), bytes));
    }
  }

  private void checkHorizon(String field, long dueMs) {
    if (dueMs - nowMs > limits.horizonMs()) {
      throw ApiException.badRequest(
          "TOO_FAR",
          field + " lies beyond the horizon of " + Duration.ofMillis(limits.horizonMs()));
    }
  }

  private Optional<String> text(String name) {
    JsonNode node = json.get(name);
    if (node == null || node.isNull()) {
      return Optional.empty();
    }
    if (!node.isTextual()) {
      throw ApiException.badRequest("BAD_REQUEST", name + " must be text, got " + kind(node));
    }
    return Optional.of(node.asText());
  }

  private Optional<Long> integer(String name) {
    JsonNode node = json.get(name);
    if (node == null || node.isNull()) {
      return Optional.empty();
    }
    if (!node.isIntegralNumber() || !node.canConvertToLong()) {
      throw ApiException.badRequest("BAD_REQUEST", name + " must be an integer, got " + kind(node));
    }
    return Optional.of(node.asLong());
  }

  private Optional<Instant> instant(String name) {
    // toEpochMilli: an instant kdelay cannot represent fails here, as BAD_TIME.
    return timeField(
        name, text -> Instant.ofEpochMilli(TimeArguments.instant(text).toEpochMilli()));
  }

  private Optional<Duration> duration(String name) {
    return timeField(name, text -> Duration.ofMillis(TimeArguments.duration(text).toMillis()));
  }

  /** A time given as text, or as a number of milliseconds. */
  private <T> Optional<T> timeField(String name, Function<String, T> parse) {
    JsonNode node = json.get(name);
    if (node == null || node.isNull()) {
      return Optional.empty();
    }
    if (!node.isTextual() && !node.isIntegralNumber()) {
      throw ApiException.badRequest(
          "BAD_TIME", name + " must be text or a number of milliseconds, got " + kind(node));
    }
    return Optional.of(check("BAD_TIME", name, () -> parse.apply(node.asText())));
  }

  private static String kind(JsonNode node) {
    JsonNodeType type = node.getNodeType();
    return type.name().toLowerCase(Locale.ROOT);
  }

  /** Runs a step of the SDK's builder, turning its argument errors into a 400 with a code. */
  private static <T> T check(String code, String field, Supplier<T> step) {
    try {
      return step.get();
    } catch (IllegalArgumentException | ArithmeticException e) {
      throw ApiException.badRequest(code, field + ": " + e.getMessage());
    }
  }
}

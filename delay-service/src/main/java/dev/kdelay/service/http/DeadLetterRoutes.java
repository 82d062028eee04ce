package dev.kdelay.service.http;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kdelay.client.DeadLetter;
import dev.kdelay.client.Replay;
import dev.kdelay.service.deadletters.DeadLetterPages;
import dev.kdelay.service.deadletters.DeadLetterPages.Position;
import dev.kdelay.service.input.TimeArguments;
import dev.kdelay.topology.Tenants;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;

/**
 * The admin API's dead-letter routes:
 *
 * <pre>
 * GET  /dead-letters?code=&amp;id=&amp;after=&amp;limit=      a page, in partition and offset order
 * GET  /dead-letters/{partition}/{offset}            one, with its payload
 * POST /dead-letters/{partition}/{offset}/replay     submit it again; optional JSON corrections
 *                                                    {"targetTopic", "fireAt" | "after"}
 * </pre>
 *
 * <p>A payload is shown as text when it is UTF-8, else as base64: in a listing its first {@value
 * #LISTED_PAYLOAD_BYTES} bytes, for one dead letter its first {@value #SHOWN_PAYLOAD_BYTES}.
 *
 * <p>Each route reads the dead-letter topic of the namespace the request acts on ({@link
 * Namespaces}): a tenant's own, {@code <dead-letter topic>.<tenant>}, for a tenant's token or
 * {@code ?tenant=}; else the shared one. A replay is written to that namespace's request topic.
 */
public final class DeadLetterRoutes {

  static final int LISTED_PAYLOAD_BYTES = 1_024;
  static final int SHOWN_PAYLOAD_BYTES = 64 * 1_024;
  static final int DEFAULT_LIMIT = 50;
  static final int MAX_LIMIT = 500;

  private final DeadLetterPages shared;
  private final TargetTopicCheck targets;
  private final Duration sendTimeout;

  /**
   * @param shared pages of the shared dead-letter topic
   * @param targets the check of a replay's corrected target topic
   * @param sendTimeout how long a replay waits for Kafka's acknowledgement
   */
  public DeadLetterRoutes(DeadLetterPages shared, TargetTopicCheck targets, Duration sendTimeout) {
    this.shared = requireNonNull(shared, "shared cannot be null");
    this.targets = requireNonNull(targets, "targets cannot be null");
    this.sendTimeout = requireNonNull(sendTimeout, "sendTimeout cannot be null");
  }

  /**
   * Its routes, each answered by this instance: dead letters are read from Kafka here.
   *
   * @param namespaces whose dead letters a request reads, and where its replays are written
   */
  List<Route> routes(Namespaces namespaces) {
    return List.of(
        Route.of("dead-letters").get(Route.Reach.LOCAL, (r, v) -> list(r, namespaces.of(r))),
        Route.of("dead-letters", Route.ID, Route.ID)
            .get(Route.Reach.LOCAL, (r, v) -> show(v, namespaces.of(r))),
        Route.of("dead-letters", Route.ID, Route.ID, "replay")
            .post(Route.Reach.LOCAL, (r, v) -> replay(r, v, namespaces)));
  }

  /** The pages of a namespace's dead-letter topic. */
  private DeadLetterPages pages(Optional<Tenants.Tenant> tenant) {
    return tenant.map(t -> shared.onTopic(t.dlqTopic())).orElse(shared);
  }

  /** {@code GET /dead-letters}. */
  ApiResponse list(ApiRequest request, Optional<Tenants.Tenant> tenant) {
    for (String name : request.query().keySet()) {
      if (!List.of("code", "id", "after", "limit", "tenant").contains(name)) {
        throw ApiException.badRequest(
            "BAD_REQUEST",
            "unknown parameter '" + name + "'; expected code, id, after, limit, tenant");
      }
    }
    DeadLetterPages pages = pages(tenant);
    Optional<Position> after =
        request
            .param("after")
            .filter(cursor -> !cursor.isEmpty())
            .map(
                cursor ->
                    Position.parse(cursor)
                        .orElseThrow(
                            () ->
                                ApiException.badRequest(
                                    "BAD_CURSOR",
                                    "after: '" + cursor + "' is not a page's 'next'")));
    DeadLetterPages.Page page =
        pages.page(
            new DeadLetterPages.Filter(
                request.param("code").filter(code -> !code.isEmpty()),
                request.param("id").filter(id -> !id.isEmpty())),
            after,
            limit(request.param("limit")));
    List<Object> letters = new ArrayList<>();
    page.letters().forEach(letter -> letters.add(json(letter, LISTED_PAYLOAD_BYTES)));
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("topic", pages.topic());
    body.put("deadLetters", letters);
    body.put("next", page.next().map(Position::cursor).orElse(null));
    return ApiResponse.json(200, body);
  }

  /** {@code GET /dead-letters/{partition}/{offset}}. */
  ApiResponse show(List<String> variables, Optional<Tenants.Tenant> tenant) {
    return ApiResponse.json(200, json(find(variables, pages(tenant)), SHOWN_PAYLOAD_BYTES));
  }

  /**
   * {@code POST /dead-letters/{partition}/{offset}/replay}: to the request topic of the namespace
   * whose dead letter it is, so that a tenant's replay is its tenant's request again.
   */
  ApiResponse replay(ApiRequest request, List<String> variables, Namespaces namespaces) {
    Optional<Tenants.Tenant> tenant = namespaces.of(request);
    Replay replay = corrections(request.body(), tenant);
    DeadLetter letter = find(variables, pages(tenant));
    RecordMetadata written;
    try {
      written =
          namespaces
              .requests(tenant)
              .replay(letter, replay)
              .get(sendTimeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (IllegalArgumentException e) {
      throw new ApiException(409, "NOT_REPLAYABLE", e.getMessage());
    } catch (ExecutionException e) {
      throw ApiException.unavailable("the replay could not be written: " + e.getCause());
    } catch (TimeoutException e) {
      throw ApiException.unavailable(
          "Kafka did not acknowledge the replay within " + sendTimeout.toMillis() + " ms");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw ApiException.unavailable("interrupted while writing the replay");
    }
    // The endpoint's audit line logs it, from this answer and the path (the dead letter's place).
    String id = letter.scheduleId().orElseThrow();
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("id", id);
    tenant.ifPresent(t -> body.put("tenant", t.name()));
    body.put("action", "replay");
    body.put("status", "accepted");
    body.put("replayOf", Map.of("partition", letter.partition(), "offset", letter.offset()));
    body.put("requestsTopic", written.topic());
    body.put("partition", written.partition());
    body.put("offset", written.offset());
    return ApiResponse.json(202, body);
  }

  private static DeadLetter find(List<String> variables, DeadLetterPages pages) {
    int partition;
    long offset;
    try {
      partition = Integer.parseInt(variables.get(0));
      offset = Long.parseLong(variables.get(1));
    } catch (NumberFormatException e) {
      throw ApiException.badRequest(
          "BAD_REQUEST", "expected /dead-letters/{partition}/{offset} with two numbers");
    }
    return pages
        .at(partition, offset)
        .orElseThrow(
            () ->
                new ApiException(
                    404,
                    "NOT_FOUND",
                    "no dead letter at partition "
                        + partition
                        + ", offset "
                        + offset
                        + " of "
                        + pages.topic()));
  }

  /** The corrections a replay's JSON body asks for; an empty body replays as it was. */
  private Replay corrections(byte[] body, Optional<Tenants.Tenant> tenant) {
    Replay replay = Replay.asIs();
    if (body.length == 0) {
      return replay;
    }
    JsonNode json;
    try {
      json = ApiResponse.MAPPER.readTree(body);
    } catch (IOException e) {
      throw ApiException.badRequest("BAD_REQUEST", "the body is not JSON");
    }
    if (json == null || json.isNull()) {
      return replay;
    }
    if (!json.isObject()) {
      throw ApiException.badRequest("BAD_REQUEST", "the body must be a JSON object");
    }
    List<String> names = new ArrayList<>();
    json.fieldNames().forEachRemaining(names::add);
    for (String name : names) {
      if (!List.of("targetTopic", "fireAt", "after").contains(name)) {
        throw ApiException.badRequest(
            "BAD_REQUEST", "unknown field '" + name + "'; expected targetTopic, fireAt, after");
      }
    }
    if (json.hasNonNull("fireAt") && json.hasNonNull("after")) {
      throw ApiException.badRequest("CONFLICTING_TIMES", "give fireAt or after, not both");
    }
    if (json.hasNonNull("targetTopic")) {
      String topic = json.get("targetTopic").asText();
      targets.check(tenant, topic);
      replay = replay.targetTopic(topic);
    }
    try {
      if (json.hasNonNull("fireAt")) {
        Instant at = TimeArguments.instant(json.get("fireAt").asText());
        replay = replay.fireAt(at);
      }
      if (json.hasNonNull("after")) {
        replay = replay.after(TimeArguments.duration(json.get("after").asText()));
      }
    } catch (IllegalArgumentException | ArithmeticException e) {
      throw ApiException.badRequest("BAD_TIME", e.getMessage());
    }
    return replay;
  }

  private static int limit(Optional<String> text) {
    if (text.isEmpty()) {
      return DEFAULT_LIMIT;
    }
    try {
      int limit = Integer.parseInt(text.get());
      if (limit >= 1 && limit <= MAX_LIMIT) {
        return limit;
      }
    } catch (NumberFormatException e) {
      // Falls through to the error.
    }
    throw ApiException.badRequest(
        "BAD_REQUEST", "limit: '" + text.get() + "'; expected an integer from 1 to " + MAX_LIMIT);
  }

  static Map<String, Object> json(DeadLetter letter, int payloadBytes) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("partition", letter.partition());
    json.put("offset", letter.offset());
    json.put("timestamp", Instant.ofEpochMilli(letter.timestamp()).toString());
    json.put("timestampMs", letter.timestamp());
    json.put("id", letter.scheduleId().orElse(null));
    json.put("code", letter.code());
    json.put("message", letter.message());
    letter.omitted().ifPresent(omitted -> json.put("omitted", omitted));
    Map<String, Object> headers = new LinkedHashMap<>();
    for (Header header : letter.headers()) {
      headers.put(header.key(), BytesPreview.of(header.value(), Integer.MAX_VALUE));
    }
    json.put("headers", headers);
    json.put("payloadBytes", letter.value() == null ? null : letter.value().length);
    json.put(
        "payload", letter.value() == null ? null : BytesPreview.of(letter.value(), payloadBytes));
    return json;
  }
}

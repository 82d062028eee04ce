package dev.kdelay.service.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.kdelay.schemas.LogValues;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the HTTP API answers: a status, a content type, a body and extra headers.
 *
 * @param status the HTTP status
 * @param contentType the body's content type
 * @param body the body
 * @param headers extra response headers, such as {@code Allow}
 */
record ApiResponse(int status, String contentType, byte[] body, Map<String, String> headers) {

  static final String JSON = "application/json";

  /** Shared: an ObjectMapper is thread-safe once configured. */
  static final ObjectMapper MAPPER =
      new ObjectMapper().disable(SerializationFeature.FAIL_ON_EMPTY_BEANS);

  static ApiResponse json(int status, Object body) {
    try {
      return new ApiResponse(status, JSON, MAPPER.writeValueAsBytes(body), Map.of());
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot write JSON of " + body.getClass(), e);
    }
  }

  static ApiResponse text(int status, String contentType, String body) {
    return new ApiResponse(status, contentType, body.getBytes(StandardCharsets.UTF_8), Map.of());
  }

  static ApiResponse error(int status, String code, String message) {
    return error(status, code, message, Map.of());
  }

  /** An error with more fields after {@code error} and {@code message}, such as the id. */
  static ApiResponse error(int status, String code, String message, Map<String, Object> details) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("error", code);
    body.put("message", message);
    body.putAll(details);
    return json(status, body);
  }

  static ApiResponse of(ApiException e) {
    return error(e.status(), e.code(), e.getMessage());
  }

  ApiResponse withHeader(String name, String value) {
    Map<String, String> more = new LinkedHashMap<>(headers);
    more.put(name, value);
    return new ApiResponse(status, contentType, body, Map.copyOf(more));
  }

  /** The {@code error} code of an error answer ({@link #error}), or {@code -} for any other. */
  String errorCode() {
    return errorCode(json());
  }

  private String errorCode(JsonNode answer) {
    return status < 400 || answer == null ? "-" : answer.path("error").asText("-");
  }

  /**
   * What an answer to a change says of it, for the audit line, from one reading of its JSON body:
   * {@code action=... id=... partition=... offset=... status=... code=...} (an accepted change has
   * the first four, an error with an id that one and its code), {@code -} for each it does not say.
   * The id is quoted as log values are.
   */
  String changeFields() {
    JsonNode answer = json();
    return "action="
        + field(answer, "action", false)
        + " id="
        + field(answer, "id", true)
        + " partition="
        + field(answer, "partition", false)
        + " offset="
        + field(answer, "offset", false)
        + " status="
        + status
        + " code="
        + errorCode(answer);
  }

  /** The body read as JSON, or null if it is not JSON. */
  private JsonNode json() {
    if (!JSON.equals(contentType)) {
      return null;
    }
    try {
      return MAPPER.readTree(body);
    } catch (java.io.IOException e) {
      return null; // not JSON after all: nothing to say
    }
  }

  private static String field(JsonNode answer, String name, boolean quoted) {
    JsonNode value = answer == null ? null : answer.get(name);
    if (value == null || !value.isValueNode() || value.isNull()) {
      return "-";
    }
    return quoted ? LogValues.quote(value.asText()) : value.asText();
  }

  /** The body as UTF-8 text, for tests and logs. */
  String bodyText() {
    return new String(body, StandardCharsets.UTF_8);
  }
}

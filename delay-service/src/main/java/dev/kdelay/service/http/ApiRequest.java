package dev.kdelay.service.http;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * An HTTP request to the API, decoded: the path as percent-decoded segments (so that an id may
 * contain {@code /} as {@code %2F}), the query parameters, the body, and whether another instance
 * forwarded it (then it is answered from this instance's own state only).
 *
 * @param method the HTTP method
 * @param segments the decoded path segments, without empty ones
 * @param query the decoded query parameters; the last of a repeated name wins
 * @param body the request body, empty if none
 * @param forwarded whether the request carries {@link #FORWARDED_HEADER}
 * @param tenant the tenant the caller's token acts for ({@link HttpAccess#tenant}); empty for a
 *     caller of the whole deployment
 */
record ApiRequest(
    String method,
    List<String> segments,
    Map<String, String> query,
    byte[] body,
    boolean forwarded,
    Optional<String> tenant) {

  /** Marks a request one instance sends another on a caller's behalf. */
  static final String FORWARDED_HEADER = "Kdelay-Forwarded";

  /**
   * Decodes a request.
   *
   * @throws ApiException 400 if the path or query is not well percent-encoded
   */
  static ApiRequest of(String method, URI uri, byte[] body, boolean forwarded) {
    return of(method, uri.getRawPath(), uri.getRawQuery(), body, forwarded);
  }

  /**
   * Decodes a request from its raw, still percent-encoded, path and query.
   *
   * @throws ApiException 400 if the path or query is not well percent-encoded
   */
  static ApiRequest of(
      String method, String rawPath, String rawQuery, byte[] body, boolean forwarded) {
    return of(method, rawPath, rawQuery, body, forwarded, Optional.empty());
  }

  /**
   * Decodes a request of a caller whose token acts for a tenant, or for the whole deployment.
   *
   * @throws ApiException 400 if the path or query is not well percent-encoded
   */
  static ApiRequest of(
      String method,
      String rawPath,
      String rawQuery,
      byte[] body,
      boolean forwarded,
      Optional<String> tenant) {
    return new ApiRequest(method, segments(rawPath), query(rawQuery), body, forwarded, tenant);
  }

  /** The same request, as a caller whose token acts for this tenant sends it. */
  ApiRequest asTenant(String tenant) {
    return new ApiRequest(method, segments, query, body, forwarded, Optional.of(tenant));
  }

  Optional<String> param(String name) {
    return Optional.ofNullable(query.get(name));
  }

  private static List<String> segments(String rawPath) {
    List<String> segments = new ArrayList<>();
    for (String raw : (rawPath == null ? "" : rawPath).split("/")) {
      if (!raw.isEmpty()) {
        // In a path '+' is a plus, not a space.
        segments.add(decode(raw.replace("+", "%2B")));
      }
    }
    return List.copyOf(segments);
  }

  private static Map<String, String> query(String rawQuery) {
    Map<String, String> params = new LinkedHashMap<>();
    if (rawQuery == null || rawQuery.isEmpty()) {
      return params;
    }
    for (String pair : rawQuery.split("&")) {
      if (pair.isEmpty()) {
        continue;
      }
      int equals = pair.indexOf('=');
      String name = equals < 0 ? pair : pair.substring(0, equals);
      String value = equals < 0 ? "" : pair.substring(equals + 1);
      params.put(decode(name), decode(value));
    }
    return params;
  }

  private static String decode(String text) {
    try {
      return URLDecoder.decode(text, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw ApiException.badRequest("BAD_REQUEST", "malformed percent-encoding in '" + text + "'");
    }
  }
}

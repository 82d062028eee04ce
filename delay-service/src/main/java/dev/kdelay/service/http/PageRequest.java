package dev.kdelay.service.http;

import dev.kdelay.schemas.TenantIds;
import dev.kdelay.service.input.TimeArguments;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One page of {@code GET /schedules}: tasks due before a time, after a cursor, at most a limit,
 * optionally only those whose id starts with a prefix or whose target is a topic.
 *
 * <p>The cursor names the last task of the previous page as {@code <due ms>.<id in base64url>}, so
 * a page starts exactly after it in due order, whatever was scheduled or fired meanwhile. A start
 * time ({@code dueAfter}) is a position too: after the empty id at that time, which sorts before
 * every id due then.
 *
 * @param afterDueMs the due time of the cursor's task
 * @param afterId the id of the cursor's task; empty for a start time; null for the first page
 * @param dueBeforeMs list tasks due strictly before this, epoch milliseconds
 * @param limit most tasks on the page
 * @param idPrefix list only ids that start with this; null for any
 * @param topic list only tasks whose target is this topic; null for any
 * @param tenant list only this tenant's tasks; null for every namespace's. What the caller may see
 *     ({@link Namespaces}) sets it with {@link #ofTenant}, whatever the query said
 */
record PageRequest(
    long afterDueMs,
    String afterId,
    long dueBeforeMs,
    int limit,
    String idPrefix,
    String topic,
    String tenant) {

  static final int DEFAULT_LIMIT = 100;
  static final int MAX_LIMIT = 1_000;

  private static final List<String> PARAMETERS =
      List.of("dueBefore", "dueAfter", "limit", "after", "idPrefix", "topic", "tenant");

  private static final Pattern CURSOR = Pattern.compile("(-?\\d{1,19})\\.([A-Za-z0-9_-]+)");

  /** A page of every task. */
  PageRequest(long afterDueMs, String afterId, long dueBeforeMs, int limit) {
    this(afterDueMs, afterId, dueBeforeMs, limit, null, null);
  }

  /** A page of every namespace's tasks. */
  PageRequest(
      long afterDueMs, String afterId, long dueBeforeMs, int limit, String idPrefix, String topic) {
    this(afterDueMs, afterId, dueBeforeMs, limit, idPrefix, topic, null);
  }

  /** This page, of one tenant's tasks only; null for every namespace's. */
  PageRequest ofTenant(String tenant) {
    return new PageRequest(afterDueMs, afterId, dueBeforeMs, limit, idPrefix, topic, tenant);
  }

  /** Whether the page lists only some tasks: then its scans skip some of what they read. */
  boolean filtered() {
    return idPrefix != null || topic != null || tenant != null;
  }

  /**
   * Whether a task belongs on the page, by its id as kdelay keeps it and its target topic. The id
   * prefix is matched against the id as its tenant sent it ({@link TenantIds}).
   */
  boolean matches(String id, String targetTopic) {
    return (tenant == null || tenant.equals(TenantIds.tenantOf(id)))
        && (idPrefix == null || TenantIds.idOf(id).startsWith(idPrefix))
        && (topic == null || topic.equals(targetTopic));
  }

  /**
   * Reads the query parameters {@code dueBefore} and {@code dueAfter} (ISO-8601 instant or epoch
   * ms; default: no bound), {@code limit} (1..1000, default 100), {@code after} (a cursor from a
   * previous page), {@code idPrefix}, {@code topic} and {@code tenant}.
   *
   * @throws ApiException 400 if a parameter is malformed
   */
  static PageRequest from(Map<String, String> query) {
    for (String name : query.keySet()) {
      if (!PARAMETERS.contains(name)) {
        throw ApiException.badRequest(
            "BAD_REQUEST",
            "unknown parameter '" + name + "'; expected " + String.join(", ", PARAMETERS));
      }
    }
    long dueBefore = time(query, "dueBefore").orElse(Long.MAX_VALUE);
    int limit = limit(query.get("limit"));
    String idPrefix = nonEmpty(query.get("idPrefix"));
    String topic = nonEmpty(query.get("topic"));
    String tenant = nonEmpty(query.get("tenant"));
    OptionalLong dueAfter = time(query, "dueAfter");
    String after = query.get("after");
    if (after == null || after.isEmpty()) {
      return dueAfter.isPresent()
          ? new PageRequest(dueAfter.getAsLong(), "", dueBefore, limit, idPrefix, topic, tenant)
          : new PageRequest(0, null, dueBefore, limit, idPrefix, topic, tenant);
    }
    Matcher cursor = CURSOR.matcher(after);
    try {
      if (cursor.matches()) {
        String id =
            new String(Base64.getUrlDecoder().decode(cursor.group(2)), StandardCharsets.UTF_8);
        long dueMs = Long.parseLong(cursor.group(1));
        if (dueAfter.isPresent() && dueMs < dueAfter.getAsLong()) {
          return new PageRequest(
              dueAfter.getAsLong(), "", dueBefore, limit, idPrefix, topic, tenant);
        }
        return new PageRequest(dueMs, id, dueBefore, limit, idPrefix, topic, tenant);
      }
    } catch (IllegalArgumentException e) {
      // Falls through: not base64, or the number overflows.
    }
    throw ApiException.badRequest(
        "BAD_CURSOR", "after: '" + after + "' is not a cursor from a previous page's 'next'");
  }

  private static OptionalLong time(Map<String, String> query, String name) {
    String text = query.get(name);
    if (text == null || text.isEmpty()) {
      return OptionalLong.empty();
    }
    try {
      return OptionalLong.of(TimeArguments.instant(text).toEpochMilli());
    } catch (IllegalArgumentException | ArithmeticException e) {
      throw ApiException.badRequest("BAD_TIME", name + ": " + e.getMessage());
    }
  }

  private static String nonEmpty(String text) {
    return text == null || text.isEmpty() ? null : text;
  }

  private static int limit(String text) {
    if (text == null) {
      return DEFAULT_LIMIT;
    }
    try {
      int limit = Integer.parseInt(text);
      if (limit >= 1 && limit <= MAX_LIMIT) {
        return limit;
      }
    } catch (NumberFormatException e) {
      // Falls through to the error.
    }
    throw ApiException.badRequest(
        "BAD_REQUEST", "limit: '" + text + "'; expected an integer from 1 to " + MAX_LIMIT);
  }

  /** The cursor that continues after a task. */
  static String cursorAfter(long dueMs, String id) {
    return dueMs
        + "."
        + Base64.getUrlEncoder()
            .withoutPadding()
            .encodeToString(id.getBytes(StandardCharsets.UTF_8));
  }

  /** This page as query parameters, to ask another instance for it. */
  String toQuery() {
    StringBuilder query = new StringBuilder("limit=").append(limit);
    if (dueBeforeMs != Long.MAX_VALUE) {
      query.append("&dueBefore=").append(dueBeforeMs);
    }
    if (afterId != null && afterId.isEmpty()) {
      query.append("&dueAfter=").append(afterDueMs);
    } else if (afterId != null) {
      query
          .append("&after=")
          .append(URLEncoder.encode(cursorAfter(afterDueMs, afterId), StandardCharsets.UTF_8));
    }
    if (idPrefix != null) {
      query.append("&idPrefix=").append(URLEncoder.encode(idPrefix, StandardCharsets.UTF_8));
    }
    if (topic != null) {
      query.append("&topic=").append(URLEncoder.encode(topic, StandardCharsets.UTF_8));
    }
    if (tenant != null) {
      query.append("&tenant=").append(tenant); // lowercase letters and digits
    }
    return query.toString();
  }
}

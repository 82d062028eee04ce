package dev.kdelay.service.http;

import dev.kdelay.service.TimeArguments;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One page of {@code GET /schedules}: tasks due before a time, after a cursor, at most a limit.
 *
 * <p>The cursor names the last task of the previous page as {@code <due ms>.<id in base64url>}, so
 * a page starts exactly after it in due order, whatever was scheduled or fired meanwhile.
 *
 * @param afterDueMs the due time of the cursor's task
 * @param afterId the id of the cursor's task, or null for the first page
 * @param dueBeforeMs list tasks due strictly before this, epoch milliseconds
 * @param limit most tasks on the page
 */
record PageRequest(long afterDueMs, String afterId, long dueBeforeMs, int limit) {

  static final int DEFAULT_LIMIT = 100;
  static final int MAX_LIMIT = 1_000;

  private static final Pattern CURSOR = Pattern.compile("(-?\\d{1,19})\\.([A-Za-z0-9_-]+)");

  /**
   * Reads the query parameters {@code dueBefore} (ISO-8601 instant or epoch ms; default: no bound),
   * {@code limit} (1..1000, default 100) and {@code after} (a cursor from a previous page).
   *
   * @throws ApiException 400 if a parameter is malformed
   */
  static PageRequest from(Map<String, String> query) {
    for (String name : query.keySet()) {
      if (!name.equals("dueBefore") && !name.equals("limit") && !name.equals("after")) {
        throw ApiException.badRequest(
            "BAD_REQUEST", "unknown parameter '" + name + "'; expected dueBefore, limit, after");
      }
    }
    long dueBefore = Long.MAX_VALUE;
    String dueBeforeText = query.get("dueBefore");
    if (dueBeforeText != null) {
      try {
        dueBefore = TimeArguments.instant(dueBeforeText).toEpochMilli();
      } catch (IllegalArgumentException | ArithmeticException e) {
        throw ApiException.badRequest("BAD_TIME", "dueBefore: " + e.getMessage());
      }
    }
    int limit = limit(query.get("limit"));
    String after = query.get("after");
    if (after == null || after.isEmpty()) {
      return new PageRequest(0, null, dueBefore, limit);
    }
    Matcher cursor = CURSOR.matcher(after);
    try {
      if (cursor.matches()) {
        String id =
            new String(Base64.getUrlDecoder().decode(cursor.group(2)), StandardCharsets.UTF_8);
        return new PageRequest(Long.parseLong(cursor.group(1)), id, dueBefore, limit);
      }
    } catch (IllegalArgumentException e) {
      // Falls through: not base64, or the number overflows.
    }
    throw ApiException.badRequest(
        "BAD_CURSOR", "after: '" + after + "' is not a cursor from a previous page's 'next'");
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
    if (afterId != null) {
      query
          .append("&after=")
          .append(URLEncoder.encode(cursorAfter(afterDueMs, afterId), StandardCharsets.UTF_8));
    }
    return query.toString();
  }
}

package dev.kdelay.service.http;

import dev.kdelay.schemas.CronFlavor;
import dev.kdelay.schemas.CronOptions;
import dev.kdelay.schemas.CronSpec;
import dev.kdelay.schemas.RejectionException;
import dev.kdelay.service.input.TimeArguments;
import dev.kdelay.topology.CronOccurrences;
import dev.kdelay.topology.CronOccurrences.Occurrence;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code GET /cron/preview?cron=&cronType=&zone=&count=&from=}: the next occurrences of a cron
 * expression in a zone, computed by the topology's own cron code ({@link CronOccurrences}), with
 * daylight-saving changes marked. Reads nothing but the clock.
 *
 * <pre>
 * {"cron": "0 30 2 * * ?", "cronType": "quartz", "zone": "Europe/Berlin",
 *  "occurrences": [{"at": "2026-03-29T01:00:00Z", "atMs": ..., "local": "2026-03-29T03:00:00",
 *                   "offset": "+02:00", "transition": "in-gap"}, ...]}
 * </pre>
 */
final class CronPreview {

  static final int DEFAULT_COUNT = 10;
  static final int MAX_COUNT = 100;

  private static final List<String> PARAMETERS =
      List.of("cron", "cronType", "zone", "count", "from");

  private CronPreview() {}

  /**
   * Answers a preview.
   *
   * @param query the request's parameters
   * @param nowMs the time to list occurrences after, unless {@code from} says otherwise
   * @param horizonMs how far after that an occurrence may be
   * @throws ApiException 400 {@code BAD_CRON}, {@code BAD_ZONE}, {@code BAD_TIME} or {@code
   *     BAD_REQUEST} for a bad parameter
   */
  static ApiResponse answer(Map<String, String> query, long nowMs, long horizonMs) {
    for (String name : query.keySet()) {
      if (!PARAMETERS.contains(name)) {
        throw ApiException.badRequest(
            "BAD_REQUEST",
            "unknown parameter '" + name + "'; expected " + String.join(", ", PARAMETERS));
      }
    }
    String cron = query.getOrDefault("cron", "").strip();
    if (cron.isEmpty()) {
      throw ApiException.badRequest("BAD_CRON", "cron: give a cron expression");
    }
    CronFlavor type;
    ZoneId zone;
    try {
      type = CronOptions.flavor("cronType", query.get("cronType"));
      zone = CronOptions.zone("zone", query.get("zone"));
    } catch (RejectionException e) {
      throw ApiException.rejected(e.reason(), e.getMessage());
    }
    long from = nowMs;
    if (query.containsKey("from")) {
      try {
        from = TimeArguments.instant(query.get("from")).toEpochMilli();
      } catch (IllegalArgumentException | ArithmeticException e) {
        throw ApiException.badRequest("BAD_TIME", "from: " + e.getMessage());
      }
    }
    CronSpec spec = CronOptions.unbounded(cron, type, zone);
    List<Occurrence> occurrences;
    try {
      occurrences = CronOccurrences.next(spec, from, count(query.get("count")), horizonMs);
    } catch (IllegalArgumentException e) {
      throw ApiException.badRequest("BAD_CRON", "cron: " + e.getMessage());
    }
    List<Object> listed = new ArrayList<>();
    for (Occurrence occurrence : occurrences) {
      Map<String, Object> json = new LinkedHashMap<>();
      json.put("at", Instant.ofEpochMilli(occurrence.atMs()).toString());
      json.put("atMs", occurrence.atMs());
      json.put("local", occurrence.local().toString());
      json.put("offset", occurrence.offset().getId());
      json.put(
          "transition",
          occurrence
              .transition()
              .map(t -> t.name().toLowerCase(Locale.ROOT).replace('_', '-'))
              .orElse(null));
      listed.add(json);
    }
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("cron", cron);
    body.put("cronType", type.wireName());
    body.put("zone", zone.getId());
    body.put("occurrences", listed);
    return ApiResponse.json(200, body);
  }

  private static int count(String text) {
    if (text == null || text.isEmpty()) {
      return DEFAULT_COUNT;
    }
    try {
      int count = Integer.parseInt(text);
      if (count >= 1 && count <= MAX_COUNT) {
        return count;
      }
    } catch (NumberFormatException e) {
      // Falls through to the error.
    }
    throw ApiException.badRequest(
        "BAD_REQUEST", "count: '" + text + "'; expected an integer from 1 to " + MAX_COUNT);
  }
}

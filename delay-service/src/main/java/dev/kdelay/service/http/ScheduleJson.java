package dev.kdelay.service.http;

import dev.kdelay.schemas.CronSpec;
import dev.kdelay.schemas.Schedule;
import dev.kdelay.schemas.StoredTaskSummary;
import dev.kdelay.schemas.Target;
import dev.kdelay.schemas.TenantIds;
import dev.kdelay.topology.ScheduleView;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.kafka.common.header.Header;

/**
 * The JSON the admin API answers with for a schedule and a pending task. Times come twice: as
 * ISO-8601 text for people and as epoch milliseconds for programs.
 */
final class ScheduleJson {

  /** How much of a payload one schedule's view shows. */
  static final int SHOWN_PAYLOAD_BYTES = 64 * 1_024;

  private ScheduleJson() {}

  /** A schedule's status, as {@code GET /schedules/{id}} answers. */
  static Map<String, Object> view(ScheduleView view) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("id", view.id());
    tenant(json, view.id());
    json.put("status", view.status().name().toLowerCase(Locale.ROOT));
    view.nextDueMs().ifPresent(due -> time(json, "nextDueAt", due));
    view.forgottenAtMs().ifPresent(at -> time(json, "forgottenAt", at));
    view.task()
        .ifPresent(
            task -> {
              task(json, view.id(), StoredTaskSummary.of(task));
              content(json, task.schedule());
            });
    return json;
  }

  /** The carried headers, and the payload's first {@value #SHOWN_PAYLOAD_BYTES} bytes. */
  private static void content(Map<String, Object> json, Schedule schedule) {
    Map<String, Object> headers = new LinkedHashMap<>();
    for (Header header : schedule.headers()) {
      headers.put(header.key(), BytesPreview.of(header.value(), Integer.MAX_VALUE));
    }
    json.put("headers", headers);
    json.put(
        "payload",
        schedule.payload() == null
            ? null
            : BytesPreview.of(schedule.payload(), SHOWN_PAYLOAD_BYTES));
  }

  /** A task in the listing of {@code GET /schedules}. */
  static Map<String, Object> pending(String id, long dueMs, StoredTaskSummary task) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("id", id);
    tenant(json, id);
    time(json, "dueAt", dueMs);
    task(json, id, task);
    return json;
  }

  private static void task(Map<String, Object> json, String id, StoredTaskSummary task) {
    json.put("target", target(id, task.target()));
    json.put("occurrence", task.occurrence());
    // A fire-rate limit deferred it: it fires at its due time above as the occurrence due then.
    task.deferredDueMs().ifPresent(due -> time(json, "deferredFrom", due));
    json.put("recurring", task.recurring());
    if (task.timing() instanceof CronSpec cron) {
      json.put("cron", cron(cron));
    }
    json.put(
        "payloadBytes",
        task.payloadBytes() == StoredTaskSummary.NO_PAYLOAD ? null : task.payloadBytes());
    json.put("carriedHeaders", task.headerCount());
  }

  /**
   * A tenant's schedule ({@link TenantIds}): its id stays in the qualified form kdelay keeps it in,
   * which a listing pages by, and {@code tenant} and {@code tenantId} say whose and which it is.
   */
  private static void tenant(Map<String, Object> json, String id) {
    TenantIds.split(id)
        .filter(split -> !split.tenant().isEmpty())
        .ifPresent(
            split -> {
              json.put("tenant", split.tenant());
              json.put("tenantId", split.id());
            });
  }

  private static Map<String, Object> target(String id, Target target) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("topic", target.topic());
    // Target keys arrive as header text, so they are UTF-8; absent means the schedule id.
    json.put(
        "key",
        target.key() == null
            ? TenantIds.idOf(id)
            : new String(target.key(), StandardCharsets.UTF_8));
    json.put("partition", target.partition().isPresent() ? target.partition().getAsInt() : null);
    return json;
  }

  private static Map<String, Object> cron(CronSpec cron) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("expression", cron.expression());
    json.put("cronType", cron.flavor().wireName());
    json.put("zone", cron.zone().getId());
    if (cron.startAtMs() != CronSpec.NO_START) {
      json.put("startAt", Instant.ofEpochMilli(cron.startAtMs()).toString());
    }
    if (cron.endAtMs() != CronSpec.NO_END) {
      json.put("endAt", Instant.ofEpochMilli(cron.endAtMs()).toString());
    }
    if (cron.maxFires() != CronSpec.UNLIMITED) {
      json.put("maxFires", cron.maxFires());
    }
    json.put("misfire", cron.misfire().wireName());
    return json;
  }

  private static void time(Map<String, Object> json, String name, long epochMs) {
    json.put(name, Instant.ofEpochMilli(epochMs).toString());
    json.put(name + "Ms", epochMs);
  }
}

package dev.kdelay.service.http;

import dev.kdelay.schemas.LogValues;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.schemas.StoredTaskSummary;
import dev.kdelay.topology.Decoded;
import dev.kdelay.topology.ReadableSchedules;
import dev.kdelay.topology.ScheduleView;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.HostInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads this instance's own schedule store of one partition for the admin API, through the
 * topology's typed reads ({@link ReadableSchedules}): one id's status, and a partition's share of a
 * page of pending tasks.
 *
 * <p>Stored bytes that cannot be decoded (a corrupt state store, or state written by a newer
 * kdelay) are {@link RejectionReason#UNREADABLE_TASK}, the code the fire punctuator dead-letters
 * such a task with when it comes due: a lookup answers 500 with it and the id; a listing leaves the
 * task out, lists it under {@code unreadable}, and goes on.
 */
final class LocalStores {

  private static final Logger log = LoggerFactory.getLogger(LocalStores.class);

  private static final String UNREADABLE = RejectionReason.UNREADABLE_TASK.name();

  /** Finds one partition's schedule store; Kafka Streams' interactive queries in service. */
  @FunctionalInterface
  interface Source {

    /**
     * @throws InvalidStateStoreException if the store cannot be queried now (the partition moves)
     */
    ReadableSchedules schedules(int partition);
  }

  /**
   * One partition's share of a page.
   *
   * @param tasks the pending tasks, in due order, at most the page's limit
   * @param unreadable the tasks left out because they cannot be decoded, in due order
   * @param stoppedAt null if the share is complete; else the last task it read (readable or not)
   *     before its byte budget stopped it: tasks after that one may be missing from it
   */
  record Share(List<ListedTask> tasks, List<ListedTask> unreadable, ListedTask stoppedAt) {}

  private final Source stores;
  private final HostInfo self;

  LocalStores(Source stores, HostInfo self) {
    this.stores = stores;
    this.self = self;
  }

  /**
   * {@code GET /schedules/{id}} for a partition this instance owns: 200 with the schedule, 404 with
   * status {@code unknown}, or 500 {@code UNREADABLE_TASK} if what is stored cannot be decoded.
   *
   * @throws ApiException 503 if the partition's store cannot be read now
   */
  ApiResponse view(String id, int partition) {
    Decoded<ScheduleView> decoded;
    try {
      decoded = stores.schedules(partition).view(id);
    } catch (InvalidStateStoreException e) {
      throw ApiException.unavailable(
          "partition " + partition + " cannot be read now: " + e.getMessage());
    }
    if (decoded instanceof Decoded.Unreadable<ScheduleView> unreadable) {
      return unreadable(id, partition, unreadable.error());
    }
    ScheduleView view = decoded.value();
    Map<String, Object> json = ScheduleJson.view(view);
    json.put("partition", partition);
    json.put("instance", instance());
    if (view.status() == ScheduleView.Status.UNKNOWN) {
      json.put(
          "message",
          "kdelay holds nothing for this id: never scheduled, a one-shot that fired longer ago"
              + " than delay.fired.retention.ms, a recurring schedule that ended, or a cancel"
              + " older than delay.cancel.retention.ms");
      return ApiResponse.json(404, json);
    }
    return ApiResponse.json(200, json);
  }

  private ApiResponse unreadable(String id, int partition, String error) {
    // The decoder's words stay in the log: the answer carries an id to find them.
    String errorId = UUID.randomUUID().toString();
    log.warn(
        "event=admin-unreadable-task error_id={} id={} partition={} error={}",
        errorId,
        LogValues.quote(id),
        partition,
        LogValues.quote(error));
    Map<String, Object> details = new LinkedHashMap<>();
    details.put("id", id);
    details.put("partition", partition);
    details.put("instance", instance());
    details.put("errorId", errorId);
    return ApiResponse.error(
        500,
        UNREADABLE,
        "what partition "
            + partition
            + " stores for this id cannot be decoded (the log has error_id "
            + errorId
            + "): the state store may be corrupt, or written by a newer kdelay. A task that"
            + " cannot be decoded is dead-lettered with its stored bytes as "
            + UNREADABLE
            + " when it comes due",
        details);
  }

  /**
   * A partition's share of a page of {@code GET /schedules}, reading at most about {@code maxBytes}
   * of stored tasks (at least one task).
   *
   * @throws InvalidStateStoreException if the partition's store cannot be read now
   */
  Share pending(int partition, PageRequest page, long maxBytes) {
    ReadableSchedules.Listing listing =
        stores
            .schedules(partition)
            .pending(page.afterDueMs(), page.afterId(), page.dueBeforeMs(), page.limit(), maxBytes);
    List<ListedTask> listed = new ArrayList<>();
    List<ListedTask> unreadable = new ArrayList<>();
    ListedTask last = null;
    for (ReadableSchedules.Listed task : listing.tasks()) {
      if (task.task() instanceof Decoded.Readable<StoredTaskSummary> readable) {
        last =
            new ListedTask(
                task.dueMs(),
                task.id(),
                ScheduleJson.pending(task.id(), task.dueMs(), readable.value()));
        if (page.matches(task.id(), readable.value().target().topic())) {
          listed.add(last);
        }
      } else {
        String error = ((Decoded.Unreadable<StoredTaskSummary>) task.task()).error();
        log.warn(
            "event=admin-unreadable-task id={} partition={} due={} error={}",
            LogValues.quote(task.id()),
            partition,
            task.dueMs(),
            LogValues.quote(error));
        last =
            new ListedTask(
                task.dueMs(), task.id(), unreadableJson(task.id(), task.dueMs(), error, partition));
        unreadable.add(last);
      }
    }
    // A filtered scan that read its limit may have left matches after its last task unread: it
    // says where it stopped, as a scan stopped by its byte budget does.
    boolean complete =
        listing.complete() && !(page.filtered() && listing.tasks().size() >= page.limit());
    return new Share(listed, unreadable, complete ? null : last);
  }

  private Map<String, Object> unreadableJson(String id, long dueMs, String error, int partition) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("id", id);
    json.put("dueAt", Instant.ofEpochMilli(dueMs).toString());
    json.put("dueAtMs", dueMs);
    json.put("partition", partition);
    json.put("instance", instance());
    json.put("error", UNREADABLE);
    json.put("message", error);
    return json;
  }

  private String instance() {
    return self.host() + ":" + self.port();
  }
}

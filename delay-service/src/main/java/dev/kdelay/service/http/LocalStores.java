package dev.kdelay.service.http;

import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.topology.DelayTopology;
import dev.kdelay.topology.LogValues;
import dev.kdelay.topology.PendingTask;
import dev.kdelay.topology.ScheduleStores;
import dev.kdelay.topology.ScheduleView;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.HostInfo;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads this instance's own stores of one partition for the admin API: one id's status, and a
 * partition's share of a page of pending tasks.
 *
 * <p>Stored bytes that cannot be decoded (a corrupt state store, or state written by a newer
 * kdelay) are {@link RejectionReason#UNREADABLE_TASK}, the code the fire punctuator dead-letters
 * such a task with when it comes due: a lookup answers 500 with it and the id; a listing leaves the
 * task out, lists it under {@code unreadable}, and goes on.
 */
final class LocalStores {

  private static final Logger log = LoggerFactory.getLogger(LocalStores.class);

  private static final String UNREADABLE = RejectionReason.UNREADABLE_TASK.name();

  /** Finds one partition's store of kdelay's; Kafka Streams' interactive queries in service. */
  @FunctionalInterface
  interface Source {

    /**
     * @throws InvalidStateStoreException if the store cannot be queried now (the partition moves)
     */
    ReadOnlyKeyValueStore<Bytes, byte[]> store(String name, int partition);
  }

  /**
   * One partition's share of a page.
   *
   * @param tasks the pending tasks, in due order, at most the page's limit
   * @param unreadable the tasks left out because they cannot be decoded, in due order
   */
  record Share(List<ListedTask> tasks, List<ListedTask> unreadable) {}

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
   * @throws ApiException 503 if the partition's stores cannot be read now
   */
  ApiResponse view(String id, int partition) {
    ScheduleView view;
    try {
      view =
          ScheduleStores.view(
              stores.store(DelayTopology.SCHEDULES_STORE, partition),
              stores.store(DelayTopology.TASKS_STORE, partition),
              id);
    } catch (InvalidStateStoreException e) {
      throw ApiException.unavailable(
          "partition " + partition + " cannot be read now: " + e.getMessage());
    } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
      // What the decoders of the schedules and task stores throw for bytes they cannot read.
      return unreadable(id, partition, e);
    }
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

  private ApiResponse unreadable(String id, int partition, RuntimeException e) {
    log.warn(
        "event=admin-unreadable-task id={} partition={} error={}",
        LogValues.quote(id),
        partition,
        LogValues.quote(e));
    Map<String, Object> details = new LinkedHashMap<>();
    details.put("id", id);
    details.put("partition", partition);
    details.put("instance", instance());
    return ApiResponse.error(
        500,
        UNREADABLE,
        "what partition "
            + partition
            + " stores for this id cannot be decoded ("
            + e
            + "): the state store may be corrupt, or written by a newer kdelay. A task that"
            + " cannot be decoded is dead-lettered with its stored bytes as "
            + UNREADABLE
            + " when it comes due",
        details);
  }

  /**
   * A partition's share of a page of {@code GET /schedules}.
   *
   * @throws InvalidStateStoreException if the partition's task store cannot be read now
   */
  Share pending(int partition, PageRequest page) {
    ReadableTaskStore tasks =
        new ReadableTaskStore(stores.store(DelayTopology.TASKS_STORE, partition));
    List<ListedTask> listed = new ArrayList<>();
    for (PendingTask task :
        ScheduleStores.pending(
            tasks, page.afterDueMs(), page.afterId(), page.dueBeforeMs(), page.limit())) {
      listed.add(new ListedTask(task.dueMs(), task.id(), ScheduleJson.pending(task)));
    }
    List<ListedTask> unreadable = new ArrayList<>();
    for (ReadableTaskStore.Unreadable task : tasks.unreadable()) {
      log.warn(
          "event=admin-unreadable-task id={} partition={} due={} error={}",
          LogValues.quote(task.id()),
          partition,
          task.dueMs(),
          LogValues.quote(task.error()));
      unreadable.add(new ListedTask(task.dueMs(), task.id(), unreadableJson(task, partition)));
    }
    return new Share(listed, unreadable);
  }

  private Map<String, Object> unreadableJson(ReadableTaskStore.Unreadable task, int partition) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("id", task.id());
    json.put("dueAt", Instant.ofEpochMilli(task.dueMs()).toString());
    json.put("dueAtMs", task.dueMs());
    json.put("partition", partition);
    json.put("instance", instance());
    json.put("error", UNREADABLE);
    json.put("message", task.error());
    return json;
  }

  private String instance() {
    return self.host() + ":" + self.port();
  }
}

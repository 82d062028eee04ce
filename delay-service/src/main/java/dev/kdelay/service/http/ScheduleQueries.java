package dev.kdelay.service.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kdelay.schemas.TenantIds;
import dev.kdelay.topology.DelayTopology;
import dev.kdelay.topology.ReadableSchedules;
import dev.kdelay.topology.ScheduleMove;
import dev.kdelay.topology.ScheduleStores;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyQueryMetadata;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.StreamsMetadata;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.state.HostInfo;

/**
 * Answers the admin API's reads from the stores of whichever instance holds the data, with Kafka
 * Streams' interactive queries.
 *
 * <ul>
 *   <li>One id: the instance that owns the id's partition (found with {@code queryMetadataForKey}
 *       on the id's UTF-8 bytes, the request key) reads its stores; any other instance forwards the
 *       request there.
 *   <li>Pending tasks: each instance scans its own schedule stores in due order, reading at most
 *       {@link #PAGE_BYTES} of stored tasks for a page, shared among its partitions; the instance
 *       asked merges its own page with every other instance's and checks that every partition
 *       answered. A share that stopped at its byte budget says where: the merge shows nothing after
 *       the earliest such stop, and the next page continues from what it showed, so large payloads
 *       make pages shorter, never skip or repeat a task. A task that cannot be decoded is left out
 *       and listed under {@code unreadable} on the page where it falls in due order.
 * </ul>
 *
 * <p>While partitions move (a rebalance, a restoration) an answer may be impossible; the caller
 * gets 503 and retries.
 */
public final class ScheduleQueries {

  /** Stored bytes one instance reads for a page, split among its partitions. */
  static final long PAGE_BYTES = 16L * 1024 * 1024;

  private final KafkaStreams streams;
  private final HostInfo self;
  private final int partitions;
  private final Peers peers;
  private final LocalStores local;

  public ScheduleQueries(KafkaStreams streams, HostInfo self, int partitions, Peers peers) {
    this.streams = streams;
    this.self = self;
    this.partitions = partitions;
    this.peers = peers;
    this.local = new LocalStores(this::schedules, self);
  }

  /** {@code GET /schedules/{id}}: 200 with the schedule, or 404 with status {@code unknown}. */
  ApiResponse view(String id, boolean forwarded) {
    KeyQueryMetadata owner;
    try {
      owner =
          streams.queryMetadataForKey(
              DelayTopology.SCHEDULES_STORE,
              id.getBytes(StandardCharsets.UTF_8),
              // the partition kdelay keeps the id on, a tenant's included (ScheduleMove.owner)
              (String topic, byte[] key, Object value, int count) ->
                  Optional.of(Set.of(ScheduleMove.owner(key, count))));
    } catch (IllegalStateException | StreamsException e) {
      throw ApiException.unavailable("Kafka Streams cannot locate the id now: " + e.getMessage());
    }
    if (owner == null
        || owner.equals(KeyQueryMetadata.NOT_AVAILABLE)
        || owner.activeHost().equals(HostInfo.unavailable())) {
      throw ApiException.unavailable("no instance owns the id's partition now (rebalancing)");
    }
    if (owner.activeHost().equals(self)) {
      return local.view(id, owner.partition());
    }
    if (forwarded) {
      throw ApiException.unavailable(
          "partition " + owner.partition() + " moved while the request was forwarded");
    }
    // A tenant's id travels as ?tenant=: an encoded U+0000 is no part of a path a server takes.
    String tenant = TenantIds.tenantOf(id);
    return peers.get(
        owner.activeHost(),
        tenant.isEmpty()
            ? "/schedules/" + pathSegment(id)
            : "/schedules/" + pathSegment(TenantIds.idOf(id)) + "?tenant=" + tenant);
  }

  /**
   * {@code GET /schedules}: one page of pending tasks in due order, across all instances; or, for a
   * forwarded request, this instance's share of it with the partitions it covers.
   */
  ApiResponse pending(PageRequest page, boolean forwarded) {
    Shares shares = new Shares();
    localPending(page, shares);
    if (forwarded) {
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("tasks", shares.listed.stream().map(ListedTask::json).toList());
      body.put("partitions", shares.covered);
      body.put("unreadable", shares.unreadable.stream().map(ListedTask::json).toList());
      if (shares.stoppedAt != null) {
        body.put(
            "stoppedAt", Map.of("dueAtMs", shares.stoppedAt.dueMs(), "id", shares.stoppedAt.id()));
      }
      return ApiResponse.json(200, body);
    }
    for (StreamsMetadata instance : instances()) {
      if (!instance.hostInfo().equals(self) && !instance.topicPartitions().isEmpty()) {
        remotePending(instance.hostInfo(), page, shares);
      }
    }
    if (shares.covered.size() < partitions) {
      Set<Integer> missing = new TreeSet<>();
      for (int partition = 0; partition < partitions; partition++) {
        if (!shares.covered.contains(partition)) {
          missing.add(partition);
        }
      }
      throw ApiException.unavailable(
          "partitions " + missing + " cannot be read now (rebalancing or restoring)");
    }
    return ApiResponse.json(200, page(page, shares.listed, shares.unreadable, shares.stoppedAt));
  }

  /** What the partitions' shares of a page hold together. */
  private static final class Shares {
    final List<ListedTask> listed = new ArrayList<>();
    final List<ListedTask> unreadable = new ArrayList<>();
    final Set<Integer> covered = new TreeSet<>();
    ListedTask stoppedAt; // the earliest point where a share stopped at its byte budget

    void stopped(ListedTask at) {
      if (at != null && (stoppedAt == null || ListedTask.DUE_ORDER.compare(at, stoppedAt) < 0)) {
        stoppedAt = at;
      }
    }
  }

  /**
   * The first {@code limit} tasks of all partitions' shares that are known complete (none after
   * {@code stoppedAt}, where a share stopped at its byte budget), and the unreadable tasks up to
   * where the page ends: those after it are met again by the next page's scans, which start there.
   *
   * @param stoppedAt the earliest task where a share stopped at its byte budget, or null
   */
  static Map<String, Object> page(
      PageRequest page,
      List<ListedTask> listed,
      List<ListedTask> unreadable,
      ListedTask stoppedAt) {
    listed.sort(ListedTask.DUE_ORDER);
    unreadable.sort(ListedTask.DUE_ORDER);
    List<ListedTask> complete =
        stoppedAt == null
            ? listed
            : listed.stream()
                .filter(task -> ListedTask.DUE_ORDER.compare(task, stoppedAt) <= 0)
                .toList();
    List<ListedTask> shown = complete.subList(0, Math.min(page.limit(), complete.size()));
    ListedTask end = shown.size() == page.limit() ? shown.get(shown.size() - 1) : stoppedAt;
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("tasks", shown.stream().map(ListedTask::json).toList());
    body.put("next", end == null ? null : PageRequest.cursorAfter(end.dueMs(), end.id()));
    List<Object> skipped =
        unreadable.stream()
            .filter(task -> end == null || ListedTask.DUE_ORDER.compare(task, end) <= 0)
            .map(ListedTask::json)
            .toList();
    if (!skipped.isEmpty()) {
      body.put("unreadable", skipped);
    }
    return body;
  }

  private void localPending(PageRequest page, Shares shares) {
    Set<Integer> partitions = localPartitions();
    long shareBytes = Math.max(1, PAGE_BYTES / Math.max(1, partitions.size()));
    for (int partition : partitions) {
      try {
        LocalStores.Share share = local.pending(partition, page, shareBytes);
        shares.listed.addAll(share.tasks());
        shares.unreadable.addAll(share.unreadable());
        shares.stopped(share.stoppedAt());
        shares.covered.add(partition);
      } catch (InvalidStateStoreException e) {
        // Not readable now: left out of the covered partitions, which the merge checks.
      }
    }
  }

  private void remotePending(HostInfo peer, PageRequest page, Shares shares) {
    ApiResponse response = peers.get(peer, "/schedules?" + page.toQuery());
    if (response.status() != 200) {
      throw ApiException.unavailable(
          "instance " + peer + " answered " + response.status() + ": " + response.bodyText());
    }
    try {
      JsonNode body = ApiResponse.MAPPER.readTree(response.body());
      for (JsonNode task : body.path("tasks")) {
        shares.listed.add(listed(task));
      }
      for (JsonNode task : body.path("unreadable")) {
        shares.unreadable.add(listed(task));
      }
      for (JsonNode partition : body.path("partitions")) {
        shares.covered.add(partition.asInt());
      }
      if (body.has("stoppedAt")) {
        shares.stopped(listed(body.path("stoppedAt")));
      }
    } catch (IOException e) {
      throw ApiException.unavailable("instance " + peer + " answered with bad JSON: " + e);
    }
  }

  private static ListedTask listed(JsonNode task) {
    return new ListedTask(task.path("dueAtMs").asLong(), task.path("id").asText(), task);
  }

  /** The partitions whose tasks run on this instance's stream threads. */
  private Set<Integer> localPartitions() {
    Set<Integer> local = new TreeSet<>();
    try {
      for (ThreadMetadata thread : streams.metadataForLocalThreads()) {
        thread.activeTasks().forEach(task -> local.add(task.taskId().partition()));
      }
    } catch (IllegalStateException | StreamsException e) {
      throw ApiException.unavailable("Kafka Streams is not running: " + e.getMessage());
    }
    return local;
  }

  private Collection<StreamsMetadata> instances() {
    try {
      return streams.metadataForAllStreamsClients();
    } catch (IllegalStateException | StreamsException e) {
      throw ApiException.unavailable("Kafka Streams is not running: " + e.getMessage());
    }
  }

  private ReadableSchedules schedules(int partition) {
    return streams.store(
        StoreQueryParameters.fromNameAndType(DelayTopology.SCHEDULES_STORE, ScheduleStores.type())
            .withPartition(partition));
  }

  /** An id as one percent-encoded path segment: {@code /} and spaces included. */
  static String pathSegment(String id) {
    return URLEncoder.encode(id, StandardCharsets.UTF_8).replace("+", "%20");
  }
}

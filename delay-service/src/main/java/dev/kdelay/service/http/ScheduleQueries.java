package dev.kdelay.service.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kdelay.topology.DelayTopology;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyQueryMetadata;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.StreamsMetadata;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.state.HostInfo;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * Answers the admin API's reads from the stores of whichever instance holds the data, with Kafka
 * Streams' interactive queries.
 *
 * <ul>
 *   <li>One id: the instance that owns the id's partition (found with {@code queryMetadataForKey}
 *       on the id's UTF-8 bytes, the request key) reads its stores; any other instance forwards the
 *       request there.
 *   <li>Pending tasks: each instance scans its own task stores in due order; the instance asked
 *       merges its own page with every other instance's and checks that every partition answered. A
 *       task that cannot be decoded is left out and listed under {@code unreadable} on the page
 *       where it falls in due order.
 * </ul>
 *
 * <p>While partitions move (a rebalance, a restoration) an answer may be impossible; the caller
 * gets 503 and retries.
 */
public final class ScheduleQueries {

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
    this.local = new LocalStores(this::store, self);
  }

  /** {@code GET /schedules/{id}}: 200 with the schedule, or 404 with status {@code unknown}. */
  ApiResponse view(String id, boolean forwarded) {
    KeyQueryMetadata owner;
    try {
      owner =
          streams.queryMetadataForKey(
              DelayTopology.SCHEDULES_STORE,
              id.getBytes(StandardCharsets.UTF_8),
              new ByteArraySerializer());
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
    return peers.get(owner.activeHost(), "/schedules/" + pathSegment(id));
  }

  /**
   * {@code GET /schedules}: one page of pending tasks in due order, across all instances; or, for a
   * forwarded request, this instance's share of it with the partitions it covers.
   */
  ApiResponse pending(PageRequest page, boolean forwarded) {
    List<ListedTask> listed = new ArrayList<>();
    List<ListedTask> unreadable = new ArrayList<>();
    Set<Integer> covered = new TreeSet<>();
    localPending(page, listed, unreadable, covered);
    if (forwarded) {
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("tasks", listed.stream().map(ListedTask::json).toList());
      body.put("partitions", covered);
      body.put("unreadable", unreadable.stream().map(ListedTask::json).toList());
      return ApiResponse.json(200, body);
    }
    for (StreamsMetadata instance : instances()) {
      if (!instance.hostInfo().equals(self) && !instance.topicPartitions().isEmpty()) {
        remotePending(instance.hostInfo(), page, listed, unreadable, covered);
      }
    }
    if (covered.size() < partitions) {
      Set<Integer> missing = new TreeSet<>();
      for (int partition = 0; partition < partitions; partition++) {
        if (!covered.contains(partition)) {
          missing.add(partition);
        }
      }
      throw ApiException.unavailable(
          "partitions " + missing + " cannot be read now (rebalancing or restoring)");
    }
    return ApiResponse.json(200, page(page, listed, unreadable));
  }

  /**
   * The first {@code limit} tasks of all partitions' shares, and the unreadable tasks up to the
   * last of them: those after it are met again by the next page's scans, which start after it.
   */
  static Map<String, Object> page(
      PageRequest page, List<ListedTask> listed, List<ListedTask> unreadable) {
    listed.sort(ListedTask.DUE_ORDER);
    unreadable.sort(ListedTask.DUE_ORDER);
    List<ListedTask> shown = listed.subList(0, Math.min(page.limit(), listed.size()));
    boolean more = shown.size() == page.limit();
    ListedTask last = more ? shown.get(shown.size() - 1) : null;
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("tasks", shown.stream().map(ListedTask::json).toList());
    body.put("next", more ? PageRequest.cursorAfter(last.dueMs(), last.id()) : null);
    List<Object> skipped =
        unreadable.stream()
            .filter(task -> !more || ListedTask.DUE_ORDER.compare(task, last) < 0)
            .map(ListedTask::json)
            .toList();
    if (!skipped.isEmpty()) {
      body.put("unreadable", skipped);
    }
    return body;
  }

  private void localPending(
      PageRequest page,
      List<ListedTask> listed,
      List<ListedTask> unreadable,
      Set<Integer> covered) {
    for (int partition : localPartitions()) {
      try {
        LocalStores.Share share = local.pending(partition, page);
        listed.addAll(share.tasks());
        unreadable.addAll(share.unreadable());
        covered.add(partition);
      } catch (InvalidStateStoreException e) {
        // Not readable now: left out of the covered partitions, which the merge checks.
      }
    }
  }

  private void remotePending(
      HostInfo peer,
      PageRequest page,
      List<ListedTask> listed,
      List<ListedTask> unreadable,
      Set<Integer> covered) {
    ApiResponse response = peers.get(peer, "/schedules?" + page.toQuery());
    if (response.status() != 200) {
      throw ApiException.unavailable(
          "instance " + peer + " answered " + response.status() + ": " + response.bodyText());
    }
    try {
      JsonNode body = ApiResponse.MAPPER.readTree(response.body());
      for (JsonNode task : body.path("tasks")) {
        listed.add(new ListedTask(task.path("dueAtMs").asLong(), task.path("id").asText(), task));
      }
      for (JsonNode task : body.path("unreadable")) {
        unreadable.add(
            new ListedTask(task.path("dueAtMs").asLong(), task.path("id").asText(), task));
      }
      for (JsonNode partition : body.path("partitions")) {
        covered.add(partition.asInt());
      }
    } catch (IOException e) {
      throw ApiException.unavailable("instance " + peer + " answered with bad JSON: " + e);
    }
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

  private ReadOnlyKeyValueStore<Bytes, byte[]> store(String name, int partition) {
    return streams.store(
        StoreQueryParameters.fromNameAndType(
                name, QueryableStoreTypes.<Bytes, byte[]>keyValueStore())
            .withPartition(partition));
  }

  /** An id as one percent-encoded path segment: {@code /} and spaces included. */
  static String pathSegment(String id) {
    return URLEncoder.encode(id, StandardCharsets.UTF_8).replace("+", "%20");
  }
}

package dev.kdelay.service;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kdelay.topology.DelayTopology;
import dev.kdelay.topology.PendingTask;
import dev.kdelay.topology.ScheduleStores;
import dev.kdelay.topology.ScheduleView;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
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
 *       merges its own page with every other instance's and checks that every partition answered.
 * </ul>
 *
 * <p>While partitions move (a rebalance, a restoration) an answer may be impossible; the caller
 * gets 503 and retries.
 */
final class ScheduleQueries {

  private final KafkaStreams streams;
  private final HostInfo self;
  private final int partitions;
  private final Peers peers;

  ScheduleQueries(KafkaStreams streams, HostInfo self, int partitions, Peers peers) {
    this.streams = streams;
    this.self = self;
    this.partitions = partitions;
    this.peers = peers;
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
      return localView(id, owner.partition());
    }
    if (forwarded) {
      throw ApiException.unavailable(
          "partition " + owner.partition() + " moved while the request was forwarded");
    }
    return peers.get(owner.activeHost(), "/schedules/" + pathSegment(id));
  }

  private ApiResponse localView(String id, int partition) {
    ScheduleView view;
    try {
      view =
          ScheduleStores.view(
              store(DelayTopology.SCHEDULES_STORE, partition),
              store(DelayTopology.TASKS_STORE, partition),
              id);
    } catch (InvalidStateStoreException e) {
      throw ApiException.unavailable(
          "partition " + partition + " cannot be read now: " + e.getMessage());
    }
    Map<String, Object> json = ScheduleJson.view(view);
    json.put("partition", partition);
    json.put("instance", self.host() + ":" + self.port());
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

  /**
   * {@code GET /schedules}: one page of pending tasks in due order, across all instances; or, for a
   * forwarded request, this instance's share of it with the partitions it covers.
   */
  ApiResponse pending(PageRequest page, boolean forwarded) {
    List<Listed> listed = new ArrayList<>();
    Set<Integer> covered = new TreeSet<>();
    localPending(page, listed, covered);
    if (forwarded) {
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("tasks", listed.stream().map(Listed::json).toList());
      body.put("partitions", covered);
      return ApiResponse.json(200, body);
    }
    for (StreamsMetadata instance : instances()) {
      if (!instance.hostInfo().equals(self) && !instance.topicPartitions().isEmpty()) {
        remotePending(instance.hostInfo(), page, listed, covered);
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
    listed.sort(Listed.ORDER);
    List<Listed> shown = listed.subList(0, Math.min(page.limit(), listed.size()));
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("tasks", shown.stream().map(Listed::json).toList());
    Listed last = shown.isEmpty() ? null : shown.get(shown.size() - 1);
    body.put(
        "next",
        shown.size() < page.limit() ? null : PageRequest.cursorAfter(last.dueMs(), last.id()));
    return ApiResponse.json(200, body);
  }

  private void localPending(PageRequest page, List<Listed> listed, Set<Integer> covered) {
    for (int partition : localPartitions()) {
      try {
        for (PendingTask task :
            ScheduleStores.pending(
                store(DelayTopology.TASKS_STORE, partition),
                page.afterDueMs(),
                page.afterId(),
                page.dueBeforeMs(),
                page.limit())) {
          listed.add(new Listed(task.dueMs(), task.id(), ScheduleJson.pending(task)));
        }
        covered.add(partition);
      } catch (InvalidStateStoreException e) {
        // Not readable now: left out of the covered partitions, which the merge checks.
      }
    }
  }

  private void remotePending(
      HostInfo peer, PageRequest page, List<Listed> listed, Set<Integer> covered) {
    ApiResponse response = peers.get(peer, "/schedules?" + page.toQuery());
    if (response.status() != 200) {
      throw ApiException.unavailable(
          "instance " + peer + " answered " + response.status() + ": " + response.bodyText());
    }
    try {
      JsonNode body = ApiResponse.MAPPER.readTree(response.body());
      for (JsonNode task : body.path("tasks")) {
        listed.add(new Listed(task.path("dueAtMs").asLong(), task.path("id").asText(), task));
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

  /** A listed task: its position in due order and its JSON, local (a map) or from a peer. */
  private record Listed(long dueMs, String id, Object json) {
    static final Comparator<Listed> ORDER =
        Comparator.comparingLong(Listed::dueMs).thenComparing(Listed::id, PendingTask::compareIds);
  }
}

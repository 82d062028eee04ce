package dev.kdelay.topology.internals;

import dev.kdelay.topology.internals.store.MeteredScheduleStore;
import dev.kdelay.topology.internals.store.RocksDBScheduleStore;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.api.RecordMetadata;

/**
 * The read-ahead of one task's intake: before a request is processed, the ids of the requests read
 * behind it in the same poll are looked up together, a few hundred at a time, not one by one (see
 * {@link RocksDBScheduleStore#readAhead}). Per input partition it keeps the offset the last
 * read-ahead reached, so that the next starts past it.
 *
 * <p>Runs on the stream thread only.
 */
public final class IntakeReadAhead {

  /** Ids of requests read that one read-ahead looks up at most. */
  public static final int READ_AHEAD = 512;

  private final MeteredScheduleStore store;
  private final TopicPartition requestsPartition;
  private final TopicPartition reroutePartition;
  private final List<TopicPartition> inputPartitions;
  private final Map<TopicPartition, Long> readAheadTo = new HashMap<>();

  /**
   * @param inputPartitions the task's partitions: of the request topic, of the reroute topic, then
   *     of the tenants' request topics
   */
  IntakeReadAhead(MeteredScheduleStore store, List<TopicPartition> inputPartitions) {
    this.store = store;
    this.requestsPartition = inputPartitions.get(0);
    this.reroutePartition = inputPartitions.get(1);
    this.inputPartitions = List.copyOf(inputPartitions);
  }

  /**
   * Looks up ahead the ids of the record at this position and the requests read behind it, when the
   * last read-ahead did not reach it; then forgets the record as unprocessed.
   */
  void beforeProcessing(RecordMetadata metadata) {
    TopicPartition partition = inputPartition(metadata);
    PolledRequests.Buffer polled = PolledRequests.ofThisThread();
    if (metadata.offset() > readAheadTo.getOrDefault(partition, -1L)) {
      PolledRequests.Ahead ahead = polled.ahead(partition, metadata.offset(), READ_AHEAD);
      if (!ahead.keys().isEmpty()) {
        store.readAhead(ahead.keys());
        readAheadTo.put(partition, ahead.lastOffset());
      }
    }
    polled.processed(partition, metadata.offset());
  }

  /** Records of this task read before it (re)started, or left when it closes, are not its own. */
  void forget() {
    readAheadTo.clear();
    PolledRequests.Buffer polled = PolledRequests.ofThisThread();
    for (TopicPartition partition : inputPartitions) {
      polled.forget(partition);
    }
  }

  /** The input partition a record was read from; the task's own two are kept. */
  private TopicPartition inputPartition(RecordMetadata metadata) {
    if (metadata.partition() == requestsPartition.partition()) {
      if (requestsPartition.topic().equals(metadata.topic())) {
        return requestsPartition;
      }
      if (reroutePartition.topic().equals(metadata.topic())) {
        return reroutePartition;
      }
    }
    return new TopicPartition(metadata.topic(), metadata.partition());
  }
}

package dev.kdelay.topology.internals;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.Rejection;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.topology.DelayMetrics;
import dev.kdelay.topology.ScheduleMove;
import dev.kdelay.topology.internals.delivery.Causes;
import dev.kdelay.topology.internals.delivery.Delivery;
import dev.kdelay.topology.internals.delivery.DeliveryQuarantine;
import dev.kdelay.topology.internals.delivery.OutputRecords;
import dev.kdelay.topology.internals.delivery.Sinks;
import dev.kdelay.topology.internals.store.ScheduleEntry;
import java.util.Optional;
import java.util.function.Predicate;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;

/**
 * Where a request belongs: the partition its id hashes to. A request a client with another
 * partitioner sent elsewhere, one whose id has a write held, and one waiting for its target topic
 * all go through the reroute topic, which is co-partitioned with the request topic; requests for an
 * id apply in the order of their timestamps whichever way they came ({@link RequestTimestamps}).
 *
 * <p>Runs on the stream thread only.
 */
final class Rerouting {

  private final ProcessorContext<Object, Object> context;
  private final Predicate<String> isRequestsTopic;
  private final String rerouteTopic;
  private final int requestsPartitions;
  private final DeliveryQuarantine quarantine;
  private final DelayMetrics metrics;

  Rerouting(
      ProcessorContext<Object, Object> context,
      Predicate<String> isRequestsTopic,
      String rerouteTopic,
      int requestsPartitions,
      DeliveryQuarantine quarantine,
      DelayMetrics metrics) {
    this.context = context;
    this.isRequestsTopic = isRequestsTopic;
    this.rerouteTopic = rerouteTopic;
    this.requestsPartitions = requestsPartitions;
    this.quarantine = quarantine;
    this.metrics = metrics;
  }

  /**
   * Whether the record sits on another partition than the one its id hashes to: a client with
   * another partitioner (librdkafka's default is not murmur2) sent it. Requests for one id must
   * meet in one place, so it moves there.
   */
  boolean misrouted(Record<byte[], byte[]> record) {
    if (record.key() == null || requestsPartitions <= 1) {
      return false;
    }
    Optional<RecordMetadata> metadata = context.recordMetadata();
    if (metadata.isEmpty() || !isRequestsTopic.test(metadata.get().topic())) {
      return false;
    }
    int owner = ScheduleMove.owner(record.key(), requestsPartitions);
    return owner != metadata.get().partition();
  }

  /**
   * Forwards a request to the partition its id hashes to, unless the producer refused that once
   * already: the reroute topic will not take it. The copy is stamped with the time it is written,
   * which no topic's timestamp limits refuse (a backlog of old requests would otherwise be), and
   * carries the request's own timestamp in {@code delay-requested-at}, which its owner reads it by
   * ({@link RequestTimestamps}).
   *
   * @param waiting the {@link TopicWaits#HEADER} the copy carries, or null
   * @return why it was not forwarded (the caller dead-letters it), or empty if it was
   */
  Optional<Rejection> forward(Record<byte[], byte[]> record, long now, byte[] waiting) {
    Headers headers = new RecordHeaders(record.headers().toArray());
    headers.remove(DelayHeaders.REQUESTED_AT);
    headers.remove(TaskFence.HEADER); // a request's own would make its copy read back as a fence
    headers.remove(TopicWaits.HEADER);
    if (waiting != null) {
      headers.add(TopicWaits.HEADER, waiting);
    }
    headers.add(DelayHeaders.REQUESTED_AT, OutputRecords.utf8(Long.toString(record.timestamp())));
    Record<byte[], byte[]> copy = record.withTimestamp(now).withHeaders(headers);
    if (!quarantine.isEmpty()) {
      Optional<DeliveryQuarantine.Refusal> refused =
          quarantine.refusal(Causes.rerouted(copy.key(), copy.value(), headers));
      if (refused.isPresent()) {
        return Optional.of(
            new Rejection(
                RejectionReason.UNDELIVERABLE,
                "the reroute topic refused this request: " + refused.get().error()));
      }
    }
    context.forward(copy, Sinks.REROUTE);
    if (waiting == null) {
      Delivery.afterward(metrics::requestRerouted);
    }
    return Optional.empty();
  }

  /** Where a request was read, and what it is: ties between requests for an id are told by it. */
  ScheduleEntry.Origin originOf(Record<byte[], byte[]> record) {
    Optional<RecordMetadata> metadata = context.recordMetadata();
    byte source = ScheduleEntry.Origin.NONE;
    if (metadata.isPresent() && isRequestsTopic.test(metadata.get().topic())) {
      source = ScheduleEntry.Origin.REQUESTS;
    } else if (metadata.isPresent() && rerouteTopic.equals(metadata.get().topic())) {
      source = ScheduleEntry.Origin.REROUTED;
    }
    return new ScheduleEntry.Origin(
        source, RequestDigest.of(record.key(), record.value(), record.headers()));
  }

  /** Whether the record being processed was read from the reroute topic. */
  boolean fromRerouteTopic() {
    return context
        .recordMetadata()
        .map(metadata -> rerouteTopic.equals(metadata.topic()))
        .orElse(false);
  }
}

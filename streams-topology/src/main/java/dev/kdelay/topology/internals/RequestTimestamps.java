package dev.kdelay.topology.internals;

import dev.kdelay.schemas.DelayHeaders;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.streams.processor.TimestampExtractor;

/**
 * The timestamp of a request record: its own; for a request kdelay forwarded to the reroute topic,
 * the original's, which the copy carries in {@code delay-requested-at}; and for a record without
 * one (-1, as clients that predate record timestamps write), the time kdelay reads it.
 *
 * <p>Kafka Streams' default extractor fails the stream thread on a negative timestamp, so one such
 * record on the request topic stopped its partition for good; and an extractor that returns a
 * negative value makes Kafka Streams drop the record, a request lost without a word. A request
 * without a timestamp counts as stamped when it is read, as does one stamped too far ahead (see
 * {@code delay.max.clock.skew.ms}): its {@code delay-after} counts from then.
 */
public final class RequestTimestamps implements TimestampExtractor {

  private final String rerouteTopic;

  /**
   * @param rerouteTopic the topic whose records carry the timestamp of the request they copy
   */
  public RequestTimestamps(String rerouteTopic) {
    this.rerouteTopic = rerouteTopic;
  }

  @Override
  public long extract(ConsumerRecord<Object, Object> record, long partitionTime) {
    long timestamp = record.timestamp();
    if (rerouteTopic.equals(record.topic())) {
      long original = requestedAt(record.headers().lastHeader(DelayHeaders.REQUESTED_AT));
      if (original >= 0) {
        timestamp = original;
      }
    }
    return timestamp >= 0 ? timestamp : System.currentTimeMillis();
  }

  /**
   * The timestamp a reroute copy carries, or -1 if it carries none (written by an older kdelay).
   */
  private static long requestedAt(Header header) {
    if (header == null || header.value() == null) {
      return -1;
    }
    try {
      return Long.parseLong(new String(header.value(), StandardCharsets.UTF_8));
    } catch (NumberFormatException e) {
      return -1;
    }
  }
}

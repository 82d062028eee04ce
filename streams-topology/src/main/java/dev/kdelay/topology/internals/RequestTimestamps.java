package dev.kdelay.topology.internals;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.LogValues;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.streams.processor.TimestampExtractor;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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

  private static final Logger log = LoggerFactory.getLogger(RequestTimestamps.class);

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
  public static long requestedAt(Header header) {
    if (header == null || header.value() == null) {
      return -1;
    }
    try {
      return Long.parseLong(new String(header.value(), StandardCharsets.UTF_8));
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /**
   * The time a request counts as stamped: its record timestamp, unless that lies further ahead of
   * kdelay's clock than {@code delay.max.clock.skew.ms}. Requests for an id apply in timestamp
   * order, so one from a producer whose clock runs years ahead would pin the id: no cancel or
   * replacement stamped by a correct clock could overtake it.
   */
  static long counted(Record<byte[], byte[]> record, long now, long maxClockSkewMs) {
    if (record.timestamp() - now <= maxClockSkewMs) {
      return record.timestamp();
    }
    if (log.isDebugEnabled()) {
      log.debug(
          "event=clock-skew id={} stamped={} now={} counted_as={}",
          LogValues.quote(
              record.key() == null ? null : new String(record.key(), StandardCharsets.UTF_8)),
          record.timestamp(),
          now,
          now);
    }
    return now;
  }
}

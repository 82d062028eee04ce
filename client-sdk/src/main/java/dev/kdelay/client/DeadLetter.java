package dev.kdelay.client;

import static java.util.Objects.requireNonNull;

import dev.kdelay.schemas.DelayHeaders;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;

/**
 * A record of kdelay's dead-letter topic: a request it could not honour, or a task it could not
 * deliver, with the reason.
 *
 * <p>A dead letter keeps the request's key, value and headers, and adds {@code delay-error} (a
 * stable code such as {@code UNKNOWN_TOPIC}) and {@code delay-error-message}. A task that came due
 * but could not be delivered ({@code UNDELIVERABLE}) is dead-lettered as its fired record: the
 * fired key and payload, with {@code delay-id} naming the schedule. One too large for the
 * dead-letter topic says in {@code delay-error-omitted} what was left out.
 *
 * <pre>{@code
 * DeadLetter letter = DeadLetter.from(consumerRecord);
 * if (letter.code().equals("UNKNOWN_TOPIC")) {
 *   client.replay(letter, Replay.asIs().targetTopic("orders.timeouts")).join();
 * }
 * }</pre>
 */
public final class DeadLetter {

  private final String topic;
  private final int partition;
  private final long offset;
  private final long timestamp;
  private final byte[] key;
  private final byte[] value;
  private final List<Header> headers;

  private DeadLetter(
      String topic,
      int partition,
      long offset,
      long timestamp,
      byte[] key,
      byte[] value,
      List<Header> headers) {
    this.topic = topic;
    this.partition = partition;
    this.offset = offset;
    this.timestamp = timestamp;
    this.key = key;
    this.value = value;
    this.headers = List.copyOf(headers);
  }

  /**
   * Reads a record of the dead-letter topic.
   *
   * @param record the record as consumed with byte-array deserializers
   * @return the dead letter
   */
  public static DeadLetter from(ConsumerRecord<byte[], byte[]> record) {
    requireNonNull(record, "record cannot be null");
    List<Header> headers = new ArrayList<>();
    record.headers().forEach(header -> headers.add(new RecordHeader(header.key(), header.value())));
    return new DeadLetter(
        record.topic(),
        record.partition(),
        record.offset(),
        record.timestamp(),
        record.key(),
        record.value(),
        headers);
  }

  /** The dead-letter topic. */
  public String topic() {
    return topic;
  }

  public int partition() {
    return partition;
  }

  public long offset() {
    return offset;
  }

  /**
   * The record's timestamp: when kdelay wrote the dead letter. (Earlier versions of kdelay stamped
   * it with the request's own timestamp, or the due time of a task that fired.)
   */
  public long timestamp() {
    return timestamp;
  }

  /**
   * The timestamp of the request the dead letter holds ({@code delay-requested-at}), which a replay
   * sends again; for a dead letter without that header (a task that came due, or one written by an
   * earlier kdelay), the record's own timestamp.
   */
  public long requestTimestamp() {
    return text(DelayHeaders.REQUESTED_AT)
        .flatMap(
            value -> {
              try {
                return Optional.of(Long.parseLong(value));
              } catch (NumberFormatException e) {
                return Optional.empty();
              }
            })
        .orElse(timestamp);
  }

  /** The record key; null if there was none or it was left out. */
  public byte[] key() {
    return key;
  }

  /** The record value: the request's payload; null for a tombstone or if it was left out. */
  public byte[] value() {
    return value;
  }

  /** Every header, in order, kdelay's {@code delay-error*} headers included. */
  public List<Header> headers() {
    return headers;
  }

  /** The rejection code, such as {@code UNKNOWN_TOPIC}; empty if the record is no dead letter. */
  public String code() {
    return text(DelayHeaders.ERROR).orElse("");
  }

  /** What was wrong, naming the header and the value. */
  public String message() {
    return text(DelayHeaders.ERROR_MESSAGE).orElse("");
  }

  /** What was left out to fit the dead-letter topic, such as {@code value (1048600 bytes)}. */
  public Optional<String> omitted() {
    return text(DelayHeaders.ERROR_OMITTED);
  }

  /**
   * The id of the schedule the dead letter is about: {@code delay-id} where kdelay wrote one (a
   * task that came due), else the request's key; empty if neither is there.
   */
  public Optional<String> scheduleId() {
    Optional<String> id = text(DelayHeaders.ID);
    if (id.isPresent()) {
      return id;
    }
    return key == null || key.length == 0
        ? Optional.empty()
        : Optional.of(new String(key, StandardCharsets.UTF_8));
  }

  /** The last value of a header as UTF-8 text. */
  public Optional<String> text(String header) {
    for (int i = headers.size() - 1; i >= 0; i--) {
      Header candidate = headers.get(i);
      if (candidate.key().equals(header)) {
        return Optional.ofNullable(candidate.value())
            .map(bytes -> new String(bytes, StandardCharsets.UTF_8));
      }
    }
    return Optional.empty();
  }

  @Override
  public String toString() {
    return "DeadLetter{"
        + topic
        + "-"
        + partition
        + "@"
        + offset
        + ", code="
        + code()
        + ", id="
        + scheduleId().orElse("?")
        + "}";
  }
}

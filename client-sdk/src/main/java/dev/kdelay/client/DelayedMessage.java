package dev.kdelay.client;

import static dev.kdelay.client.WireFormat.scheduleId;
import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

import dev.kdelay.schemas.Action;
import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.TopicNames;
import dev.kdelay.schemas.WireText;
import dev.kdelay.schemas.WireTimes;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.StringJoiner;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * A schedule request: deliver a payload to a target topic at a due time, once ({@link
 * Builder#fireAt fireAt}, {@link Builder#after after}) or on a {@link Builder#cron cron} schedule.
 * Immutable; send it with {@link DelayClient#schedule(DelayedMessage)}.
 *
 * <pre>{@code
 * DelayedMessage reminder =
 *     DelayedMessage.builder("invoice-7-reminder", "reminders")
 *         .fireAt(Instant.parse("2026-03-01T09:00:00Z"))
 *         .targetKey("customer-12")
 *         .payload("{\"invoice\":7}")
 *         .header("traceparent", traceparent)
 *         .build();
 * }</pre>
 *
 * <p>The id is the request's key: sending another message with the same id replaces the schedule.
 */
public final class DelayedMessage {

  private final String id;
  private final byte[] key;
  private final String targetTopic;
  private final Instant fireAt;
  private final Duration after;
  private final CronSchedule cron;
  private final String targetKey;
  private final Integer targetPartition;
  private final byte[] payload;
  private final List<Header> headers;
  private final Instant requestTimestamp;

  private DelayedMessage(Builder builder) {
    this.id = builder.id;
    this.key = builder.key;
    this.targetTopic = builder.targetTopic;
    this.fireAt = builder.fireAt;
    this.after = builder.after;
    this.cron = builder.cron;
    this.targetKey = builder.targetKey;
    this.targetPartition = builder.targetPartition;
    this.payload = builder.payload;
    this.headers = List.copyOf(builder.headers);
    this.requestTimestamp = builder.requestTimestamp;
  }

  /**
   * Starts building a message.
   *
   * @param id the schedule id: the request's key, 1..1024 bytes of UTF-8
   * @param targetTopic the topic the payload is delivered to
   * @return a builder; set one of {@code fireAt}, {@code after} or {@code cron}, and a payload or
   *     {@code tombstone()}
   * @throws NullPointerException if {@code id} or {@code targetTopic} is null
   * @throws IllegalArgumentException if {@code id} is empty, longer than 1024 UTF-8 bytes or not
   *     well-formed Unicode, or {@code targetTopic} is not a legal topic name
   */
  public static Builder builder(String id, String targetTopic) {
    return new Builder(id, targetTopic);
  }

  /**
   * The schedule id.
   *
   * @return the id
   */
  public String id() {
    return id;
  }

  /**
   * The topic the payload is delivered to.
   *
   * @return the target topic
   */
  public String targetTopic() {
    return targetTopic;
  }

  /**
   * The absolute due time of a one-shot message.
   *
   * @return the due time, or empty unless built with {@link Builder#fireAt}
   */
  public Optional<Instant> fireAt() {
    return Optional.ofNullable(fireAt);
  }

  /**
   * The delay of a one-shot message, counted from the request record's timestamp.
   *
   * @return the delay, or empty unless built with {@link Builder#after}
   */
  public Optional<Duration> after() {
    return Optional.ofNullable(after);
  }

  /**
   * The recurring schedule.
   *
   * @return the cron schedule, or empty unless built with {@link Builder#cron}
   */
  public Optional<CronSchedule> cron() {
    return Optional.ofNullable(cron);
  }

  /**
   * The key of the fired record.
   *
   * @return the target key, or empty if the fired record is keyed by the schedule id
   */
  public Optional<String> targetKey() {
    return Optional.ofNullable(targetKey);
  }

  /**
   * The partition of the fired record.
   *
   * @return the partition, or empty if Kafka's default partitioner picks it from the target key
   */
  public OptionalInt targetPartition() {
    return targetPartition == null ? OptionalInt.empty() : OptionalInt.of(targetPartition);
  }

  /**
   * The payload, delivered byte for byte as the fired record's value.
   *
   * @return a copy of the payload, or null if this is a {@linkplain #isTombstone() tombstone}
   */
  public byte[] payload() {
    return payload == null ? null : payload.clone();
  }

  /**
   * Whether the fired record has a null value: a delayed delete of the target key.
   *
   * @return true if built with {@link Builder#tombstone()}
   */
  public boolean isTombstone() {
    return payload == null;
  }

  /**
   * The headers carried to the fired record, in order.
   *
   * @return copies of the carried headers
   */
  public List<Header> headers() {
    List<Header> copies = new ArrayList<>(headers.size());
    for (Header header : headers) {
      copies.add(new CarriedHeader(header.key(), copy(header.value())));
    }
    return copies;
  }

  /**
   * The request record: key the id, value the payload, then the request headers (action, target,
   * time) followed by the carried headers in order.
   */
  ProducerRecord<byte[], byte[]> toRequest(String requestsTopic) {
    // The payload array is shared with the record, not copied: this message never changes it
    // and the producer only reads it.
    ProducerRecord<byte[], byte[]> record =
        new ProducerRecord<>(
            requestsTopic,
            null,
            requestTimestamp == null ? null : requestTimestamp.toEpochMilli(),
            key,
            payload);
    Headers out = record.headers();
    // An explicit action is what tells kdelay that a null value is a tombstone to deliver,
    // not a cancel.
    out.add(DelayHeaders.ACTION, WireText.of(Action.SCHEDULE.wireName()));
    out.add(DelayHeaders.TARGET_TOPIC, WireText.of(targetTopic));
    if (targetKey != null) {
      out.add(DelayHeaders.TARGET_KEY, WireText.of(targetKey));
    }
    if (targetPartition != null) {
      out.add(DelayHeaders.TARGET_PARTITION, WireText.of(targetPartition));
    }
    if (fireAt != null) {
      out.add(DelayHeaders.FIRE_AT, WireText.of(fireAt.toEpochMilli()));
    }
    if (after != null) {
      out.add(DelayHeaders.AFTER, WireText.of(after.toMillis()));
    }
    if (cron != null) {
      cron.addTo(out);
    }
    headers.forEach(out::add);
    return record;
  }

  @Override
  public String toString() {
    StringJoiner fields = new StringJoiner(", ", "DelayedMessage{", "}");
    fields.add("id='" + id + "'").add("targetTopic='" + targetTopic + "'");
    fireAt().ifPresent(at -> fields.add("fireAt=" + at));
    after().ifPresent(delay -> fields.add("after=" + delay));
    cron().ifPresent(schedule -> fields.add("cron=" + schedule));
    targetKey().ifPresent(k -> fields.add("targetKey='" + k + "'"));
    targetPartition().ifPresent(p -> fields.add("targetPartition=" + p));
    fields.add(payload == null ? "tombstone" : "payload=" + payload.length + " bytes");
    fields.add("headers=" + headers.size());
    return fields.toString();
  }

  private static byte[] copy(byte[] bytes) {
    return bytes == null ? null : bytes.clone();
  }

  /** A header to carry; a record's accessors are exactly {@link Header}'s. */
  private record CarriedHeader(String key, byte[] value) implements Header {}

  /**
   * Builds a {@link DelayedMessage}. Set exactly one of {@link #fireAt}, {@link #after} and {@link
   * #cron}, and either a payload or {@link #tombstone()}. Setting the same option twice keeps the
   * last value. Not thread-safe.
   */
  public static final class Builder {

    private final String id;
    private final byte[] key;
    private final String targetTopic;
    private Instant fireAt;
    private Duration after;
    private CronSchedule cron;
    private String targetKey;
    private Integer targetPartition;
    private byte[] payload;
    private boolean payloadSet;
    private final List<Header> headers = new ArrayList<>();
    private Instant requestTimestamp;

    private Builder(String id, String targetTopic) {
      this.key = scheduleId(id);
      this.id = id;
      this.targetTopic = TopicNames.requireLegal(targetTopic, "targetTopic");
    }

    /**
     * Fires once at an absolute time. A time in the past fires at once. Written as epoch
     * milliseconds; anything finer is dropped.
     *
     * @param dueAt the due time
     * @return this builder
     * @throws NullPointerException if {@code dueAt} is null
     * @throws IllegalArgumentException if {@code dueAt} is outside the range of epoch milliseconds
     */
    public Builder fireAt(Instant dueAt) {
      this.fireAt = WireTimes.requireEpochMillis(dueAt, "dueAt");
      return this;
    }

    /**
     * Fires once after a delay. kdelay counts it from the request record's timestamp (when it was
     * produced), not from when kdelay reads it. Written as milliseconds; anything finer is dropped.
     *
     * @param delay the delay
     * @return this builder
     * @throws NullPointerException if {@code delay} is null
     * @throws IllegalArgumentException if {@code delay} is negative or does not fit in a long of
     *     milliseconds
     */
    public Builder after(Duration delay) {
      this.after = WireTimes.requireMillis(delay, "delay");
      return this;
    }

    /**
     * Fires on a recurring schedule.
     *
     * @param cron the cron schedule
     * @return this builder
     * @throws NullPointerException if {@code cron} is null
     */
    public Builder cron(CronSchedule cron) {
      this.cron = requireNonNull(cron, "cron cannot be null");
      return this;
    }

    /**
     * Keys the fired record with the given bytes instead of the schedule id. Header values are
     * UTF-8 text on the wire, so the bytes must be well-formed UTF-8.
     *
     * @param targetKey the key of the fired record
     * @return this builder
     * @throws NullPointerException if {@code targetKey} is null
     * @throws IllegalArgumentException if {@code targetKey} is not well-formed UTF-8
     */
    public Builder targetKey(byte[] targetKey) {
      requireNonNull(targetKey, "targetKey cannot be null");
      this.targetKey = WireText.requireDecoded(targetKey, "targetKey");
      return this;
    }

    /**
     * Keys the fired record with the UTF-8 bytes of the given text instead of the schedule id.
     *
     * @param targetKey the key of the fired record
     * @return this builder
     * @throws NullPointerException if {@code targetKey} is null
     * @throws IllegalArgumentException if {@code targetKey} is not well-formed Unicode
     */
    public Builder targetKey(String targetKey) {
      requireNonNull(targetKey, "targetKey cannot be null");
      WireText.requireEncoded(targetKey, "targetKey");
      this.targetKey = targetKey;
      return this;
    }

    /**
     * Writes the fired record to the given partition instead of letting Kafka's default partitioner
     * pick one from the target key.
     *
     * @param partition the partition of the target topic
     * @return this builder
     * @throws IllegalArgumentException if {@code partition} is negative
     */
    public Builder targetPartition(int partition) {
      if (partition < 0) {
        throw new IllegalArgumentException("partition must not be negative, got " + partition);
      }
      this.targetPartition = partition;
      return this;
    }

    /**
     * Delivers these bytes as the fired record's value. The array is copied.
     *
     * @param payload the payload; use {@link #tombstone()} for a null value
     * @return this builder
     * @throws NullPointerException if {@code payload} is null
     */
    public Builder payload(byte[] payload) {
      requireNonNull(payload, "payload cannot be null; use tombstone() for a delayed delete");
      this.payload = payload.clone();
      this.payloadSet = true;
      return this;
    }

    /**
     * Delivers the UTF-8 bytes of this text as the fired record's value.
     *
     * @param payload the payload; use {@link #tombstone()} for a null value
     * @return this builder
     * @throws NullPointerException if {@code payload} is null
     */
    public Builder payload(String payload) {
      requireNonNull(payload, "payload cannot be null; use tombstone() for a delayed delete");
      this.payload = payload.getBytes(UTF_8);
      this.payloadSet = true;
      return this;
    }

    /**
     * Delivers a null value: a delayed delete of the target key in a compacted topic. The request
     * carries an explicit {@code delay-action: schedule}, which is what tells kdelay this null
     * value is not a cancel.
     *
     * @return this builder
     */
    public Builder tombstone() {
      this.payload = null;
      this.payloadSet = true;
      return this;
    }

    /**
     * Adds a header to carry to the fired record, after those added before; trace context such as
     * {@code traceparent} survives this way. A name may be added more than once. The value is
     * copied.
     *
     * @param name the header name
     * @param value the header value, may be null
     * @return this builder
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is a kdelay request header or a header
     *     kdelay writes on fired records (see {@link DelayHeaders#isCarried(String)})
     */
    public Builder header(String name, byte[] value) {
      requireNonNull(name, "name cannot be null");
      if (!DelayHeaders.isCarried(name)) {
        throw new IllegalArgumentException(
            "header name '" + name + "' is reserved by kdelay and cannot be carried");
      }
      headers.add(new CarriedHeader(name, copy(value)));
      return this;
    }

    /**
     * Stamps the request record with this time instead of when it is sent. kdelay orders the
     * requests for one id by their timestamps: a request stamped no newer than the one that fired
     * the id is dead-lettered {@code SUPERSEDED}. So a request sent again with the same stamp,
     * after a restart for instance, schedules once. A stamp more than {@code
     * delay.max.clock.skew.ms} ahead of kdelay's clock counts as the time kdelay reads it.
     *
     * @param timestamp the request record's timestamp
     * @return this builder
     * @throws NullPointerException if {@code timestamp} is null
     */
    public Builder requestTimestamp(Instant timestamp) {
      this.requestTimestamp = requireNonNull(timestamp, "timestamp cannot be null");
      return this;
    }

    /**
     * Builds the message.
     *
     * @return the message
     * @throws IllegalStateException if not exactly one of {@code fireAt}, {@code after} and {@code
     *     cron} was set, or neither a payload nor {@code tombstone()} was
     */
    public DelayedMessage build() {
      List<String> times = new ArrayList<>(3);
      if (fireAt != null) {
        times.add("fireAt");
      }
      if (after != null) {
        times.add("after");
      }
      if (cron != null) {
        times.add("cron");
      }
      if (times.size() != 1) {
        throw new IllegalStateException(
            "exactly one of fireAt, after and cron must be set for '"
                + id
                + "', got "
                + (times.isEmpty() ? "none" : String.join(" and ", times)));
      }
      if (!payloadSet) {
        throw new IllegalStateException(
            "a payload must be set for '" + id + "', or tombstone() for a delayed delete");
      }
      return new DelayedMessage(this);
    }
  }
}

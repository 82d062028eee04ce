package dev.kdelay.client.retry;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

import dev.kdelay.client.DelayClient;
import dev.kdelay.client.DelayedMessage;
import dev.kdelay.client.retry.RetryOutcome.DeadLettered;
import dev.kdelay.client.retry.RetryOutcome.Retried;
import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.TopicNames;
import dev.kdelay.schemas.WireText;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serializer;

/**
 * Retries a record a consumer failed on, later, through kdelay, without blocking its partition: the
 * record is scheduled back to its topic (or a retry topic) after the {@link RetryPolicy}'s delay,
 * and after the last attempt, or for an exception the policy does not retry, written to a
 * dead-letter topic.
 *
 * <pre>{@code
 * Producer<byte[], byte[]> producer = new KafkaProducer<>(producerConfig,
 *     new ByteArraySerializer(), new ByteArraySerializer());
 * RetryHandler retries =
 *     RetryHandler.builder(producer, "payments")          // the consumer group
 *         .requestsTopic("delay-requests")
 *         .policy(RetryPolicy.builder().maxAttempts(5).initialDelay(Duration.ofSeconds(2)).build())
 *         .deadLetterTopic("payments.dlt")
 *         .build();
 *
 * while (running) {
 *   for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(100))) {
 *     try {
 *       pay(record);
 *     } catch (Exception e) {
 *       retries.handle(record, e).join();   // sent before the offset is committed
 *     }
 *   }
 *   consumer.commitSync();
 * }
 * }</pre>
 *
 * <p>The retried record has the failed record's key, value and headers, plus the {@link
 * RetryHeaders}: which attempt failed, when the first did, where the record was first consumed, and
 * the exception's class and (bounded) message. A consumer that reads it fails or succeeds as with
 * any record; this handler reads the attempt number back from it, so a record is delivered at most
 * {@link RetryPolicy#maxAttempts()} times in all. The dead letter carries the same headers and
 * {@link RetryHeaders#DEAD_LETTER_REASON}.
 *
 * <p><b>Handled twice, scheduled once.</b> The kdelay schedule id is derived from the group, the
 * record's origin (topic, partition and offset of its first delivery) and the attempt number, so a
 * consumer that restarted before committing and handles the same failure again sends a request for
 * the same id, which replaces the first: one retry fires. The request is stamped with the failed
 * record's timestamp, so once the first retry has fired, kdelay takes the second request for the
 * same one again and dead-letters it {@code SUPERSEDED} (for {@code delay.fired.retention.ms},
 * default an hour). A dead letter of the handler's own is written directly, so a consumer that
 * comes back can write it twice; for none ever, use a transactional producer and {@link
 * #handleInTransaction}, which commits the request or dead letter and the consumer's offset in one
 * transaction: a retried record is then neither lost nor doubled.
 *
 * <p><b>Keys.</b> kdelay keys a fired record with text ({@code delay-target-key}), so a record
 * whose key is not UTF-8 is dead-lettered ({@link DeadLetterReason#KEY_NOT_TEXT}) rather than
 * retried under another key; a record with a null key comes back keyed by its schedule id. Keys and
 * values that are {@code byte[]} or {@code String} are written as they are (a string as UTF-8);
 * others need a {@linkplain Builder#keySerializer serializer}.
 *
 * <p><b>Headers.</b> Headers named {@code kdelay-retry-*} are replaced by this attempt's, and
 * kdelay's {@code delay-*} request headers are left out of a retry, as kdelay would read them as
 * part of the request; a fired record's own {@code delay-*} headers are replaced by kdelay when it
 * fires again.
 *
 * <p>Thread-safe if the producer is. The handler never closes the producer.
 */
public final class RetryHandler {

  private final Producer<byte[], byte[]> producer;
  private final DelayClient delay;
  private final String group;
  private final RetryPolicy policy;
  private final String retryTopic;
  private final String deadLetterTopic;
  private final Serializer<Object> keySerializer;
  private final Serializer<Object> valueSerializer;
  private final Clock clock;

  private RetryHandler(Builder builder) {
    this.producer = builder.producer;
    this.delay = new DelayClient(builder.producer, builder.requestsTopic);
    this.group = builder.group;
    this.policy = builder.policy;
    this.retryTopic = builder.retryTopic;
    this.deadLetterTopic = builder.deadLetterTopic;
    this.keySerializer = builder.keySerializer;
    this.valueSerializer = builder.valueSerializer;
    this.clock = builder.clock;
  }

  /**
   * Starts building a handler.
   *
   * @param producer sends kdelay requests and dead letters; byte-array serializers, idempotent
   * @param group names whose failures these are, normally the consumer group: part of every
   *     schedule id, so that two groups that fail on the same record do not replace each other's
   *     retries
   * @return a builder
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code group} is empty, longer than 512 UTF-8 bytes or not
   *     well-formed Unicode
   */
  public static Builder builder(Producer<byte[], byte[]> producer, String group) {
    return new Builder(producer, group);
  }

  /**
   * Retries a failed record, or dead-letters it, as the policy says. With a transactional producer
   * the sends join the transaction in progress, which the caller begins and commits (see {@link
   * #handleInTransaction} for one that does both).
   *
   * @param record the record that failed
   * @param exception what its processing threw
   * @return a future of what was done, complete when the broker acknowledged the send (with a
   *     transactional producer: written, and visible once the caller's transaction commits)
   * @throws NullPointerException if an argument is null
   * @throws org.apache.kafka.common.errors.SerializationException if a key or value serializer
   *     fails
   * @throws IllegalArgumentException if the key or value is neither {@code byte[]} nor {@code
   *     String} and no serializer is configured for it
   */
  public CompletableFuture<RetryOutcome> handle(ConsumerRecord<?, ?> record, Throwable exception) {
    requireNonNull(record, "record cannot be null");
    requireNonNull(exception, "exception cannot be null");
    FailedAttempt failed = FailedAttempt.of(record, exception, clock.instant());
    byte[] key = bytes(keySerializer, record, record.key(), "key");
    byte[] value = bytes(valueSerializer, record, record.value(), "value");
    if (!policy.isRetryable(exception)) {
      return deadLetter(failed, key, value, DeadLetterReason.NOT_RETRYABLE);
    }
    if (failed.attempt() >= policy.maxAttempts()) {
      return deadLetter(failed, key, value, DeadLetterReason.ATTEMPTS_EXHAUSTED);
    }
    String textKey;
    try {
      textKey = key == null ? null : WireText.requireDecoded(key, "key");
    } catch (IllegalArgumentException e) {
      return deadLetter(failed, key, value, DeadLetterReason.KEY_NOT_TEXT);
    }
    return retry(failed, textKey, value, record.timestamp());
  }

  /**
   * Retries a failed record, or dead-letters it, and commits the consumer's offset past it, in one
   * transaction of the handler's transactional producer: either both the request and the offset are
   * committed, or neither and the record is delivered again. Begins the transaction itself, so none
   * may be in progress.
   *
   * @param record the record that failed
   * @param exception what its processing threw
   * @param group the consumer's {@link org.apache.kafka.clients.consumer.Consumer#groupMetadata()},
   *     which fences a consumer that lost the partition
   * @return what was done, committed
   * @throws NullPointerException if an argument is null
   * @throws ProducerFencedException if another producer with the same transactional id took over;
   *     as for the two below, the producer must be closed
   * @throws OutOfOrderSequenceException if the broker lost track of the producer's sequence
   * @throws AuthorizationException if the producer may not write or commit
   * @throws java.util.concurrent.CompletionException if the request or dead letter could not be
   *     sent, after the transaction was aborted
   * @throws org.apache.kafka.common.KafkaException for any other failure of the producer, after the
   *     transaction was aborted
   */
  public RetryOutcome handleInTransaction(
      ConsumerRecord<?, ?> record, Throwable exception, ConsumerGroupMetadata group) {
    requireNonNull(record, "record cannot be null");
    requireNonNull(exception, "exception cannot be null");
    requireNonNull(group, "group cannot be null");
    producer.beginTransaction();
    try {
      CompletableFuture<RetryOutcome> outcome = handle(record, exception);
      producer.sendOffsetsToTransaction(
          Map.of(
              new TopicPartition(record.topic(), record.partition()),
              new OffsetAndMetadata(record.offset() + 1)),
          group);
      // A send that failed before reaching the producer would leave the transaction committable
      // without the retry: the offset would move past a record that is never delivered again.
      // So the outcome must be known, and good, before the commit.
      producer.flush();
      RetryOutcome done = outcome.join();
      producer.commitTransaction();
      return done;
    } catch (ProducerFencedException | OutOfOrderSequenceException | AuthorizationException e) {
      // Fatal for this producer: it cannot abort either, only be closed.
      throw e;
    } catch (RuntimeException e) {
      producer.abortTransaction();
      throw e;
    }
  }

  /**
   * The policy this handler follows.
   *
   * @return the policy
   */
  public RetryPolicy policy() {
    return policy;
  }

  private CompletableFuture<RetryOutcome> retry(
      FailedAttempt failed, String key, byte[] value, long recordTimestamp) {
    String topic = retryTopic == null ? failed.topic() : retryTopic;
    String id = failed.scheduleId(group);
    Instant dueAt = failed.failedAt().plus(policy.delay(failed.attempt()));
    DelayedMessage.Builder message = DelayedMessage.builder(id, topic).fireAt(dueAt);
    if (recordTimestamp >= 0) {
      // Stamped like the failed record, the same failure handled again (a consumer restarted
      // before it committed) is the same request: once the retry fired, kdelay dead-letters a
      // second one SUPERSEDED instead of firing it again.
      message.requestTimestamp(Instant.ofEpochMilli(recordTimestamp));
    }
    if (key != null) {
      message.targetKey(key);
    }
    if (value == null) {
      message.tombstone();
    } else {
      message.payload(value);
    }
    for (Header header : failed.carried()) {
      if (DelayHeaders.isCarried(header.key())) {
        message.header(header.key(), header.value());
      }
    }
    failed.retryHeaders().forEach(header -> message.header(header.key(), header.value()));
    return delay
        .schedule(message.build())
        .thenApply(metadata -> new Retried(failed.attempt(), topic, id, dueAt));
  }

  private CompletableFuture<RetryOutcome> deadLetter(
      FailedAttempt failed, byte[] key, byte[] value, DeadLetterReason reason) {
    String topic = deadLetterTopic == null ? failed.originTopic() + "-dlt" : deadLetterTopic;
    Headers headers = new RecordHeaders();
    failed.carried().forEach(headers::add);
    failed.retryHeaders().forEach(headers::add);
    headers.add(RetryHeaders.DEAD_LETTER_REASON, WireText.of(reason.name()));
    ProducerRecord<byte[], byte[]> letter =
        new ProducerRecord<>(topic, null, null, key, value, headers);
    CompletableFuture<RetryOutcome> result = new CompletableFuture<>();
    try {
      producer.send(
          letter,
          (metadata, e) -> {
            if (e != null) {
              result.completeExceptionally(e);
            } else {
              result.complete(new DeadLettered(failed.attempt(), topic, reason));
            }
          });
    } catch (RuntimeException e) {
      // As DelayClient does: every failure reaches the caller through the future.
      result.completeExceptionally(e);
    }
    return result;
  }

  private static byte[] bytes(
      Serializer<Object> serializer, ConsumerRecord<?, ?> record, Object data, String what) {
    if (data == null) {
      return null;
    }
    if (serializer != null) {
      return serializer.serialize(record.topic(), record.headers(), data);
    }
    if (data instanceof byte[] bytes) {
      return bytes;
    }
    if (data instanceof String string) {
      return string.getBytes(UTF_8);
    }
    throw new IllegalArgumentException(
        "the record's "
            + what
            + " is a "
            + data.getClass().getName()
            + ": configure a "
            + what
            + " serializer for the retry handler, or consume byte[] or String");
  }

  /** Builds a {@link RetryHandler}. Not thread-safe. */
  public static final class Builder {

    /**
     * Room left in the 1024-byte schedule id for a topic, a partition, an offset and an attempt.
     */
    private static final int MAX_GROUP_BYTES = 512;

    private final Producer<byte[], byte[]> producer;
    private final String group;
    private String requestsTopic = "delay-requests";
    private RetryPolicy policy = RetryPolicy.builder().build();
    private String retryTopic;
    private String deadLetterTopic;
    private Serializer<Object> keySerializer;
    private Serializer<Object> valueSerializer;
    private Clock clock = Clock.systemUTC();

    private Builder(Producer<byte[], byte[]> producer, String group) {
      this.producer = requireNonNull(producer, "producer cannot be null");
      requireNonNull(group, "group cannot be null");
      int length = WireText.requireEncoded(group, "group").length;
      if (length == 0 || length > MAX_GROUP_BYTES) {
        throw new IllegalArgumentException(
            "group must be 1.." + MAX_GROUP_BYTES + " UTF-8 bytes, got " + length);
      }
      this.group = group;
    }

    /**
     * kdelay's request topic (default {@code delay-requests}).
     *
     * @param requestsTopic the topic
     * @return this builder
     * @throws NullPointerException if {@code requestsTopic} is null
     * @throws IllegalArgumentException if it is not a legal topic name
     */
    public Builder requestsTopic(String requestsTopic) {
      this.requestsTopic = TopicNames.requireLegal(requestsTopic, "requestsTopic");
      return this;
    }

    /**
     * When and what to retry (default {@code RetryPolicy.builder().build()}).
     *
     * @param policy the policy
     * @return this builder
     * @throws NullPointerException if {@code policy} is null
     */
    public Builder policy(RetryPolicy policy) {
      this.policy = requireNonNull(policy, "policy cannot be null");
      return this;
    }

    /**
     * Delivers retries to this topic instead of back to the topic the record failed on (the
     * default). A retry topic suits a topic that several consumer groups read, each of which would
     * otherwise see the others' retries; the consumer then reads both.
     *
     * @param retryTopic the topic
     * @return this builder
     * @throws NullPointerException if {@code retryTopic} is null
     * @throws IllegalArgumentException if it is not a legal topic name
     */
    public Builder retryTopic(String retryTopic) {
      this.retryTopic = TopicNames.requireLegal(retryTopic, "retryTopic");
      return this;
    }

    /**
     * Writes dead letters to this topic (default: the origin topic's name with {@code -dlt}).
     *
     * @param deadLetterTopic the topic
     * @return this builder
     * @throws NullPointerException if {@code deadLetterTopic} is null
     * @throws IllegalArgumentException if it is not a legal topic name
     */
    public Builder deadLetterTopic(String deadLetterTopic) {
      this.deadLetterTopic = TopicNames.requireLegal(deadLetterTopic, "deadLetterTopic");
      return this;
    }

    /**
     * Turns record keys that are neither {@code byte[]} nor {@code String} back into bytes: the
     * serializer matching the consumer's key deserializer.
     *
     * @param serializer the serializer, called with the record's topic and headers
     * @return this builder
     * @throws NullPointerException if {@code serializer} is null
     */
    public Builder keySerializer(Serializer<?> serializer) {
      this.keySerializer = untyped(requireNonNull(serializer, "serializer cannot be null"));
      return this;
    }

    /**
     * Turns record values that are neither {@code byte[]} nor {@code String} back into bytes: the
     * serializer matching the consumer's value deserializer.
     *
     * @param serializer the serializer, called with the record's topic and headers
     * @return this builder
     * @throws NullPointerException if {@code serializer} is null
     */
    public Builder valueSerializer(Serializer<?> serializer) {
      this.valueSerializer = untyped(requireNonNull(serializer, "serializer cannot be null"));
      return this;
    }

    /**
     * The clock failures are timed by (default the system clock in UTC); tests set their own.
     *
     * @param clock the clock
     * @return this builder
     * @throws NullPointerException if {@code clock} is null
     */
    public Builder clock(Clock clock) {
      this.clock = requireNonNull(clock, "clock cannot be null");
      return this;
    }

    /**
     * Builds the handler.
     *
     * @return the handler
     */
    public RetryHandler build() {
      return new RetryHandler(this);
    }

    // The serializer matches the consumer's deserializer, so it receives the type it expects;
    // Kafka's own clients trust configured serializers the same way.
    @SuppressWarnings("unchecked")
    private static Serializer<Object> untyped(Serializer<?> serializer) {
      return (Serializer<Object>) serializer;
    }
  }
}

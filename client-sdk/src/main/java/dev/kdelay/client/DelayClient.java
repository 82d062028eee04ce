package dev.kdelay.client;

import static dev.kdelay.client.WireFormat.scheduleId;
import static java.util.Objects.requireNonNull;

import dev.kdelay.schemas.Action;
import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.TopicNames;
import dev.kdelay.schemas.WireText;
import dev.kdelay.schemas.WireTimes;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Sends schedule, cancel, pause, resume, trigger and reschedule requests to kdelay's request topic,
 * and replays its dead letters.
 *
 * <pre>{@code
 * Map<String, Object> config = Map.of("bootstrap.servers", "localhost:9092");
 * try (DelayClient client = DelayClient.create(config, "delay-requests")) {
 *   // Deliver to "order-timeouts" in 15 minutes, unless cancelled first.
 *   client.scheduleAfter("order-42", "order-timeouts", Duration.ofMinutes(15), payload).join();
 *
 *   // Every night at 02:15 Berlin time, carrying the caller's trace context.
 *   client.schedule(
 *       DelayedMessage.builder("nightly-report", "reports")
 *           .cron(CronSchedule.of("0 15 2 * * ?").zone(ZoneId.of("Europe/Berlin")))
 *           .payload("{\"report\":\"daily\"}")
 *           .header("traceparent", traceparent)
 *           .build());
 *
 *   // An operator's actions: fire the nightly report now; move the timeout out.
 *   client.trigger("nightly-report");
 *   client.rescheduleAfter("order-42", Duration.ofMinutes(30));
 *
 *   client.cancel("order-42");
 * }
 * }</pre>
 *
 * <p>Every request is keyed by its schedule id, so all requests for one id land on one partition
 * and kdelay applies them in the order they were written. Sending a schedule again with the same id
 * replaces it, which makes producer retries harmless. A producer made by {@link #create} is
 * idempotent, so retries also never reorder a schedule and a following cancel; a producer passed to
 * the constructor should be configured the same way.
 *
 * <p>Each method returns a future that completes with the request record's metadata once the broker
 * has acknowledged it, or exceptionally if the send failed; kdelay itself handles the request
 * later, and a request it rejects goes to its dead-letter topic. The future completes on the
 * producer's I/O thread, so non-async dependent actions run there and must not block.
 *
 * <p>A client is thread-safe, as Kafka's producer is.
 *
 * <p>To retry a record a consumer failed on, with back-off and a dead-letter topic, see {@link
 * dev.kdelay.client.retry.RetryHandler}.
 */
public final class DelayClient implements AutoCloseable {

  private final Producer<byte[], byte[]> producer;
  private final String requestsTopic;
  private final boolean ownsProducer;

  /**
   * A client over a producer it does not own: {@link #close()} leaves the producer open.
   *
   * @param producer the producer to send requests with
   * @param requestsTopic kdelay's request topic
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code requestsTopic} is not a legal topic name
   */
  public DelayClient(Producer<byte[], byte[]> producer, String requestsTopic) {
    this(producer, requestsTopic, false);
  }

  private DelayClient(
      Producer<byte[], byte[]> producer, String requestsTopic, boolean ownsProducer) {
    this.producer = requireNonNull(producer, "producer cannot be null");
    this.requestsTopic = TopicNames.requireLegal(requestsTopic, "requestsTopic");
    this.ownsProducer = ownsProducer;
  }

  /**
   * A client with a producer of its own, closed by {@link #close()}. The producer uses byte-array
   * serializers, {@code acks=all} and {@code enable.idempotence=true}, whatever the given
   * configuration says for them.
   *
   * @param producerConfig Kafka producer configuration, at least {@code bootstrap.servers}
   * @param requestsTopic kdelay's request topic
   * @return the client
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code requestsTopic} is not a legal topic name
   * @throws org.apache.kafka.common.KafkaException if the producer cannot be created
   */
  public static DelayClient create(Map<String, Object> producerConfig, String requestsTopic) {
    TopicNames.requireLegal(requestsTopic, "requestsTopic");
    Producer<byte[], byte[]> producer =
        new KafkaProducer<>(
            producerConfig(producerConfig), new ByteArraySerializer(), new ByteArraySerializer());
    return new DelayClient(producer, requestsTopic, true);
  }

  /** The configuration {@link #create} gives its producer. */
  static Map<String, Object> producerConfig(Map<String, Object> producerConfig) {
    requireNonNull(producerConfig, "producerConfig cannot be null");
    Map<String, Object> config = new HashMap<>(producerConfig);
    config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    // A request acknowledged by one replica only could be lost with it, and a schedule with it.
    config.put(ProducerConfig.ACKS_CONFIG, "all");
    // Keeps a retried request from overtaking a later request for the same id.
    config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    return config;
  }

  /**
   * A client that writes to another request topic with this client's producer: a tenant's, {@code
   * <requests topic>.<tenant>}, say. Closing it leaves the producer open; closing this client
   * closes it, if this client created it.
   *
   * @param requestsTopic the other request topic
   * @return the client
   * @throws IllegalArgumentException if {@code requestsTopic} is not a legal topic name
   */
  public DelayClient onTopic(String requestsTopic) {
    TopicNames.requireLegal(requestsTopic, "requestsTopic");
    return new DelayClient(producer, requestsTopic, false);
  }

  /**
   * The topic this client writes requests to.
   *
   * @return the request topic
   */
  public String requestsTopic() {
    return requestsTopic;
  }

  /**
   * Schedules a message, replacing any schedule with the same id.
   *
   * @param message the message
   * @return a future of the request record's metadata
   * @throws NullPointerException if {@code message} is null
   */
  public CompletableFuture<RecordMetadata> schedule(DelayedMessage message) {
    requireNonNull(message, "message cannot be null");
    return send(message.toRequest(requestsTopic));
  }

  /**
   * Schedules a payload for one delivery at an absolute time, keyed by the id.
   *
   * @param id the schedule id, 1..1024 bytes of UTF-8
   * @param targetTopic the topic to deliver to
   * @param dueAt the due time, to the millisecond; a time in the past fires at once
   * @param payload the fired record's value
   * @return a future of the request record's metadata
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if an argument is invalid, as {@link DelayedMessage.Builder}
   *     checks it
   */
  public CompletableFuture<RecordMetadata> scheduleAt(
      String id, String targetTopic, Instant dueAt, byte[] payload) {
    return schedule(DelayedMessage.builder(id, targetTopic).fireAt(dueAt).payload(payload).build());
  }

  /**
   * Schedules a payload for one delivery after a delay, keyed by the id. kdelay counts the delay
   * from the request record's timestamp, so time the request spends waiting to be read does not add
   * to it.
   *
   * @param id the schedule id, 1..1024 bytes of UTF-8
   * @param targetTopic the topic to deliver to
   * @param delay the delay, to the millisecond
   * @param payload the fired record's value
   * @return a future of the request record's metadata
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if an argument is invalid (a negative delay, say), as {@link
   *     DelayedMessage.Builder} checks it
   */
  public CompletableFuture<RecordMetadata> scheduleAfter(
      String id, String targetTopic, Duration delay, byte[] payload) {
    return schedule(DelayedMessage.builder(id, targetTopic).after(delay).payload(payload).build());
  }

  /**
   * Schedules a payload for recurring delivery, keyed by the id.
   *
   * @param id the schedule id, 1..1024 bytes of UTF-8
   * @param targetTopic the topic to deliver to
   * @param cron when to deliver
   * @param payload the fired records' value
   * @return a future of the request record's metadata
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if an argument is invalid, as {@link DelayedMessage.Builder}
   *     checks it
   */
  public CompletableFuture<RecordMetadata> scheduleCron(
      String id, String targetTopic, CronSchedule cron, byte[] payload) {
    return schedule(DelayedMessage.builder(id, targetTopic).cron(cron).payload(payload).build());
  }

  /**
   * Cancels the schedule with this id; nothing more fires for it.
   *
   * @param id the schedule id
   * @return a future of the request record's metadata
   * @throws NullPointerException if {@code id} is null
   * @throws IllegalArgumentException if {@code id} is empty, longer than 1024 UTF-8 bytes or not
   *     well-formed Unicode
   */
  public CompletableFuture<RecordMetadata> cancel(String id) {
    return send(control(id, Action.CANCEL));
  }

  /**
   * Pauses the recurring schedule with this id until it is {@linkplain #resume resumed}. kdelay
   * rejects pausing a one-shot schedule ({@code NOT_APPLICABLE}).
   *
   * @param id the schedule id
   * @return a future of the request record's metadata
   * @throws NullPointerException if {@code id} is null
   * @throws IllegalArgumentException if {@code id} is empty, longer than 1024 UTF-8 bytes or not
   *     well-formed Unicode
   */
  public CompletableFuture<RecordMetadata> pause(String id) {
    return send(control(id, Action.PAUSE));
  }

  /**
   * Resumes the paused recurring schedule with this id.
   *
   * @param id the schedule id
   * @return a future of the request record's metadata
   * @throws NullPointerException if {@code id} is null
   * @throws IllegalArgumentException if {@code id} is empty, longer than 1024 UTF-8 bytes or not
   *     well-formed Unicode
   */
  public CompletableFuture<RecordMetadata> resume(String id) {
    return send(control(id, Action.RESUME));
  }

  /**
   * Fires the next occurrence of the schedule with this id at once, as that occurrence: with the
   * idempotency key and {@code delay-due-at} it would have had on time, so it never fires twice. A
   * one-shot is then done; a recurring schedule goes on from the occurrence after; a paused one
   * fires the occurrence a resume would start with and stays paused. kdelay rejects a trigger of an
   * id with no live schedule ({@code NOT_APPLICABLE}).
   *
   * @param id the schedule id
   * @return a future of the request record's metadata
   * @throws NullPointerException if {@code id} is null
   * @throws IllegalArgumentException if {@code id} is empty, longer than 1024 UTF-8 bytes or not
   *     well-formed Unicode
   */
  public CompletableFuture<RecordMetadata> trigger(String id) {
    return send(control(id, Action.TRIGGER));
  }

  /**
   * Moves the schedule with this id to fire once at a new time, keeping its target, payload and
   * headers. A paused schedule cannot become a one-shot: kdelay rejects that ({@code
   * NOT_APPLICABLE}), as it rejects a reschedule of an id with no live schedule.
   *
   * @param id the schedule id
   * @param dueAt the new due time
   * @return a future of the request record's metadata
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code id} is invalid or {@code dueAt} is outside the range
   *     of epoch milliseconds
   */
  public CompletableFuture<RecordMetadata> rescheduleAt(String id, Instant dueAt) {
    ProducerRecord<byte[], byte[]> record = control(id, Action.RESCHEDULE);
    record
        .headers()
        .add(
            DelayHeaders.FIRE_AT,
            WireText.of(
                WireTimes.requireEpochMillis(requireNonNull(dueAt, "dueAt cannot be null"), "dueAt")
                    .toEpochMilli()));
    return send(record);
  }

  /**
   * Moves the schedule with this id to fire once after a delay, counted from this request's
   * timestamp, keeping its target, payload and headers.
   *
   * @param id the schedule id
   * @param delay the delay
   * @return a future of the request record's metadata
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code id} is invalid or {@code delay} is negative
   */
  public CompletableFuture<RecordMetadata> rescheduleAfter(String id, Duration delay) {
    ProducerRecord<byte[], byte[]> record = control(id, Action.RESCHEDULE);
    record
        .headers()
        .add(
            DelayHeaders.AFTER,
            WireText.of(
                WireTimes.requireMillis(requireNonNull(delay, "delay cannot be null"), "delay")
                    .toMillis()));
    return send(record);
  }

  /**
   * Moves the schedule with this id to a cron cadence, keeping its target, payload and headers; its
   * occurrence count starts again. A paused schedule stays paused.
   *
   * @param id the schedule id
   * @param cron the new cadence
   * @return a future of the request record's metadata
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code id} is invalid
   */
  public CompletableFuture<RecordMetadata> rescheduleCron(String id, CronSchedule cron) {
    requireNonNull(cron, "cron cannot be null");
    ProducerRecord<byte[], byte[]> record = control(id, Action.RESCHEDULE);
    cron.addTo(record.headers());
    return send(record);
  }

  /**
   * Submits a dead letter again, as it was or corrected: see {@link Replay} for what is sent.
   *
   * @param letter a record of kdelay's dead-letter topic
   * @param replay as it was ({@link Replay#asIs()}) or with corrections
   * @return the request record's metadata once acknowledged
   * @throws IllegalArgumentException if the dead letter cannot be replayed, saying why
   */
  public CompletableFuture<RecordMetadata> replay(DeadLetter letter, Replay replay) {
    return replay(letter, replay, Clock.systemUTC());
  }

  CompletableFuture<RecordMetadata> replay(DeadLetter letter, Replay replay, Clock clock) {
    requireNonNull(letter, "letter cannot be null");
    requireNonNull(replay, "replay cannot be null");
    return send(replay.request(letter, requestsTopic, clock));
  }

  /**
   * Closes the producer if this client created it ({@link #create}); a producer passed to the
   * constructor stays open. Closing waits for requests already sent to be acknowledged.
   */
  @Override
  public void close() {
    if (ownsProducer) {
      producer.close();
    }
  }

  /** A request with a null value whose action header says what to do with the id. */
  private ProducerRecord<byte[], byte[]> control(String id, Action action) {
    ProducerRecord<byte[], byte[]> record =
        new ProducerRecord<>(requestsTopic, scheduleId(id), null);
    record.headers().add(DelayHeaders.ACTION, WireText.of(action.wireName()));
    return record;
  }

  private CompletableFuture<RecordMetadata> send(ProducerRecord<byte[], byte[]> record) {
    CompletableFuture<RecordMetadata> result = new CompletableFuture<>();
    try {
      producer.send(
          record,
          (metadata, exception) -> {
            if (exception != null) {
              result.completeExceptionally(exception);
            } else {
              result.complete(metadata);
            }
          });
    } catch (RuntimeException e) {
      // Kafka's producer reports most failures through the callback but throws some (a closed
      // producer, an interrupt, a fatal error); callers get every failure the same way.
      result.completeExceptionally(e);
    }
    return result;
  }
}

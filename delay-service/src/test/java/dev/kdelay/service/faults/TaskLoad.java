package dev.kdelay.service.faults;

import dev.kdelay.schemas.DelayHeaders;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Utils;

/**
 * A seeded stream of schedule requests, sent at an even pace over a window by a background thread:
 * task {@code i} is sent at {@code start + i * window / tasks}, due a random delay after it is
 * sent, to one of the target topics. Every acknowledged request goes into the {@link Ledger}.
 *
 * <p>In the first fifth of the window a share of the tasks is doomed: scheduled due 10-14 s later,
 * then at once cancelled (a tombstone or {@code delay-action: cancel}) or replaced by a request for
 * the same id with an earlier due time. Their first occurrence must not fire once the cancel or
 * replacement has taken effect ({@link IntakeProgress} tells when); sent before a scenario's fault
 * and due after it, they check that a cancel survives the move of its partition.
 */
final class TaskLoad implements AutoCloseable {

  /**
   * What to send.
   *
   * @param seed seeds every random choice
   * @param tasks how many tasks
   * @param window over how long they are sent
   * @param minDelay shortest delay from send to due
   * @param maxDelay longest delay from send to due
   * @param doomedShare share of the tasks of the first fifth that are cancelled or replaced
   */
  record Plan(
      long seed,
      int tasks,
      Duration window,
      Duration minDelay,
      Duration maxDelay,
      double doomedShare) {}

  private static final long DOOMED_DELAY_MS = 10_000;
  private static final int DOOMED_SPREAD_MS = 4_000;

  private final String requestsTopic;
  private final int partitions;
  private final List<String> targets;
  private final Plan plan;
  private final Ledger ledger;
  private final KafkaProducer<String, String> producer;
  private final Random random;
  private final AtomicInteger sent = new AtomicInteger();
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private final Thread sender;
  private volatile long startedAtMs;
  private volatile boolean stopping;

  TaskLoad(
      String bootstrapServers,
      String requestsTopic,
      int partitions,
      List<String> targets,
      Plan plan,
      Ledger ledger) {
    this.requestsTopic = requestsTopic;
    this.partitions = partitions;
    this.targets = List.copyOf(targets);
    this.plan = plan;
    this.ledger = ledger;
    this.producer = producer(bootstrapServers);
    this.random = new Random(plan.seed());
    this.sender = new Thread(this::sendAll, "task-load");
    sender.setDaemon(true);
  }

  static KafkaProducer<String, String> producer(String bootstrapServers) {
    return new KafkaProducer<>(
        Map.of(
            ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
            bootstrapServers,
            ProducerConfig.ACKS_CONFIG,
            "all",
            ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
            true,
            ProducerConfig.LINGER_MS_CONFIG,
            5,
            // A broker that froze answers nothing: the load gives up on it as soon as kdelay's
            // clients do (10 s), not after Kafka's 30 s, which would make tasks late before kdelay
            // even had them.
            ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG,
            10_000),
        new StringSerializer(),
        new StringSerializer());
  }

  Plan plan() {
    return plan;
  }

  void start() {
    startedAtMs = System.currentTimeMillis();
    sender.start();
  }

  long startedAtMs() {
    return startedAtMs;
  }

  /** Waits until the given share of the tasks has been sent. */
  void awaitSent(double share, Duration timeout) {
    awaitSentCount((int) Math.ceil(plan.tasks() * share), timeout);
  }

  /** How many tasks have been sent so far. */
  int sentCount() {
    return sent.get();
  }

  /** Waits until this many tasks have been sent. */
  void awaitSentCount(int count, Duration timeout) {
    Await.until(count + " of " + plan.tasks() + " tasks sent", timeout, () -> sent.get() >= count);
  }

  /**
   * Sends no more tasks: for a test whose faults last as long as they take, with a plan long enough
   * to keep the load going under every one of them. What was sent stays in the ledger.
   */
  void stopSending() {
    stopping = true;
  }

  /** Waits until every request has been sent and acknowledged (or has failed for good). */
  void awaitFinished(Duration timeout) throws InterruptedException {
    sender.join(Await.scaled(timeout).toMillis());
    if (sender.isAlive()) {
      throw new AssertionError("the load was not sent within " + timeout);
    }
    producer.flush();
    if (failure.get() != null) {
      throw new AssertionError("the load generator failed", failure.get());
    }
  }

  /**
   * Schedules, on every requests partition, a sentinel due after everything scheduled so far. A
   * partition fires in due order, so once its sentinel is visible every earlier task of it has
   * fired or never will.
   */
  void sendSentinels(long dueMs) {
    sendSentinels("last", dueMs);
  }

  /**
   * Schedules, on every requests partition, a task named {@code name} due at {@code dueMs} for the
   * first target: every instance then has something to write to that target, even once the load has
   * all been sent. Each name once per load: a second send of the same sentinel would replace the
   * first.
   */
  void sendSentinels(String name, long dueMs) {
    for (int partition = 0; partition < partitions; partition++) {
      String id = sentinelId(name, partition);
      schedule(id, dueMs, targets.get(0));
    }
    producer.flush();
  }

  private String sentinelId(String name, int partition) {
    for (int n = 0; ; n++) {
      String id = "sentinel-" + name + "-" + partition + "-" + n;
      int owner = Utils.toPositive(Utils.murmur2(id.getBytes(StandardCharsets.UTF_8))) % partitions;
      if (owner == partition) {
        return id;
      }
    }
  }

  private void sendAll() {
    try {
      long windowNanos = plan.window().toNanos();
      long start = System.nanoTime();
      for (int i = 0; i < plan.tasks() && !stopping; i++) {
        long sendAt = start + windowNanos * i / plan.tasks();
        long wait = sendAt - System.nanoTime();
        if (wait > 0) {
          TimeUnit.NANOSECONDS.sleep(wait);
        }
        sendTask(i);
        sent.incrementAndGet();
      }
    } catch (Throwable e) {
      failure.set(e);
    }
  }

  private void sendTask(int i) {
    String id = String.format("task-%06d", i);
    String target = targets.get(random.nextInt(targets.size()));
    long now = System.currentTimeMillis();
    long due = now + delayMs();
    boolean doomed = i < plan.tasks() / 5 && random.nextDouble() < plan.doomedShare();
    if (!doomed) {
      schedule(id, due, target);
      return;
    }
    long doomedDue = now + DOOMED_DELAY_MS + random.nextInt(DOOMED_SPREAD_MS);
    schedule(id, doomedDue, target, false);
    String doomedKey = DelayHeaders.idempotencyKey(id, doomedDue);
    ledger.forbid(doomedKey, doomedDue);
    if (random.nextBoolean()) {
      cancel(id, doomedKey, random.nextBoolean());
    } else {
      replace(id, due, target, doomedKey);
    }
  }

  private long delayMs() {
    long min = plan.minDelay().toMillis();
    long spread = plan.maxDelay().toMillis() - min;
    return min + (spread <= 0 ? 0 : (long) (random.nextDouble() * spread));
  }

  private void schedule(String id, long dueMs, String target) {
    schedule(id, dueMs, target, true);
  }

  private void replace(String id, long dueMs, String target, String doomedKey) {
    send(
        id,
        dueMs,
        target,
        true,
        metadata -> ledger.undoneAt(doomedKey, metadata.partition(), metadata.offset()));
  }

  private void schedule(String id, long dueMs, String target, boolean expected) {
    send(id, dueMs, target, expected, metadata -> {});
  }

  private void send(
      String id,
      long dueMs,
      String target,
      boolean expected,
      java.util.function.Consumer<RecordMetadata> written) {
    String payload = "payload of " + id + " due " + dueMs;
    RecordHeaders headers = new RecordHeaders();
    headers.add(DelayHeaders.TARGET_TOPIC, bytes(target));
    headers.add(DelayHeaders.FIRE_AT, bytes(Long.toString(dueMs)));
    headers.add("traceparent", bytes("trace-" + id));
    String key = DelayHeaders.idempotencyKey(id, dueMs);
    long sentAt = System.currentTimeMillis();
    producer.send(
        new ProducerRecord<>(requestsTopic, null, id, payload, headers),
        (metadata, exception) -> {
          if (exception != null) {
            ledger.uncertain(key);
            return;
          }
          if (expected) {
            ledger.expect(
                new Ledger.Task(
                    id,
                    key,
                    dueMs,
                    target,
                    metadata.partition(),
                    metadata.offset(),
                    payload,
                    sentAt,
                    System.currentTimeMillis()));
          }
          written.accept(metadata);
        });
  }

  private void cancel(String id, String doomedKey, boolean tombstone) {
    RecordHeaders headers = new RecordHeaders();
    if (!tombstone) {
      headers.add(DelayHeaders.ACTION, bytes("cancel"));
    }
    producer.send(
        new ProducerRecord<>(requestsTopic, null, id, null, headers),
        (RecordMetadata metadata, Exception exception) -> {
          if (exception != null) {
            ledger.uncertain(doomedKey);
          } else {
            ledger.undoneAt(doomedKey, metadata.partition(), metadata.offset());
          }
        });
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public void close() {
    sender.interrupt();
    producer.close(Duration.ofSeconds(10));
  }
}

package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.service.faults.CommittedRecords.Received;
import dev.kdelay.topology.DelayConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidTimestampException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A kdelay instance in this JVM with healthy tasks and a few bad records, watched closely enough to
 * tell a loop from a single failure: unlike {@link IsolationScenario} it counts every stream thread
 * that ever ran (Kafka Streams reuses thread numbers, so a thread that keeps failing alternates
 * between {@code StreamThread-1} and {@code -2} and the highest number seen says at most 1), it
 * stops watching as soon as the outcome is clear (done, shut down, or looping), and it reports what
 * it saw instead of timing out.
 */
final class BadRecordScenario implements AutoCloseable {

  /** A stream thread failure past which a scenario stops watching: a loop, not a bad moment. */
  static final int LOOPING = 4;

  private final String name;
  private final String bootstrapServers;
  private final Admin admin;
  private final InProcessService service;
  private final StreamThreadWatch threads;
  private final CommittedRecords fired;
  private final CommittedRecords dead;
  private final Set<String> healthy = new LinkedHashSet<>();
  private final long startedAtMs = System.currentTimeMillis();

  /** When the broker had every request sent so far, epoch ms. */
  private volatile long writtenMs;

  /**
   * Creates {@code <name>-open} and starts kdelay on {@code <name>-requests} (2 partitions) and
   * {@code <name>-dlq}, with these settings over the scenario's own. A test that needs the
   * dead-letter topic configured creates it first.
   */
  BadRecordScenario(
      String name,
      String bootstrapServers,
      Admin admin,
      Path stateDir,
      Map<String, Object> overrides)
      throws Exception {
    this.name = name;
    this.bootstrapServers = bootstrapServers;
    this.admin = admin;
    createTopic(admin, topic("open"), Map.of());
    Map<String, Object> props = new HashMap<>();
    props.put(DelayConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    props.put(DelayConfig.APPLICATION_ID_CONFIG, applicationId());
    props.put(DelayConfig.STATE_DIR_CONFIG, stateDir.resolve(name).toString());
    props.put(DelayConfig.REQUESTS_TOPIC_CONFIG, topic("requests"));
    props.put(DelayConfig.DLQ_TOPIC_CONFIG, topic("dlq"));
    props.put(ServiceConfig.TOPIC_PARTITIONS_CONFIG, 2);
    props.put(ServiceConfig.TOPIC_REPLICATION_FACTOR_CONFIG, (short) 1);
    props.put(ServiceConfig.HTTP_PORT_CONFIG, 0);
    props.putAll(overrides);
    this.threads = new StreamThreadWatch(applicationId());
    this.service = InProcessService.start(new ServiceConfig(props), Duration.ofMinutes(2));
    this.fired =
        new CommittedRecords(
            bootstrapServers, List.of(topic("open")), DelayHeaders.IDEMPOTENCY_KEY);
    this.dead = new CommittedRecords(bootstrapServers, List.of(topic("dlq")), DelayHeaders.ERROR);
  }

  static String topic(String name, String suffix) {
    return name + "-" + suffix;
  }

  String topic(String suffix) {
    return topic(name, suffix);
  }

  String applicationId() {
    return "faults-" + name;
  }

  /** Creates a topic of 3 partitions, one replica, with these configs. */
  static void createTopic(Admin admin, String topic, Map<String, String> configs) throws Exception {
    admin
        .createTopics(List.of(new NewTopic(topic, 3, (short) 1).configs(configs)))
        .all()
        .get(60, TimeUnit.SECONDS);
  }

  /** A schedule request; {@code fireAt} is the {@code delay-fire-at} header's text. */
  ProducerRecord<byte[], byte[]> request(String id, String target, String fireAt) {
    ProducerRecord<byte[], byte[]> record =
        new ProducerRecord<>(topic("requests"), utf8(id), utf8("payload of " + id));
    if (target != null) {
      record.headers().add(DelayHeaders.TARGET_TOPIC, utf8(target));
    }
    record.headers().add(DelayHeaders.FIRE_AT, utf8(fireAt));
    return record;
  }

  /** A schedule request due at {@code dueMs} (epoch ms). */
  ProducerRecord<byte[], byte[]> request(String id, String target, long dueMs) {
    return request(id, target, Long.toString(dueMs));
  }

  /**
   * {@code count} healthy tasks to {@code <name>-open}, due {@code spacingMs} apart from {@code
   * firstDueMs}; each must fire exactly once.
   */
  List<ProducerRecord<byte[], byte[]>> healthy(int count, long firstDueMs, long spacingMs) {
    List<ProducerRecord<byte[], byte[]>> requests = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      long due = firstDueMs + i * spacingMs;
      String id = "ok-" + i;
      requests.add(request(id, topic("open"), due));
      healthy.add(DelayHeaders.idempotencyKey(id, due));
    }
    return requests;
  }

  /** Sends the records, in order, and waits until the broker has every one. */
  void send(List<ProducerRecord<byte[], byte[]>> records) throws Exception {
    List<Future<RecordMetadata>> sent = new ArrayList<>();
    try (KafkaProducer<byte[], byte[]> producer = producer(bootstrapServers)) {
      records.forEach(record -> sent.add(producer.send(record)));
      producer.flush();
    }
    for (Future<RecordMetadata> each : sent) {
      each.get(30, TimeUnit.SECONDS);
    }
    writtenMs = System.currentTimeMillis();
  }

  static KafkaProducer<byte[], byte[]> producer(String bootstrapServers) {
    return new KafkaProducer<>(
        Map.of(
            ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
            bootstrapServers,
            ProducerConfig.ACKS_CONFIG,
            "all",
            ProducerConfig.LINGER_MS_CONFIG,
            5),
        new ByteArraySerializer(),
        new ByteArraySerializer());
  }

  /** Waits until kdelay has committed every request sent so far. */
  void awaitApplied() {
    Await.until(
        "kdelay to apply every request",
        Duration.ofSeconds(60),
        () -> {
          try {
            Map<TopicPartition, OffsetAndMetadata> committed =
                admin
                    .listConsumerGroupOffsets(applicationId())
                    .partitionsToOffsetAndMetadata()
                    .get();
            Map<TopicPartition, OffsetSpec> latest =
                committed.keySet().stream()
                    .filter(tp -> tp.topic().equals(topic("requests")))
                    .collect(Collectors.toMap(Function.identity(), tp -> OffsetSpec.latest()));
            return !latest.isEmpty()
                && admin.listOffsets(latest).all().get().entrySet().stream()
                    .allMatch(
                        end -> committed.get(end.getKey()).offset() >= end.getValue().offset());
          } catch (Exception e) {
            return false;
          }
        });
  }

  /**
   * Sets a topic config and waits until the broker reports it: the fault has happened once this
   * returns.
   */
  static void setTopicConfig(Admin admin, String topic, String key, String value) throws Exception {
    ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
    admin
        .incrementalAlterConfigs(
            Map.of(
                resource,
                List.of(new AlterConfigOp(new ConfigEntry(key, value), AlterConfigOp.OpType.SET))))
        .all()
        .get(30, TimeUnit.SECONDS);
    Await.until(
        topic + " to have " + key + "=" + value,
        Duration.ofSeconds(30),
        () -> {
          try {
            return value.equals(
                admin
                    .describeConfigs(List.of(resource))
                    .all()
                    .get()
                    .get(resource)
                    .get(key)
                    .value());
          } catch (Exception e) {
            return false;
          }
        });
  }

  /**
   * Proves that the broker refuses a record stamped {@code ageMs} ago on the topic: sends one with
   * a plain producer and returns the broker's error.
   *
   * @throws AssertionError if the broker took it
   */
  static String refusesTimestampOlderThan(String bootstrapServers, String topic, long ageMs)
      throws Exception {
    try (KafkaProducer<byte[], byte[]> producer = producer(bootstrapServers)) {
      producer
          .send(
              new ProducerRecord<>(
                  topic, null, System.currentTimeMillis() - ageMs, utf8("probe"), utf8("probe")))
          .get(30, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      assertThat(e.getCause()).isInstanceOf(InvalidTimestampException.class);
      return e.getCause().getClass().getSimpleName() + ": " + e.getCause().getMessage();
    }
    throw new AssertionError(topic + " took a record stamped " + ageMs + " ms ago");
  }

  /**
   * Watches until every healthy task fired and {@code deadLetters} dead letters arrived, or the
   * service left RUNNING for good, or {@code failuresToStop} stream threads failed, or the timeout
   * passed; then reads both topics on to their last stable offsets and tells what it saw.
   */
  Outcome await(int deadLetters, int failuresToStop, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + Await.scaled(timeout).toNanos();
    String stoppedBy = "timeout " + timeout.toSeconds() + " s";
    while (System.nanoTime() - deadline < 0) {
      if (fired.containsAll(healthy) && dead.size() >= deadLetters) {
        stoppedBy = "done";
        break;
      }
      if (shutDown()) {
        stoppedBy = "instance shut down";
        // The thread whose failure shut it down dies last: count it.
        threads.awaitAllDead(Duration.ofSeconds(10));
        break;
      }
      if (threads.failures() >= failuresToStop) {
        stoppedBy = threads.failures() + " stream thread failures";
        break;
      }
      Await.pause(25);
    }
    List<Received> letters = dead.finish(Duration.ofSeconds(30));
    List<Received> committed = fired.finish(Duration.ofSeconds(30));
    return new Outcome(
        name,
        stoppedBy,
        healthy,
        committed,
        letters,
        threads.failures(),
        states(),
        System.currentTimeMillis() - startedAtMs,
        writtenMs);
  }

  /** Whether the instance left RUNNING for a state it does not come back from. */
  boolean shutDown() {
    return states().stream()
        .anyMatch(
            s ->
                s.equals("ERROR")
                    || s.equals("PENDING_ERROR")
                    || s.equals("PENDING_SHUTDOWN")
                    || s.equals("NOT_RUNNING"));
  }

  /** Every state other than RUNNING the instance was seen in, in order of first sighting. */
  Set<String> states() {
    Set<String> states = new LinkedHashSet<>();
    for (String departure : service.departuresFromRunning()) {
      states.add(departure.substring(departure.indexOf(": ") + 2));
    }
    return states;
  }

  int threadFailures() {
    return threads.failures();
  }

  /**
   * What a scenario saw.
   *
   * @param stoppedBy why watching stopped
   * @param healthy idempotency keys of the healthy tasks
   * @param fired every healthy-target record committed
   * @param deadLetters every dead letter committed
   * @param threadFailures stream threads that died
   * @param states states other than RUNNING seen
   * @param elapsedMs from the start of the service to the end of watching
   * @param writtenMs when the broker had the requests: a task due before cannot fire before
   */
  record Outcome(
      String name,
      String stoppedBy,
      Set<String> healthy,
      List<Received> fired,
      List<Received> deadLetters,
      int threadFailures,
      Set<String> states,
      long elapsedMs,
      long writtenMs) {

    Map<String, Long> firesPerKey() {
      return fired.stream()
          .collect(
              Collectors.groupingBy(
                  r -> String.valueOf(r.header(DelayHeaders.IDEMPOTENCY_KEY)),
                  Collectors.counting()));
    }

    long healthyFired() {
      return firesPerKey().keySet().stream().filter(healthy::contains).count();
    }

    long duplicates() {
      return firesPerKey().values().stream().filter(count -> count > 1).count();
    }

    /** Due to visible, sorted, of the healthy tasks that fired. */
    long[] lateness() {
      return fired.stream()
          .mapToLong(r -> r.receivedAtMs() - r.headerMs(DelayHeaders.DUE_AT))
          .sorted()
          .toArray();
    }

    /**
     * Visible after the later of its due time and the moment its request was written, sorted: the
     * lateness kdelay answers for, also of tasks sent due already.
     */
    long[] latenessSinceWritten() {
      return fired.stream()
          .mapToLong(r -> r.receivedAtMs() - Math.max(writtenMs, r.headerMs(DelayHeaders.DUE_AT)))
          .sorted()
          .toArray();
    }

    long latenessPercentile(double p) {
      return percentile(lateness(), p);
    }

    long latenessSinceWrittenPercentile(double p) {
      return percentile(latenessSinceWritten(), p);
    }

    private static long percentile(long[] sorted, double p) {
      return sorted.length == 0 ? -1 : sorted[(int) Math.min(sorted.length - 1, sorted.length * p)];
    }

    /** Dead letters as {@code key:code}. */
    List<String> letters() {
      return deadLetters.stream()
          .map(r -> IsolationScenario.key(r) + ":" + r.header(DelayHeaders.ERROR))
          .toList();
    }

    List<Received> lettersFor(Collection<String> keys) {
      return deadLetters.stream().filter(r -> keys.contains(IsolationScenario.key(r))).toList();
    }

    /** One line of figures, printed and appended to the fault figures file. */
    String report() {
      List<String> letters = letters();
      String line =
          String.format(
              "FAULTS %s: stopped by %s after %d ms; healthy fired %d of %d (records %d,"
                  + " duplicated keys %d), due->visible p50 %d / p99 %d / max %d ms, from"
                  + " max(due, written) p50 %d / p99 %d / max %d ms; dead letters"
                  + " %d %s; stream thread failures %d; states other than RUNNING %s",
              name,
              stoppedBy,
              elapsedMs,
              healthyFired(),
              healthy.size(),
              fired.size(),
              duplicates(),
              latenessPercentile(0.5),
              latenessPercentile(0.99),
              latenessPercentile(1.0),
              latenessSinceWrittenPercentile(0.5),
              latenessSinceWrittenPercentile(0.99),
              latenessSinceWrittenPercentile(1.0),
              letters.size(),
              letters.size() > 20 ? letters.subList(0, 20) + "..." : letters,
              threadFailures,
              states);
      System.out.println(line);
      try {
        Files.createDirectories(FaultScenario.FIGURES.getParent());
        Files.writeString(
            FaultScenario.FIGURES,
            Instant.now() + " " + line + System.lineSeparator(),
            StandardCharsets.UTF_8,
            StandardOpenOption.CREATE,
            StandardOpenOption.APPEND);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      return line;
    }
  }

  static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public void close() throws Exception {
    fired.close();
    dead.close();
    service.close();
    threads.close();
  }

  /**
   * Every stream thread of one application id that ran in this JVM, sampled every few milliseconds,
   * and how many of them died: a replaced thread is a new {@link Thread}, whatever its number, and
   * so is the one whose failure made kdelay shut the instance down. A stream thread lives at least
   * as long as its consumer takes to join the group, far longer than the sampling interval. Read
   * before the service is closed, which ends the others.
   */
  static final class StreamThreadWatch implements AutoCloseable {

    private final String prefix;
    private final Map<Long, Thread> seen = new ConcurrentHashMap<>();
    private final Thread sampler;
    private volatile boolean stopping;

    StreamThreadWatch(String applicationId) {
      this.prefix = applicationId + "-";
      this.sampler = new Thread(this::sample, "stream-thread-watch");
      sampler.setDaemon(true);
      sampler.start();
    }

    private void sample() {
      while (!stopping) {
        for (Thread thread : Thread.getAllStackTraces().keySet()) {
          String threadName = thread.getName();
          if (threadName.startsWith(prefix) && threadName.matches(".*-StreamThread-\\d+$")) {
            seen.putIfAbsent(thread.getId(), thread);
          }
        }
        Await.pause(5);
      }
    }

    /** Waits, at most the timeout, until no stream thread seen is alive. */
    void awaitAllDead(Duration timeout) {
      long deadline = System.nanoTime() + timeout.toNanos();
      while (seen.values().stream().anyMatch(Thread::isAlive) && System.nanoTime() - deadline < 0) {
        Await.pause(25);
      }
    }

    /** Stream threads that died: each one failed, whether it was replaced or not. */
    int failures() {
      return (int) seen.values().stream().filter(thread -> !thread.isAlive()).count();
    }

    @Override
    public void close() throws InterruptedException {
      stopping = true;
      sampler.join(TimeUnit.SECONDS.toMillis(5));
    }
  }
}

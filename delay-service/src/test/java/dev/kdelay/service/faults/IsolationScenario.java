package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.service.faults.CommittedRecords.Received;
import dev.kdelay.topology.DelayConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * One bad record among healthy tasks, for the fault-isolation scenarios: a kdelay instance in this
 * JVM, healthy tasks to {@code <name>-open} due around the bad record's due time, the {@code
 * read_committed} readers of the healthy target and the dead-letter topic, and the checks: every
 * healthy task fired exactly once, the dead letters, how many stream threads died.
 */
final class IsolationScenario implements AutoCloseable {

  static final int HEALTHY = 1_000;
  private static final Pattern THREAD_NUMBER = Pattern.compile("StreamThread-(\\d+)$");

  private final String name;
  private final String bootstrapServers;
  private final Admin admin;
  private final InProcessService service;
  private final CommittedRecords fired;
  private final CommittedRecords dead;
  private final List<String> healthy = new ArrayList<>();

  /** Creates {@code <name>-open} and starts kdelay with these settings over the scenario's own. */
  IsolationScenario(
      String name,
      String bootstrapServers,
      Admin admin,
      Path stateDir,
      Map<String, Object> overrides)
      throws Exception {
    this.name = name;
    this.bootstrapServers = bootstrapServers;
    this.admin = admin;
    FaultScenario.createTopics(admin, Map.of(topic("open"), 3));
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
    this.service = InProcessService.start(new ServiceConfig(props), Duration.ofMinutes(2));
    this.fired =
        new CommittedRecords(
            bootstrapServers, List.of(topic("open")), DelayHeaders.IDEMPOTENCY_KEY);
    this.dead = new CommittedRecords(bootstrapServers, List.of(topic("dlq")), DelayHeaders.ERROR);
  }

  String topic(String suffix) {
    return name + "-" + suffix;
  }

  String applicationId() {
    return "faults-" + name;
  }

  /** A schedule request for the scenario's request topic. */
  ProducerRecord<byte[], byte[]> request(String id, String target, long dueMs, byte[] payload) {
    ProducerRecord<byte[], byte[]> record =
        new ProducerRecord<>(topic("requests"), utf8(id), payload);
    record.headers().add(DelayHeaders.TARGET_TOPIC, utf8(target));
    record.headers().add(DelayHeaders.FIRE_AT, utf8(Long.toString(dueMs)));
    return record;
  }

  /**
   * Sends {@link #HEALTHY} tasks due 5 ms apart over the second around {@code dueMs}, with the bad
   * requests in their middle.
   */
  void sendAround(long dueMs, List<ProducerRecord<byte[], byte[]>> bad) throws Exception {
    List<Future<RecordMetadata>> badSends = new ArrayList<>();
    try (KafkaProducer<byte[], byte[]> producer = producer()) {
      for (int i = 0; i < HEALTHY; i++) {
        long due = dueMs - 500 + i;
        String id = "ok-" + i;
        producer.send(request(id, topic("open"), due, utf8("payload of " + id)));
        healthy.add(DelayHeaders.idempotencyKey(id, due));
        if (i == HEALTHY / 2) {
          bad.forEach(record -> badSends.add(producer.send(record)));
        }
      }
      producer.flush();
    }
    for (Future<RecordMetadata> sent : badSends) {
      sent.get(); // the broker took every bad request: what happens next is kdelay's doing
    }
  }

  /** Sends a record and waits until the broker has it. */
  void send(ProducerRecord<byte[], byte[]> record) throws Exception {
    try (KafkaProducer<byte[], byte[]> producer = producer()) {
      producer.send(record).get();
    }
  }

  private KafkaProducer<byte[], byte[]> producer() {
    return new KafkaProducer<>(
        Map.of(
            ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
            bootstrapServers,
            ProducerConfig.MAX_REQUEST_SIZE_CONFIG,
            4 * 1024 * 1024,
            ProducerConfig.ACKS_CONFIG,
            "all"),
        new ByteArraySerializer(),
        new ByteArraySerializer());
  }

  /**
   * Makes kdelay read a topic's metadata now, and waits until it has: a task to the topic, due at
   * once, delivered. Run with a {@link DelayConfig#TARGET_TOPICS_LOOKUP_TIMEOUT_CONFIG} longer than
   * the wait, so that the task cannot go on before the look-up answers (and with a long {@link
   * DelayConfig#TARGET_TOPICS_REFRESH_CONFIG}, so that kdelay believes what it read until the task
   * under test fires). {@link #awaitApplied} is not enough: a request for a topic kdelay has not
   * looked up waits aside on the reroute topic, which it does not watch.
   */
  void awaitKnown(String topic) throws Exception {
    try (CommittedRecords delivered =
        new CommittedRecords(bootstrapServers, List.of(topic), DelayHeaders.IDEMPOTENCY_KEY)) {
      send(request("look-up-" + topic, topic, System.currentTimeMillis(), utf8("look-up")));
      Await.until(
          "a first task to reach " + topic, Duration.ofSeconds(60), () -> delivered.size() >= 1);
    }
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
   * Waits for every healthy task and this many dead letters, reads on to the last stable offsets,
   * prints the figures as a {@code FAULTS} line, and checks that every healthy task fired exactly
   * once.
   *
   * @return the dead letters
   */
  List<Received> finish(int deadLetters) throws InterruptedException {
    return finish(deadLetters, true);
  }

  /**
   * As {@link #finish(int)}, for kdelay run at least once: every healthy task fired, some maybe
   * more than once (a failed stream thread's last batch fires again), each with its own key.
   */
  List<Received> finishAtLeastOnce(int deadLetters) throws InterruptedException {
    return finish(deadLetters, false);
  }

  private List<Received> finish(int deadLetters, boolean exactlyOnce) throws InterruptedException {
    Await.until(
        "every healthy task to fire", Duration.ofSeconds(120), () -> fired.containsAll(healthy));
    Await.until(
        deadLetters + " dead letters", Duration.ofSeconds(60), () -> dead.size() >= deadLetters);
    List<Received> letters = dead.finish(Duration.ofSeconds(30));
    List<Received> committed = fired.finish(Duration.ofSeconds(30));
    report(committed, letters);
    Map<String, Long> counts =
        committed.stream()
            .collect(
                Collectors.groupingBy(
                    r -> r.header(DelayHeaders.IDEMPOTENCY_KEY), Collectors.counting()));
    assertThat(counts.keySet()).containsExactlyInAnyOrderElementsOf(healthy);
    if (exactlyOnce) {
      assertThat(counts.values()).as("fires per healthy task").allMatch(count -> count == 1);
    }
    return letters;
  }

  /** How many stream threads died: a replacement takes the next number, one thread runs. */
  int threadFailures() {
    return service.replacementThreads().stream()
        .map(THREAD_NUMBER::matcher)
        .filter(Matcher::find)
        .mapToInt(m -> Integer.parseInt(m.group(1)) - 1)
        .max()
        .orElse(0);
  }

  private void report(List<Received> committed, List<Received> letters) {
    long[] late =
        committed.stream()
            .mapToLong(r -> r.receivedAtMs() - r.headerMs(DelayHeaders.DUE_AT))
            .sorted()
            .toArray();
    String line =
        String.format(
            "FAULTS %s: healthy fired %d (distinct %d) of %d, due->visible p50 %d / p99 %d / max"
                + " %d ms; dead letters %s; stream thread failures %d",
            name,
            committed.size(),
            committed.stream().map(r -> r.header(DelayHeaders.IDEMPOTENCY_KEY)).distinct().count(),
            HEALTHY,
            percentile(late, 0.50),
            percentile(late, 0.99),
            late.length == 0 ? -1 : late[late.length - 1],
            letters.stream()
                .map(r -> key(r) + ":" + r.header(DelayHeaders.ERROR))
                .collect(Collectors.toList()),
            threadFailures());
    System.out.println(line);
  }

  private static long percentile(long[] sorted, double p) {
    return sorted.length == 0 ? -1 : sorted[(int) Math.min(sorted.length - 1, sorted.length * p)];
  }

  static String key(Received received) {
    byte[] key = received.record().key();
    return key == null ? null : new String(key, StandardCharsets.UTF_8);
  }

  static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public void close() throws Exception {
    fired.close();
    dead.close();
    service.close();
  }
}

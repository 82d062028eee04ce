package dev.kdelay.service;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.topology.DelayConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A burst of tasks due in the same millisecond becomes visible as it drains: a stream thread's
 * first transaction of the burst carries at most {@code delay.max.fires.per.commit} fires and each
 * later one at most twice the one before, so a {@code read_committed} consumer gets the first ones
 * while the rest still fire, instead of all of them when the last has fired.
 *
 * <p>What proves it is the target partition's offsets, not a clock: every transaction commit writes
 * a marker into each partition it wrote to, and a marker takes an offset. Consecutive fired records
 * of one transaction have consecutive offsets; between two transactions the offsets skip one. So N
 * transactions leave at least N - 1 gaps in the committed records' offsets.
 */
@Tag("integration")
@ExtendWith(KafkaClusterExtension.class)
class BurstDrainIT {

  private static final int TASKS = 12_000;
  private static final int FIRES_PER_COMMIT = 1_000;
  private static final int PARTITIONS = 6;
  private static final Duration LEAD = Duration.ofSeconds(15);
  private static final Duration TIMEOUT = Duration.ofSeconds(120);

  @TempDir Path stateDir;

  private final List<AutoCloseable> resources = new ArrayList<>();
  private String bootstrapServers;
  private String name;

  @BeforeEach
  void setUp(KafkaTestCluster kafka, TestInfo test) {
    bootstrapServers = kafka.bootstrapServers();
    name = "burst-" + UUID.randomUUID().toString().substring(0, 8);
  }

  @AfterEach
  void tearDown() throws Exception {
    for (int i = resources.size() - 1; i >= 0; i--) {
      resources.get(i).close();
    }
  }

  @Test
  void shouldCommitABurstInTransactionsThatStartAtTheFiresPerCommitAndAtMostDouble()
      throws Exception {
    // given: a running service and a target of one partition
    String target = name + "-target";
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrapServers))) {
      admin
          .createTopics(List.of(new NewTopic(target, 1, (short) 1)))
          .all()
          .get(60, TimeUnit.SECONDS);
    }
    ServiceConfig config = config();
    DelayService service = new DelayService(config);
    resources.add(service);
    service.start(Optional.of(Duration.ofSeconds(60)));

    // when: TASKS tasks due in the same millisecond, all taken in before it
    long dueMs = System.currentTimeMillis() + LEAD.toMillis();
    Set<String> ids = send(config, target, dueMs);
    awaitRequestsCommitted(config);
    assertThat(System.currentTimeMillis())
        .as("every request taken in before the due time (else they fire as they arrive)")
        .isLessThan(dueMs);

    // then: each fires once, none early
    List<ConsumerRecord<String, String>> fired = readCommitted(target, TASKS);
    Set<String> seen = new HashSet<>();
    List<Integer> transactions = new ArrayList<>();
    long previous = -1;
    for (ConsumerRecord<String, String> record : fired) {
      assertThat(seen.add(record.key())).as("fired once: %s", record.key()).isTrue();
      assertThat(firedAt(record)).as("fired no earlier than due").isGreaterThanOrEqualTo(dueMs);
      if (previous < 0 || record.offset() > previous + 1) {
        transactions.add(0); // a commit marker took the offset between: a new transaction
      }
      transactions.set(transactions.size() - 1, transactions.get(transactions.size() - 1) + 1);
      previous = record.offset();
    }
    assertThat(seen).isEqualTo(ids);

    // and: the first transaction carries at most FIRES_PER_COMMIT fires, each later one at most
    // twice the one before it could carry (16 times the first at most): 1,000, 2,000, 4,000, ...
    // so 12,000 take at least 4 transactions
    System.out.printf("burst of %,d: fires per transaction %s%n", TASKS, transactions);
    long allowed = FIRES_PER_COMMIT;
    for (int i = 0; i < transactions.size(); i++) {
      assertThat(transactions.get(i))
          .as("fires in transaction %d of %s", i, transactions)
          .isLessThanOrEqualTo((int) allowed);
      allowed = Math.min(allowed * 2, FIRES_PER_COMMIT * 16L);
    }
    assertThat(transactions).as("transactions of the burst").hasSizeGreaterThanOrEqualTo(4);
  }

  private ServiceConfig config() {
    Map<String, Object> props = new HashMap<>();
    props.put(DelayConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    props.put(DelayConfig.APPLICATION_ID_CONFIG, "kdelay-it-" + name);
    props.put(DelayConfig.STATE_DIR_CONFIG, stateDir.toString());
    props.put(DelayConfig.REQUESTS_TOPIC_CONFIG, name + "-requests");
    props.put(DelayConfig.DLQ_TOPIC_CONFIG, name + "-dlq");
    props.put(DelayConfig.MAX_FIRES_PER_COMMIT_CONFIG, FIRES_PER_COMMIT);
    props.put(ServiceConfig.TOPIC_PARTITIONS_CONFIG, PARTITIONS);
    props.put(ServiceConfig.TOPIC_REPLICATION_FACTOR_CONFIG, (short) 1);
    props.put(ServiceConfig.HTTP_PORT_CONFIG, 0);
    return new ServiceConfig(props);
  }

  private Set<String> send(ServiceConfig config, String target, long dueMs) throws Exception {
    Map<String, Object> props = new HashMap<>();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    props.put(ProducerConfig.LINGER_MS_CONFIG, 20);
    Set<String> ids = new HashSet<>();
    List<Future<RecordMetadata>> sent = new ArrayList<>();
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
      for (int i = 0; i < TASKS; i++) {
        String id = name + "-" + i;
        ProducerRecord<String, String> request =
            new ProducerRecord<>(config.delay().requestsTopic(), id, "payload " + i);
        request.headers().add(DelayHeaders.TARGET_TOPIC, utf8(target));
        request.headers().add(DelayHeaders.FIRE_AT, utf8(Long.toString(dueMs)));
        sent.add(producer.send(request));
        ids.add(id);
      }
    }
    for (Future<RecordMetadata> each : sent) {
      each.get(30, TimeUnit.SECONDS);
    }
    return ids;
  }

  /** Waits until the service has committed its consumption of every request sent. */
  private void awaitRequestsCommitted(ServiceConfig config) throws Exception {
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrapServers))) {
      Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
      for (int p = 0; p < PARTITIONS; p++) {
        latest.put(new TopicPartition(config.delay().requestsTopic(), p), OffsetSpec.latest());
      }
      Map<TopicPartition, Long> ends = new HashMap<>();
      admin.listOffsets(latest).all().get().forEach((tp, info) -> ends.put(tp, info.offset()));
      long deadline = System.nanoTime() + TIMEOUT.toNanos();
      while (true) {
        Map<TopicPartition, OffsetAndMetadata> committed =
            admin
                .listConsumerGroupOffsets(config.delay().applicationId())
                .partitionsToOffsetAndMetadata()
                .get();
        boolean done =
            ends.entrySet().stream()
                .allMatch(
                    end ->
                        committed.get(end.getKey()) != null
                            && committed.get(end.getKey()).offset() >= end.getValue());
        if (done) {
          return;
        }
        assertThat(System.nanoTime()).as("requests committed in time").isLessThan(deadline);
        Thread.sleep(20); // the poll interval of this wait, not a guess at how long it takes
      }
    }
  }

  private List<ConsumerRecord<String, String>> readCommitted(String topic, int count) {
    Map<String, Object> props = new HashMap<>();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    List<ConsumerRecord<String, String>> records = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
      consumer.assign(List.of(new TopicPartition(topic, 0)));
      long deadline = System.nanoTime() + TIMEOUT.toNanos();
      while (records.size() < count) {
        assertThat(System.nanoTime())
            .as("%d of %d fired records read", records.size(), count)
            .isLessThan(deadline);
        consumer.poll(Duration.ofMillis(200)).forEach(records::add);
      }
    }
    return records;
  }

  private static long firedAt(ConsumerRecord<String, String> record) {
    return Long.parseLong(
        new String(
            record.headers().lastHeader(DelayHeaders.FIRED_AT).value(), StandardCharsets.UTF_8));
  }

  private static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}

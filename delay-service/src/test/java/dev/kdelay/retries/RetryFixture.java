package dev.kdelay.retries;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.client.retry.RetryPolicy;
import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.service.DelayService;
import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.topology.DelayConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * A running kdelay for retry tests: one {@link DelayService} in the test JVM on the test cluster,
 * with a request topic of its own, and the topic plumbing the tests share (create, produce, read to
 * the end, committed offsets). Public for the Spring Kafka module's tests, which reuse it.
 */
public final class RetryFixture implements AutoCloseable {

  /** How long a wait on the broker or on kdelay may take before the test fails. */
  public static final Duration TIMEOUT = Duration.ofSeconds(60);

  private final String bootstrapServers;
  private final ServiceConfig config;
  private final DelayService service;
  private final List<AutoCloseable> resources = new ArrayList<>();

  private RetryFixture(String bootstrapServers, ServiceConfig config, DelayService service) {
    this.bootstrapServers = bootstrapServers;
    this.config = config;
    this.service = service;
  }

  /**
   * Starts kdelay on the cluster and waits until it runs.
   *
   * @param bootstrapServers the test cluster
   * @param stateDir kdelay's state directory
   */
  public static RetryFixture start(String bootstrapServers, Path stateDir) {
    String name = "retries-" + UUID.randomUUID().toString().substring(0, 8);
    Map<String, Object> props = new HashMap<>();
    props.put(DelayConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    props.put(DelayConfig.APPLICATION_ID_CONFIG, "kdelay-" + name);
    props.put(DelayConfig.STATE_DIR_CONFIG, stateDir.toString());
    props.put(DelayConfig.REQUESTS_TOPIC_CONFIG, name + "-requests");
    props.put(DelayConfig.DLQ_TOPIC_CONFIG, name + "-dlq");
    props.put(ServiceConfig.TOPIC_PARTITIONS_CONFIG, 2);
    props.put(ServiceConfig.TOPIC_REPLICATION_FACTOR_CONFIG, (short) 1);
    props.put(ServiceConfig.HTTP_PORT_CONFIG, 0);
    // Commit right after a fire, as a quiet instance does, even when the thread committed its
    // intake moments before: the default makes such a fire wait up to 20 ms to share a
    // transaction, which is throughput the tests do not need and latency added to their gaps.
    props.put(DelayConfig.FIRE_COMMIT_INTERVAL_CONFIG, 0L);
    ServiceConfig config = new ServiceConfig(props);
    DelayService service = new DelayService(config);
    service.start(Optional.of(TIMEOUT));
    return new RetryFixture(bootstrapServers, config, service);
  }

  /** The cluster's bootstrap servers. */
  public String bootstrapServers() {
    return bootstrapServers;
  }

  /** kdelay's request topic. */
  public String requestsTopic() {
    return config.delay().requestsTopic();
  }

  /** kdelay's own dead-letter topic, where the requests it refuses go. */
  public String kdelayDeadLetterTopic() {
    return config.delay().dlqTopic();
  }

  /** Creates single-partition topics. */
  public void createTopics(String... topics) throws Exception {
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrapServers))) {
      List<NewTopic> created = new ArrayList<>();
      for (String topic : topics) {
        created.add(new NewTopic(topic, 1, (short) 1));
      }
      admin.createTopics(created).all().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  /**
   * A byte-array producer, idempotent, closed with the fixture; transactional if an id is given.
   */
  public KafkaProducer<byte[], byte[]> producer(String transactionalId) {
    Map<String, Object> props = new HashMap<>();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    if (transactionalId != null) {
      props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
    }
    KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    resources.add(producer);
    return producer;
  }

  /**
   * The configuration of a consumer that a test runs as a retrying application: {@code
   * read_committed}, commits by hand, starts at the earliest offset, and returns from a fetch as
   * soon as a record is there (so that the test measures kdelay, not the fetch wait).
   */
  public Map<String, Object> consumerConfig(String group) {
    Map<String, Object> props = new HashMap<>();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 5);
    return props;
  }

  /**
   * Every record of a topic, read from its beginning to its end as it is at the call, with the
   * isolation level given; partition by partition.
   */
  public List<ConsumerRecord<String, String>> readAll(String topic, IsolationLevel isolation) {
    Map<String, Object> props = new HashMap<>();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation.toString());
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
      List<TopicPartition> partitions =
          consumer.partitionsFor(topic).stream()
              .map(info -> new TopicPartition(topic, info.partition()))
              .sorted(Comparator.comparingInt(TopicPartition::partition))
              .toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      // For read_committed the end offsets are the last stable offsets.
      Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
      List<ConsumerRecord<String, String>> records = new ArrayList<>();
      long deadline = System.nanoTime() + TIMEOUT.toNanos();
      while (!partitions.stream().allMatch(p -> consumer.position(p) >= ends.get(p))) {
        if (System.nanoTime() > deadline) {
          throw new AssertionError(topic + " not read to offsets " + ends + " within " + TIMEOUT);
        }
        consumer.poll(Duration.ofMillis(20)).forEach(records::add);
      }
      records.sort(
          Comparator.comparingInt(ConsumerRecord<String, String>::partition)
              .thenComparingLong(ConsumerRecord::offset));
      return records;
    }
  }

  /** Waits until a topic holds at least this many records for this reader. */
  public List<ConsumerRecord<String, String>> awaitRecords(
      String topic, IsolationLevel isolation, int count) {
    List<List<ConsumerRecord<String, String>>> last = new ArrayList<>(List.of(List.of()));
    await(
        () -> {
          last.set(0, readAll(topic, isolation));
          return last.get(0).size() >= count;
        },
        count + " records in " + topic);
    return last.get(0);
  }

  /**
   * Waits until kdelay has committed its consumption of every request written so far, so that no
   * request is still on its way to being applied.
   */
  public void awaitRequestsApplied() throws Exception {
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrapServers))) {
      Map<TopicPartition, Long> ends = new HashMap<>();
      for (int p = 0; p < config.topicPartitions(); p++) {
        TopicPartition partition = new TopicPartition(requestsTopic(), p);
        ends.put(partition, endOffset(admin, partition));
      }
      await(
          () -> {
            Map<TopicPartition, OffsetAndMetadata> committed =
                committedOffsets(admin, config.delay().applicationId());
            return ends.entrySet().stream()
                .allMatch(
                    end -> {
                      OffsetAndMetadata offset = committed.get(end.getKey());
                      return end.getValue() == 0
                          || (offset != null && offset.offset() >= end.getValue());
                    });
          },
          "kdelay applied every request");
    }
  }

  /** The offsets a consumer group committed. */
  public Map<TopicPartition, OffsetAndMetadata> committedOffsets(String group) {
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrapServers))) {
      return committedOffsets(admin, group);
    }
  }

  private static Map<TopicPartition, OffsetAndMetadata> committedOffsets(
      Admin admin, String group) {
    try {
      return admin
          .listConsumerGroupOffsets(group)
          .partitionsToOffsetAndMetadata()
          .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("cannot list the offsets of " + group, e);
    }
  }

  private static long endOffset(Admin admin, TopicPartition partition) throws Exception {
    return admin
        .listOffsets(Map.of(partition, org.apache.kafka.clients.admin.OffsetSpec.latest()))
        .partitionResult(partition)
        .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
        .offset();
  }

  /** How precisely a retry is scheduled: 50 ms, kdelay's p99 due-to-visible lateness. */
  public static final long PRECISION_MS = 50;

  /**
   * How late a retry may be seen at worst. Visibility waits for kdelay's fire and its transaction
   * commit: on a 2-core machine shared with other builds, 15-40 ms after the due time in most runs,
   * up to 60 ms at a load average of 4, and up to 650 ms at 9. A 50 ms bound there would fail for
   * the machine, not for the code; the measured figures are printed instead.
   */
  public static final long WORST_LATENESS_MS = 1_000;

  /**
   * Asserts that a record's retries followed the policy, and prints where each gap went. For each
   * failed attempt k the retry was scheduled for the failure plus the policy's delay (within
   * {@value #PRECISION_MS} ms: the handler's own work, whatever the load), fired no earlier than
   * that, and received by the consumer never before the delay and at most {@value
   * #WORST_LATENESS_MS} ms after it.
   *
   * @param test names the printed line
   * @param policy the policy the retries followed
   * @param failedAt when attempt k failed, for k = 1, 2, ...
   * @param delivered the deliveries of the record, the first delivery first
   * @param deliveredAt when each delivery was received
   */
  public static void assertRetryGaps(
      String test,
      RetryPolicy policy,
      List<Long> failedAt,
      List<? extends ConsumerRecord<?, ?>> delivered,
      List<Long> deliveredAt) {
    List<String> gaps = new ArrayList<>();
    for (int failed = 1; failed < delivered.size(); failed++) {
      ConsumerRecord<?, ?> retry = delivered.get(failed);
      long failure = failedAt.get(failed - 1);
      gaps.add(
          String.format(
              "%d ms (due +%d, fired +%d)",
              deliveredAt.get(failed) - failure,
              number(retry, DelayHeaders.DUE_AT) - failure,
              number(retry, DelayHeaders.FIRED_AT) - failure));
    }
    System.out.printf("%s: policy %s; gaps %s%n", test, delays(policy, failedAt.size()), gaps);
    assertThat(delivered).hasSize(failedAt.size() + 1);
    for (int failed = 1; failed < delivered.size(); failed++) {
      ConsumerRecord<?, ?> retry = delivered.get(failed);
      long failure = failedAt.get(failed - 1);
      long delay = policy.delay(failed).toMillis();
      long due = number(retry, DelayHeaders.DUE_AT);
      assertThat(due - failure)
          .as("due time of the retry after failed attempt %d", failed)
          .isBetween(delay, delay + PRECISION_MS);
      assertThat(number(retry, DelayHeaders.FIRED_AT))
          .as("fire time of the retry after failed attempt %d", failed)
          .isGreaterThanOrEqualTo(due);
      assertThat(deliveredAt.get(failed) - failure)
          .as("gap after failed attempt %d, as the consumer saw it", failed)
          .isBetween(delay, delay + WORST_LATENESS_MS);
    }
  }

  private static List<Long> delays(RetryPolicy policy, int attempts) {
    List<Long> delays = new ArrayList<>();
    for (int failed = 1; failed <= attempts; failed++) {
      delays.add(policy.delay(failed).toMillis());
    }
    return delays;
  }

  private static long number(ConsumerRecord<?, ?> record, String name) {
    Header header = record.headers().lastHeader(name);
    assertThat(header).as("header %s", name).isNotNull();
    return Long.parseLong(new String(header.value(), StandardCharsets.UTF_8));
  }

  /** Waits for a condition, checking it every 20 ms, and fails the test if it does not hold. */
  public static void await(BooleanSupplier condition, String what) {
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within " + TIMEOUT + ": " + what);
      }
      try {
        Thread.sleep(20); // the poll interval of this wait, not a guess at how long it takes
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted waiting for " + what, e);
      }
    }
  }

  @Override
  public void close() throws Exception {
    for (int i = resources.size() - 1; i >= 0; i--) {
      resources.get(i).close();
    }
    service.close();
  }
}

package dev.kdelay.service;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.topology.DelayConfig;
import dev.kdelay.topology.internals.delivery.DeliveryQuarantine;
import dev.kdelay.topology.internals.delivery.RescuingProducer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The producer kdelay gives Kafka Streams ({@link RescuingProducer}), against a real broker that
 * refuses some of the records: under exactly-once the transaction commits with every other record
 * once and each refused fired record's dead letter in its place; at least once the same records
 * arrive. Kafka Streams' callbacks never hear of a rescued refusal; what cannot be rescued reaches
 * them as it came.
 *
 * <p>The target refuses records stamped more than an hour ago ({@code INVALID_TIMESTAMP}, one error
 * per record, the other records of the batch failing with it) and records over 2,000 bytes ({@code
 * MESSAGE_TOO_LARGE}, for the whole batch, which the producer splits until the record is alone).
 */
@Tag("integration")
@ExtendWith(KafkaClusterExtension.class)
class RescuedWritesIT {

  private static final long HOUR_MS = 3_600_000;
  private static final String APP = "rescuer";

  private Admin admin;
  private String bootstrap;
  private String target;
  private String dlq;
  private DelayConfig config;

  @BeforeEach
  void topics(KafkaTestCluster kafka, TestInfo test) throws Exception {
    bootstrap = kafka.bootstrapServers();
    admin = Admin.create(Map.of("bootstrap.servers", bootstrap));
    String name = "written-" + test.getTestMethod().orElseThrow().getName().hashCode();
    target = name + "-target";
    dlq = name + "-dlq";
    admin
        .createTopics(
            List.of(
                new NewTopic(target, 2, (short) 1)
                    .configs(
                        Map.of(
                            "message.timestamp.type",
                            "CreateTime",
                            "message.timestamp.before.max.ms",
                            Long.toString(HOUR_MS),
                            "max.message.bytes",
                            "2000")),
                new NewTopic(dlq, 1, (short) 1),
                new NewTopic(APP + "-delay-schedules-changelog", 1, (short) 1)))
        .all()
        .get(60, TimeUnit.SECONDS);
    config =
        new DelayConfig(
            Map.of(
                DelayConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                DelayConfig.APPLICATION_ID_CONFIG, APP,
                DelayConfig.REQUESTS_TOPIC_CONFIG, name + "-requests",
                DelayConfig.DLQ_TOPIC_CONFIG, dlq));
  }

  @AfterEach
  void close() throws Exception {
    admin.deleteTopics(List.of(APP + "-delay-schedules-changelog")).all().get(60, TimeUnit.SECONDS);
    admin.close();
  }

  @Test
  void shouldCommitEveryOtherRecordOnceAndADeadLetterForEachRefusedFireUnderExactlyOnce()
      throws Exception {
    // given: 40 records to the target, 6 of them refused (4 too old, 2 too large), and the store's
    // changelog records among them
    DeliveryQuarantine quarantine = new DeliveryQuarantine(config);
    Answers answers = new Answers();
    Mix mix = mix(40, Set.of(3, 11, 12, 25), Set.of(7, 30));

    // when
    try (Producer<byte[], byte[]> producer =
        new RescuingProducer(realProducer("rescue-eos"), quarantine)) {
      producer.initTransactions();
      producer.beginTransaction();
      for (ProducerRecord<byte[], byte[]> record : mix.records()) {
        producer.send(record, answers.callback(record));
      }
      producer.flush();
      producer.commitTransaction();
    }

    // then
    assertThat(answers.errors).as("refusals Kafka Streams heard of").isEmpty();
    assertThat(answers.successes.keySet()).hasSize(mix.records().size());
    assertThat(committed(target)).containsExactlyInAnyOrderElementsOf(mix.accepted());
    assertThat(committed(APP + "-delay-schedules-changelog")).hasSize(mix.changelog());
    assertDeadLetters(mix.refused());
    assertThat(quarantine.rescued()).isEqualTo(mix.refused().size());
    assertThat(quarantine.learned()).as("refusals that fail a stream thread").isZero();
  }

  @Test
  void shouldWriteEveryOtherRecordOnceAndADeadLetterForEachRefusedFireAtLeastOnce()
      throws Exception {
    // given
    DeliveryQuarantine quarantine = new DeliveryQuarantine(config);
    Answers answers = new Answers();
    Mix mix = mix(40, Set.of(0, 9, 10, 39), Set.of(20));

    // when
    try (Producer<byte[], byte[]> producer = new RescuingProducer(realProducer(null), quarantine)) {
      for (ProducerRecord<byte[], byte[]> record : mix.records()) {
        producer.send(record, answers.callback(record));
      }
      producer.flush();
    }

    // then
    assertThat(answers.errors).isEmpty();
    assertThat(answers.successes.values()).allMatch(count -> count.get() == 1);
    assertThat(committed(target)).containsExactlyInAnyOrderElementsOf(mix.accepted());
    assertDeadLetters(mix.refused());
    assertThat(quarantine.learned()).isZero();
  }

  @Test
  void shouldAnswerARefusalItCannotRescueAsItCameAndCommitNothing() throws Exception {
    // given: a refused record that is no fired record (no idempotency key): it has no dead letter
    DeliveryQuarantine quarantine = new DeliveryQuarantine(config);
    Answers answers = new Answers();
    Mix mix = mix(10, Set.of(), Set.of());
    ProducerRecord<byte[], byte[]> stranger =
        new ProducerRecord<>(
            target, null, System.currentTimeMillis() - 2 * HOUR_MS, utf8("x"), utf8("x"));

    // when
    try (Producer<byte[], byte[]> producer =
        new RescuingProducer(realProducer("rescue-none"), quarantine)) {
      producer.initTransactions();
      producer.beginTransaction();
      for (ProducerRecord<byte[], byte[]> record : mix.records()) {
        producer.send(record, answers.callback(record));
      }
      producer.send(stranger, answers.callback(stranger));
      producer.flush();

      // then: Kafka Streams hears of it, and the commit fails as it would have
      assertThat(answers.errors).containsKey("x");
      assertThatThrownBy(producer::commitTransaction).isInstanceOf(KafkaException.class);
      producer.abortTransaction();
    }
    assertThat(committed(target)).isEmpty();
    assertThat(committed(dlq)).isEmpty();
    assertThat(quarantine.rescued()).isZero();
  }

  @Test
  void shouldTellKafkaStreamsACommitOfATransactionTheCoordinatorAbortedIsFenced() throws Exception {
    // given: an open transaction with a record in it, which the coordinator aborts on its own
    // (its timeout passed: the process was paused, as a zombie is), bumping the producer's epoch
    DeliveryQuarantine quarantine = new DeliveryQuarantine(config);
    Map<String, Object> settings = new HashMap<>();
    settings.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 1_000);
    try (Producer<byte[], byte[]> producer =
        new RescuingProducer(realProducer("rescue-timed-out", settings), quarantine)) {
      producer.initTransactions();
      producer.beginTransaction();
      producer.send(new ProducerRecord<>(target, utf8("late"), utf8("late"))).get(30, SECONDS);
      TransactionState state = awaitTransactionEnded("rescue-timed-out");

      // when: the producer wakes up and commits
      Throwable refusal = catchThrowable(producer::commitTransaction);

      // then: Kafka Streams hears a fence (it closes the tasks as lost, makes a new producer and
      // rejoins), not a fatal error that would cost the stream thread; the 4.3.1 broker answers
      // INVALID_TXN_STATE here (KAFKA-20785), a fixed one PRODUCER_FENCED
      assertThat(state).isEqualTo(TransactionState.COMPLETE_ABORT);
      assertThat(refusal)
          .as(
              "what commitTransaction threw, caused by %s",
              refusal == null ? null : refusal.getCause())
          .isInstanceOf(ProducerFencedException.class);
    }
    assertThat(committed(target)).isEmpty();
  }

  /** Waits until the coordinator has ended the transaction, and says how it ended. */
  private TransactionState awaitTransactionEnded(String transactionalId) throws Exception {
    long deadline = System.nanoTime() + SECONDS.toNanos(60);
    while (true) {
      TransactionState state =
          admin
              .describeTransactions(List.of(transactionalId))
              .description(transactionalId)
              .get(30, SECONDS)
              .state();
      if (state == TransactionState.COMPLETE_ABORT || state == TransactionState.COMPLETE_COMMIT) {
        return state;
      }
      assertThat(System.nanoTime())
          .as("the coordinator to end the transaction; it is %s", state)
          .isLessThan(deadline);
      Thread.sleep(100); // the poll interval of this wait, not a guess at how long it takes
    }
  }

  /**
   * Records to the target, fired-record shaped, with a changelog record after every fifth.
   *
   * @param records what is sent, in order
   * @param accepted the values the target must hold
   * @param refused the idempotency keys that must be dead-lettered
   * @param changelog how many changelog records were sent
   */
  private record Mix(
      List<ProducerRecord<byte[], byte[]>> records,
      List<String> accepted,
      List<String> refused,
      int changelog) {}

  private Mix mix(int count, Set<Integer> tooOld, Set<Integer> tooLarge) {
    long now = System.currentTimeMillis();
    List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
    List<String> accepted = new ArrayList<>();
    List<String> refused = new ArrayList<>();
    int changelog = 0;
    for (int n = 0; n < count; n++) {
      String key = "id-" + n + "@" + now;
      long timestamp = tooOld.contains(n) ? now - 2 * HOUR_MS : now;
      String value = tooLarge.contains(n) ? "v" + n + "-" + "x".repeat(3_000) : "v" + n;
      ProducerRecord<byte[], byte[]> record =
          new ProducerRecord<>(target, null, timestamp, utf8("id-" + n), utf8(value));
      record.headers().add(DelayHeaders.IDEMPOTENCY_KEY, utf8(key));
      record.headers().add(DelayHeaders.DUE_AT, utf8(Long.toString(timestamp)));
      records.add(record);
      (tooOld.contains(n) || tooLarge.contains(n) ? refused : accepted)
          .add(tooOld.contains(n) || tooLarge.contains(n) ? key : value);
      if (n % 5 == 4) {
        records.add(
            new ProducerRecord<>(
                APP + "-delay-schedules-changelog", utf8("id-" + n), utf8("fired " + n)));
        changelog++;
      }
    }
    return new Mix(records, accepted, refused, changelog);
  }

  /** What Kafka Streams' callbacks heard, by record value (or key, for errors). */
  private static final class Answers {
    final Map<String, AtomicInteger> successes = new ConcurrentHashMap<>();
    final Map<String, Exception> errors = new ConcurrentHashMap<>();

    Callback callback(ProducerRecord<byte[], byte[]> record) {
      String name = new String(record.value(), StandardCharsets.UTF_8);
      return (metadata, error) -> {
        if (error == null) {
          successes.computeIfAbsent(name, k -> new AtomicInteger()).incrementAndGet();
        } else {
          errors.put(name, error);
        }
      };
    }
  }

  private void assertDeadLetters(List<String> refused) {
    List<ConsumerRecord<byte[], byte[]>> letters = committedRecords(dlq);
    Set<String> keys = new TreeSet<>();
    for (ConsumerRecord<byte[], byte[]> letter : letters) {
      assertThat(header(letter, DelayHeaders.ERROR)).isEqualTo("UNDELIVERABLE");
      assertThat(header(letter, DelayHeaders.TARGET_TOPIC)).isEqualTo(target);
      assertThat(header(letter, DelayHeaders.ERROR_MESSAGE)).startsWith("the target refused it: ");
      keys.add(header(letter, DelayHeaders.IDEMPOTENCY_KEY));
    }
    assertThat(letters).hasSize(refused.size());
    assertThat(keys).containsExactlyInAnyOrderElementsOf(refused);
  }

  private List<String> committed(String topic) {
    List<String> values = new ArrayList<>();
    for (ConsumerRecord<byte[], byte[]> record : committedRecords(topic)) {
      values.add(new String(record.value(), StandardCharsets.UTF_8));
    }
    return values;
  }

  /**
   * Every committed record of a topic, read to its high watermark: a {@code read_committed} reader
   * gets past it only once every transaction written below it is committed or aborted (its marker
   * written), which the end of a commit does not wait for.
   */
  private List<ConsumerRecord<byte[], byte[]>> committedRecords(String topic) {
    Map<String, Object> props = new HashMap<>();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> partitions =
          consumer.partitionsFor(topic).stream()
              .map(p -> new TopicPartition(topic, p.partition()))
              .toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> ends = new HashMap<>();
      try {
        admin
            .listOffsets(
                partitions.stream().collect(Collectors.toMap(p -> p, p -> OffsetSpec.latest())))
            .all()
            .get(30, TimeUnit.SECONDS)
            .forEach((partition, info) -> ends.put(partition, info.offset()));
      } catch (Exception e) {
        throw new AssertionError("the high watermarks of " + topic, e);
      }
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (partitions.stream().anyMatch(p -> consumer.position(p) < ends.get(p))) {
        assertThat(System.nanoTime()).as("reading " + topic + " to its end").isLessThan(deadline);
        consumer.poll(Duration.ofMillis(200)).forEach(records::add);
      }
    }
    return records;
  }

  private KafkaProducer<byte[], byte[]> realProducer(String transactionalId) {
    return realProducer(transactionalId, Map.of());
  }

  private KafkaProducer<byte[], byte[]> realProducer(
      String transactionalId, Map<String, Object> settings) {
    Map<String, Object> props = new HashMap<>(settings);
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(ProducerConfig.LINGER_MS_CONFIG, 20);
    if (transactionalId != null) {
      props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
    }
    return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
  }

  private static String header(ConsumerRecord<byte[], byte[]> record, String name) {
    Header header = record.headers().lastHeader(name);
    return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
  }

  private static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}

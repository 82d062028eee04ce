package dev.kdelay.retries;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.client.retry.DeadLetterReason;
import dev.kdelay.client.retry.RetryHandler;
import dev.kdelay.client.retry.RetryHeaders;
import dev.kdelay.client.retry.RetryOutcome;
import dev.kdelay.client.retry.RetryPolicy;
import dev.kdelay.service.KafkaClusterExtension;
import dev.kdelay.service.KafkaTestCluster;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The SDK's {@link RetryHandler} against a real broker and a running kdelay: a consumer that fails
 * on a record gets it back after the policy's delays, then in the dead-letter topic; with a
 * transactional producer a consumer killed between the failure and its commit still retries once.
 */
@Tag("integration")
@ExtendWith(KafkaClusterExtension.class)
class RetryHandlerIT {

  @TempDir static Path stateDir;

  private static RetryFixture kdelay;

  private String name;

  @BeforeAll
  static void startKdelay(KafkaTestCluster kafka) {
    kdelay = RetryFixture.start(kafka.bootstrapServers(), stateDir);
  }

  @AfterAll
  static void stopKdelay() throws Exception {
    kdelay.close();
  }

  @BeforeEach
  void name(TestInfo test) {
    name =
        test.getTestMethod().orElseThrow().getName()
            + "-"
            + UUID.randomUUID().toString().substring(0, 8);
  }

  @Test
  void shouldRetryAfterThePolicysDelaysWhenARecordFailsThreeTimesThenSucceeds() throws Exception {
    // given: no jitter, so that every gap is known to the millisecond
    RetryPolicy policy =
        RetryPolicy.builder()
            .maxAttempts(4)
            .initialDelay(Duration.ofMillis(500))
            .multiplier(2)
            .jitter(0)
            .build();
    String topic = name;
    kdelay.createTopics(topic, topic + "-dlt");
    KafkaProducer<byte[], byte[]> producer = kdelay.producer(null);
    RetryHandler retries = handler(producer, policy);

    // when: attempts 1 to 3 throw, the 4th succeeds; a first record, retried once, warms up
    // kdelay's path to the topic (its metadata, the JIT) so that the gaps are the steady state's
    List<Long> failedAt = new ArrayList<>();
    List<Long> deliveredAt = new ArrayList<>();
    List<ConsumerRecord<byte[], byte[]>> delivered = new ArrayList<>();
    List<String> processed = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer = consumer(topic)) {
      Consumer<ConsumerRecord<byte[], byte[]>> processing =
          record -> {
            long now = System.currentTimeMillis();
            int attempt = RetryHeaders.attempt(record.headers()) + 1;
            boolean measured = new String(record.key(), UTF_8).equals("order-1");
            if (measured) {
              deliveredAt.add(now);
              delivered.add(record);
            }
            if (attempt < (measured ? 4 : 2)) {
              failedAt.add(System.currentTimeMillis());
              retries.handle(record, new IllegalStateException("attempt " + attempt)).join();
            } else {
              processed.add(new String(record.value(), UTF_8));
            }
          };
      send(producer, topic, "warm-up", "warm up");
      consumeUntil(consumer, processing, () -> !processed.isEmpty());
      failedAt.clear();
      send(producer, topic, "order-1", "pay 10");
      consumeUntil(consumer, processing, () -> processed.size() == 2);
    }

    // then: each retry scheduled and fired after the policy's delay, and received after it
    RetryFixture.assertRetryGaps("RetryHandlerIT", policy, failedAt, delivered, deliveredAt);
    assertThat(processed).containsExactly("warm up", "pay 10");
    kdelay.awaitRequestsApplied();
    List<ConsumerRecord<String, String>> all = kdelay.readAll(topic, IsolationLevel.READ_COMMITTED);
    assertThat(all)
        .filteredOn(record -> record.key().equals("order-1"))
        .extracting(record -> RetryHeaders.attempt(record.headers()))
        .containsExactly(0, 1, 2, 3);
    assertThat(all).hasSize(6);
    assertThat(kdelay.readAll(topic + "-dlt", IsolationLevel.READ_UNCOMMITTED)).isEmpty();
  }

  @Test
  void shouldDeadLetterOnceWithEveryHeaderWhenARecordAlwaysFails() throws Exception {
    // given
    RetryPolicy policy =
        RetryPolicy.builder().maxAttempts(3).initialDelay(Duration.ofMillis(200)).build();
    String topic = name;
    kdelay.createTopics(topic, topic + "-dlt");
    KafkaProducer<byte[], byte[]> producer = kdelay.producer(null);
    RetryHandler retries = handler(producer, policy);
    long offset = send(producer, topic, "order-2", "pay 20");

    // when: every attempt throws
    List<RetryOutcome> outcomes = new ArrayList<>();
    List<Long> failedAt = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer = consumer(topic)) {
      consumeUntil(
          consumer,
          record -> {
            failedAt.add(System.currentTimeMillis());
            outcomes.add(retries.handle(record, new IllegalStateException("no funds")).join());
          },
          () -> outcomes.size() == 3);
    }

    // then: two retries, then one dead letter carrying the record and every header
    assertThat(outcomes)
        .extracting(outcome -> outcome.getClass().getSimpleName() + " " + outcome.attempt())
        .containsExactly("Retried 1", "Retried 2", "DeadLettered 3");
    List<ConsumerRecord<String, String>> letters =
        kdelay.readAll(topic + "-dlt", IsolationLevel.READ_UNCOMMITTED);
    assertThat(letters).hasSize(1);
    ConsumerRecord<String, String> letter = letters.get(0);
    assertThat(letter.key()).isEqualTo("order-2");
    assertThat(letter.value()).isEqualTo("pay 20");
    assertThat(header(letter, "trace")).isEqualTo("00-trace-of-order-2");
    assertThat(header(letter, RetryHeaders.ATTEMPT)).isEqualTo("3");
    assertThat(Long.parseLong(header(letter, RetryHeaders.FIRST_FAILURE_AT)))
        .isBetween(failedAt.get(0) - 1, failedAt.get(0) + 1_000);
    assertThat(header(letter, RetryHeaders.ORIGIN_TOPIC)).isEqualTo(topic);
    assertThat(header(letter, RetryHeaders.ORIGIN_PARTITION)).isEqualTo("0");
    assertThat(header(letter, RetryHeaders.ORIGIN_OFFSET)).isEqualTo(Long.toString(offset));
    assertThat(header(letter, RetryHeaders.EXCEPTION))
        .isEqualTo(IllegalStateException.class.getName());
    assertThat(header(letter, RetryHeaders.EXCEPTION_MESSAGE)).isEqualTo("no funds");
    assertThat(header(letter, RetryHeaders.DEAD_LETTER_REASON))
        .isEqualTo(DeadLetterReason.ATTEMPTS_EXHAUSTED.name());
    kdelay.awaitRequestsApplied();
    assertThat(kdelay.readAll(topic, IsolationLevel.READ_COMMITTED)).hasSize(3);
  }

  @Test
  void shouldDeadLetterAtOnceWhenTheExceptionIsNotRetryable() throws Exception {
    // given
    RetryPolicy policy =
        RetryPolicy.builder().maxAttempts(5).notRetryable(IllegalArgumentException.class).build();
    String topic = name;
    kdelay.createTopics(topic, topic + "-dlt");
    KafkaProducer<byte[], byte[]> producer = kdelay.producer(null);
    RetryHandler retries = handler(producer, policy);
    send(producer, topic, "order-3", "not json");

    // when
    List<RetryOutcome> outcomes = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer = consumer(topic)) {
      consumeUntil(
          consumer,
          record ->
              outcomes.add(
                  retries
                      .handle(record, new RuntimeException(new IllegalArgumentException("bad")))
                      .join()),
          () -> !outcomes.isEmpty());
    }

    // then: dead-lettered on the first failure, nothing asked of kdelay
    List<ConsumerRecord<String, String>> letters =
        kdelay.readAll(topic + "-dlt", IsolationLevel.READ_UNCOMMITTED);
    assertThat(letters).hasSize(1);
    assertThat(header(letters.get(0), RetryHeaders.ATTEMPT)).isEqualTo("1");
    assertThat(header(letters.get(0), RetryHeaders.DEAD_LETTER_REASON))
        .isEqualTo(DeadLetterReason.NOT_RETRYABLE.name());
    assertThat(requestsOf(name)).isEmpty();
  }

  @Test
  void shouldFireOneRetryWhenTheSameFailureIsHandledTwice() throws Exception {
    // given: a consumer that restarts before committing handles the failure twice
    RetryPolicy policy =
        RetryPolicy.builder().initialDelay(Duration.ofMillis(1_500)).jitter(0).build();
    String topic = name;
    kdelay.createTopics(topic, topic + "-dlt");
    KafkaProducer<byte[], byte[]> producer = kdelay.producer(null);
    RetryHandler retries = handler(producer, policy);
    send(producer, topic, "order-4", "pay 40");
    ConsumerRecord<byte[], byte[]> record;
    try (KafkaConsumer<byte[], byte[]> consumer = consumer(topic)) {
      record = pollOne(consumer);
    }

    // when
    RetryOutcome first = retries.handle(record, new IllegalStateException()).join();
    RetryOutcome second = retries.handle(record, new IllegalStateException()).join();

    // then: two requests for one schedule id, one fired retry
    assertThat(requestsOf(name)).hasSize(2);
    kdelay.awaitRequestsApplied();
    kdelay.awaitRecords(topic, IsolationLevel.READ_COMMITTED, 2);
    assertThat(((RetryOutcome.Retried) second).scheduleId())
        .isEqualTo(((RetryOutcome.Retried) first).scheduleId());
    assertThat(kdelay.readAll(topic, IsolationLevel.READ_COMMITTED))
        .extracting(r -> RetryHeaders.attempt(r.headers()))
        .containsExactly(0, 1);

    // and when: handled a third time, after the retry fired (a consumer that stayed away longer)
    retries.handle(record, new IllegalStateException()).join();
    kdelay.awaitRequestsApplied();

    // then: kdelay takes it for the request that fired, refuses it, and fires nothing more
    assertThat(requestsOf(name)).hasSize(3);
    assertThat(kdelay.readAll(kdelay.kdelayDeadLetterTopic(), IsolationLevel.READ_COMMITTED))
        .filteredOn(r -> r.key().equals(((RetryOutcome.Retried) first).scheduleId()))
        .extracting(r -> new String(r.headers().lastHeader("delay-error").value()))
        .containsExactly("SUPERSEDED");
    assertThat(kdelay.readAll(topic, IsolationLevel.READ_COMMITTED))
        .extracting(r -> RetryHeaders.attempt(r.headers()))
        .containsExactly(0, 1);
  }

  @Test
  void shouldScheduleTheRetryOnceWhenTheConsumerDiesBetweenTheFailureAndItsCommit()
      throws Exception {
    // given
    RetryPolicy policy =
        RetryPolicy.builder().initialDelay(Duration.ofMillis(300)).jitter(0).build();
    String topic = name;
    kdelay.createTopics(topic, topic + "-dlt");
    send(kdelay.producer(null), topic, "order-5", "pay 50");
    String transactionalId = name + "-tx";

    // when: the first consumer, in a process of its own, fails on the record, sends the retry in
    // its transaction, and is killed before committing (neither commit nor abort)
    Process doomed =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                DyingRetryConsumer.class.getName(),
                kdelay.bootstrapServers(),
                topic,
                kdelay.requestsTopic(),
                group(),
                transactionalId,
                Long.toString(policy.initialDelay().toMillis()))
            .redirectErrorStream(true)
            .start();
    try {
      awaitLine(doomed, DyingRetryConsumer.SENT, Duration.ofSeconds(60));
    } finally {
      doomed.destroyForcibly(); // SIGKILL
    }
    assertThat(doomed.waitFor(30, TimeUnit.SECONDS)).as("the killed process is gone").isTrue();
    assertThat(doomed.exitValue()).as("exit status of a SIGKILL").isEqualTo(128 + 9);
    assertThat(kdelay.readAll(kdelay.requestsTopic(), IsolationLevel.READ_UNCOMMITTED))
        .as("the doomed transaction's request is in the log")
        .anyMatch(request -> request.key().startsWith(name));

    // and its replacement, with the same transactional id, reads the record again and handles it
    KafkaProducer<byte[], byte[]> replacement = kdelay.producer(transactionalId);
    replacement.initTransactions(); // fences the dead one and aborts its transaction
    RetryHandler retries = handler(replacement, policy);
    RetryOutcome outcome;
    try (KafkaConsumer<byte[], byte[]> consumer = consumer(topic)) {
      ConsumerRecord<byte[], byte[]> record = pollOne(consumer);
      assertThat(record.offset()).isZero();
      outcome =
          retries.handleInTransaction(
              record, new IllegalStateException("second try"), consumer.groupMetadata());
    }

    // then: one request committed, one retry fired, the offset committed past the record
    assertThat(requestsOf(name)).hasSize(1);
    kdelay.awaitRequestsApplied();
    kdelay.awaitRecords(topic, IsolationLevel.READ_COMMITTED, 2);
    List<ConsumerRecord<String, String>> all = kdelay.readAll(topic, IsolationLevel.READ_COMMITTED);
    assertThat(all).extracting(r -> RetryHeaders.attempt(r.headers())).containsExactly(0, 1);
    assertThat(header(all.get(1), RetryHeaders.EXCEPTION_MESSAGE)).isEqualTo("second try");
    assertThat(header(all.get(1), "delay-id"))
        .isEqualTo(((RetryOutcome.Retried) outcome).scheduleId());
    assertThat(kdelay.committedOffsets(group()))
        .containsEntry(new TopicPartition(topic, 0), new OffsetAndMetadata(1));
  }

  /** Reads a process's output until a line starts with {@code prefix}. */
  private static void awaitLine(Process process, String prefix, Duration timeout) throws Exception {
    BufferedReader output =
        new BufferedReader(new InputStreamReader(process.getInputStream(), UTF_8));
    CompletableFuture<String> found =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                for (String line = output.readLine(); line != null; line = output.readLine()) {
                  if (line.startsWith(prefix)) {
                    return line;
                  }
                }
                return "(the process ended without saying " + prefix + ")";
              } catch (IOException e) {
                throw new UncheckedIOException(e);
              }
            });
    assertThat(found.get(timeout.toMillis(), TimeUnit.MILLISECONDS)).startsWith(prefix);
  }

  private RetryHandler handler(KafkaProducer<byte[], byte[]> producer, RetryPolicy policy) {
    return RetryHandler.builder(producer, group())
        .requestsTopic(kdelay.requestsTopic())
        .policy(policy)
        .build();
  }

  private String group() {
    return name + "-group";
  }

  private KafkaConsumer<byte[], byte[]> consumer(String topic) {
    KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(
            kdelay.consumerConfig(group()),
            new ByteArrayDeserializer(),
            new ByteArrayDeserializer());
    consumer.subscribe(List.of(topic));
    return consumer;
  }

  /** Processes records, committing after each poll, until the condition holds. */
  private static void consumeUntil(
      KafkaConsumer<byte[], byte[]> consumer,
      Consumer<ConsumerRecord<byte[], byte[]>> processing,
      BooleanSupplier done) {
    consumeUntil(consumer, processing, done, true);
  }

  private static void consumeUntil(
      KafkaConsumer<byte[], byte[]> consumer,
      Consumer<ConsumerRecord<byte[], byte[]>> processing,
      BooleanSupplier done,
      boolean commit) {
    long deadline = System.nanoTime() + RetryFixture.TIMEOUT.toNanos();
    while (!done.getAsBoolean()) {
      assertThat(System.nanoTime()).as("consumed in time").isLessThan(deadline);
      var records = consumer.poll(Duration.ofMillis(10));
      records.forEach(processing);
      if (commit && !records.isEmpty()) {
        consumer.commitSync();
      }
    }
  }

  /** Polls the one record there is, without committing. */
  private static ConsumerRecord<byte[], byte[]> pollOne(KafkaConsumer<byte[], byte[]> consumer) {
    List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
    consumeUntil(consumer, records::add, () -> !records.isEmpty(), false);
    assertThat(records).hasSize(1);
    return records.get(0);
  }

  /** Sends a record with a trace header; returns its offset. */
  private static long send(
      KafkaProducer<byte[], byte[]> producer, String topic, String key, String value)
      throws Exception {
    ProducerRecord<byte[], byte[]> record =
        new ProducerRecord<>(topic, key.getBytes(UTF_8), value.getBytes(UTF_8));
    record.headers().add("trace", ("00-trace-of-" + key).getBytes(UTF_8));
    return producer
        .send(record)
        .get(RetryFixture.TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
        .offset();
  }

  /** The committed requests kdelay received for this test's schedule ids. */
  private static List<ConsumerRecord<String, String>> requestsOf(String prefix) {
    Predicate<ConsumerRecord<String, String>> ours = r -> r.key().startsWith(prefix);
    return kdelay.readAll(kdelay.requestsTopic(), IsolationLevel.READ_COMMITTED).stream()
        .filter(ours)
        .toList();
  }

  private static String header(ConsumerRecord<?, ?> record, String name) {
    Header header = record.headers().lastHeader(name);
    assertThat(header).as("header %s", name).isNotNull();
    return new String(header.value(), UTF_8);
  }
}

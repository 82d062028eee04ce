package dev.kdelay.spring.kafka;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.client.retry.DeadLetterReason;
import dev.kdelay.client.retry.RetryHandler;
import dev.kdelay.client.retry.RetryHeaders;
import dev.kdelay.client.retry.RetryPolicy;
import dev.kdelay.retries.RetryFixture;
import dev.kdelay.service.KafkaClusterExtension;
import dev.kdelay.service.KafkaTestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.listener.ContainerProperties;
import org.springframework.kafka.listener.KafkaMessageListenerContainer;
import org.springframework.kafka.listener.MessageListener;

/**
 * {@link KdelayRetryErrorHandler} in a Spring Kafka listener container, against a real broker and a
 * running kdelay: a listener that fails three times gets the record back after the policy's delays,
 * and one that always fails sees it dead-lettered once, with every header.
 */
@Tag("integration")
@ExtendWith(KafkaClusterExtension.class)
class KdelayRetryErrorHandlerIT {

  @TempDir static Path stateDir;

  private static RetryFixture kdelay;

  private String name;
  private KafkaMessageListenerContainer<String, String> container;

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

  @AfterEach
  void stopContainer() {
    if (container != null) {
      container.stop();
    }
  }

  @Test
  void shouldRetryAfterThePolicysDelaysWhenTheListenerFailsThreeTimesThenSucceeds()
      throws Exception {
    // given: no jitter, so that every gap is known to the millisecond
    RetryPolicy policy =
        RetryPolicy.builder()
            .maxAttempts(4)
            .initialDelay(Duration.ofMillis(500))
            .multiplier(2)
            .jitter(0)
            .build();
    kdelay.createTopics(name, name + "-dlt");
    List<Long> deliveredAt = new CopyOnWriteArrayList<>();
    List<Long> failedAt = new CopyOnWriteArrayList<>();
    List<String> processed = new CopyOnWriteArrayList<>();
    List<ConsumerRecord<String, String>> delivered = new CopyOnWriteArrayList<>();

    // when: attempts 1 to 3 throw, the 4th succeeds; a first record, retried once, warms up
    // kdelay's path to the topic (its metadata, the JIT) so that the gaps are the steady state's
    startContainer(
        policy,
        record -> {
          long now = System.currentTimeMillis();
          int attempt = RetryHeaders.attempt(record.headers()) + 1;
          boolean measured = record.key().equals("order-1");
          if (measured) {
            deliveredAt.add(now);
            delivered.add(record);
          }
          if (attempt < (measured ? 4 : 2)) {
            if (measured) {
              failedAt.add(System.currentTimeMillis());
            }
            throw new IllegalStateException("attempt " + attempt);
          }
          processed.add(record.value());
        });
    send("warm-up", "warm up");
    RetryFixture.await(() -> !processed.isEmpty(), "the warm-up record's retry succeeds");
    send("order-1", "pay 10");
    RetryFixture.await(() -> processed.size() == 2, "the 4th attempt succeeds");

    // then: each retry scheduled and fired after the policy's delay, and received after it
    RetryFixture.assertRetryGaps(
        "KdelayRetryErrorHandlerIT", policy, failedAt, delivered, deliveredAt);
    kdelay.awaitRequestsApplied();
    awaitCommittedPast(delivered.get(3));
    assertThat(processed).containsExactly("warm up", "pay 10");
    assertThat(deliveredAt).hasSize(4);
    assertThat(kdelay.readAll(name, IsolationLevel.READ_COMMITTED))
        .hasSize(6)
        .filteredOn(record -> record.key().equals("order-1"))
        .extracting(record -> RetryHeaders.attempt(record.headers()))
        .containsExactly(0, 1, 2, 3);
    assertThat(kdelay.readAll(name + "-dlt", IsolationLevel.READ_UNCOMMITTED)).isEmpty();
  }

  @Test
  void shouldDeadLetterOnceWithEveryHeaderWhenTheListenerAlwaysFails() throws Exception {
    // given
    RetryPolicy policy =
        RetryPolicy.builder().maxAttempts(3).initialDelay(Duration.ofMillis(200)).build();
    kdelay.createTopics(name, name + "-dlt");
    List<Long> failedAt = new CopyOnWriteArrayList<>();
    List<ConsumerRecord<String, String>> delivered = new CopyOnWriteArrayList<>();

    // when
    startContainer(
        policy,
        record -> {
          failedAt.add(System.currentTimeMillis());
          delivered.add(record);
          throw new IllegalStateException("no funds for " + record.key());
        });
    long offset = send("order-2", "pay 20");

    // then
    List<ConsumerRecord<String, String>> letters =
        kdelay.awaitRecords(name + "-dlt", IsolationLevel.READ_UNCOMMITTED, 1);
    RetryFixture.await(() -> delivered.size() == 3, "three attempts");
    awaitCommittedPast(delivered.get(2));
    kdelay.awaitRequestsApplied();
    assertThat(kdelay.readAll(name + "-dlt", IsolationLevel.READ_UNCOMMITTED)).hasSize(1);
    assertThat(failedAt).hasSize(3);
    ConsumerRecord<String, String> letter = letters.get(0);
    assertThat(letter.key()).isEqualTo("order-2");
    assertThat(letter.value()).isEqualTo("pay 20");
    assertThat(header(letter, "trace")).isEqualTo("00-trace-of-order-2");
    assertThat(header(letter, RetryHeaders.ATTEMPT)).isEqualTo("3");
    assertThat(Long.parseLong(header(letter, RetryHeaders.FIRST_FAILURE_AT)))
        .isBetween(failedAt.get(0) - 1, failedAt.get(0) + 1_000);
    assertThat(header(letter, RetryHeaders.ORIGIN_TOPIC)).isEqualTo(name);
    assertThat(header(letter, RetryHeaders.ORIGIN_PARTITION)).isEqualTo("0");
    assertThat(header(letter, RetryHeaders.ORIGIN_OFFSET)).isEqualTo(Long.toString(offset));
    // The listener's exception, not Spring's ListenerExecutionFailedException around it.
    assertThat(header(letter, RetryHeaders.EXCEPTION))
        .isEqualTo(IllegalStateException.class.getName());
    assertThat(header(letter, RetryHeaders.EXCEPTION_MESSAGE)).isEqualTo("no funds for order-2");
    assertThat(header(letter, RetryHeaders.DEAD_LETTER_REASON))
        .isEqualTo(DeadLetterReason.ATTEMPTS_EXHAUSTED.name());
  }

  private void startContainer(RetryPolicy policy, MessageListener<String, String> listener) {
    RetryHandler retries =
        RetryHandler.builder(kdelay.producer(null), group())
            .requestsTopic(kdelay.requestsTopic())
            .policy(policy)
            .build();
    ContainerProperties properties = new ContainerProperties(name);
    properties.setGroupId(group());
    properties.setMessageListener(listener);
    container =
        new KafkaMessageListenerContainer<>(
            new DefaultKafkaConsumerFactory<>(
                kdelay.consumerConfig(group()), new StringDeserializer(), new StringDeserializer()),
            properties);
    container.setCommonErrorHandler(new KdelayRetryErrorHandler(retries));
    container.start();
  }

  /** Waits until the container committed the offset past a record it was given. */
  private void awaitCommittedPast(ConsumerRecord<?, ?> record) {
    TopicPartition partition = new TopicPartition(record.topic(), record.partition());
    RetryFixture.await(
        () -> {
          OffsetAndMetadata committed = kdelay.committedOffsets(group()).get(partition);
          return committed != null && committed.offset() > record.offset();
        },
        "the container committed past offset " + record.offset());
  }

  private String group() {
    return name + "-group";
  }

  /** Sends a record with a trace header; returns its offset. */
  private long send(String key, String value) throws Exception {
    KafkaProducer<byte[], byte[]> producer = kdelay.producer(null);
    ProducerRecord<byte[], byte[]> record =
        new ProducerRecord<>(name, key.getBytes(UTF_8), value.getBytes(UTF_8));
    record.headers().add("trace", ("00-trace-of-" + key).getBytes(UTF_8));
    return producer
        .send(record)
        .get(RetryFixture.TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
        .offset();
  }

  private static String header(ConsumerRecord<?, ?> record, String name) {
    Header header = record.headers().lastHeader(name);
    assertThat(header).as("header %s", name).isNotNull();
    return new String(header.value(), UTF_8);
  }
}

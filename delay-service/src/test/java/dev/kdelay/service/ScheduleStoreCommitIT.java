package dev.kdelay.service;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.topology.internals.delivery.FireCommits;
import dev.kdelay.topology.internals.store.MeteredScheduleStore;
import dev.kdelay.topology.internals.store.ScheduleStoreBuilder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The schedule store hears every commit of its task in a real exactly-once application, which
 * {@link FireCommits} counts its intervals by. It hears them through Kafka Streams' internal {@code
 * CachedStateStore} hook ({@link MeteredScheduleStore#flushCache}): this test is what says so when
 * a Kafka version stops calling it. (Kafka Streams 4.3 calls {@code StateStore.commit} under
 * exactly-once only at checkpoints, so a store listening there heard no commit while the task ran.)
 */
@Tag("integration")
@ExtendWith(KafkaClusterExtension.class)
class ScheduleStoreCommitIT {

  private static final Duration TIMEOUT = Duration.ofSeconds(60);
  private static final String STORE = "schedules";

  @TempDir Path stateDir;

  @Test
  void shouldHearEachRequestedCommitOfAnExactlyOnceTaskWhileItRuns(KafkaTestCluster kafka)
      throws Exception {
    // given: an exactly-once application whose only commits are the ones its processor requests
    String name = "store-commits-" + UUID.randomUUID().toString().substring(0, 8);
    String input = name + "-in";
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.bootstrapServers()))) {
      admin
          .createTopics(List.of(new NewTopic(input, 1, (short) 1)))
          .all()
          .get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    }
    AtomicInteger processed = new AtomicInteger();
    AtomicInteger commitsHeard = new AtomicInteger();
    Topology topology = new Topology();
    topology.addSource("in", input);
    topology.addProcessor(
        "requests-commits",
        () ->
            new Processor<byte[], byte[], Void, Void>() {
              private ProcessorContext<Void, Void> context;

              @Override
              public void init(ProcessorContext<Void, Void> context) {
                this.context = context;
                MeteredScheduleStore store = context.getStateStore(STORE);
                store.onCommit(commitsHeard::incrementAndGet);
              }

              @Override
              public void process(Record<byte[], byte[]> record) {
                processed.incrementAndGet();
                context.commit();
              }
            },
        "in");
    topology.addStateStore(new ScheduleStoreBuilder(STORE, 60_000), "requests-commits");
    Properties config = new Properties();
    config.put(StreamsConfig.APPLICATION_ID_CONFIG, name);
    config.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    config.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    config.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, Duration.ofMinutes(1).toMillis());
    config.put(
        StreamsConfig.producerPrefix(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG),
        (int) Duration.ofMinutes(2).toMillis());
    config.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
    config.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
    config.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.ByteArraySerde.class);
    config.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.ByteArraySerde.class);

    try (KafkaStreams streams = new KafkaStreams(topology, config);
        KafkaProducer<byte[], byte[]> producer =
            new KafkaProducer<>(
                Map.of("bootstrap.servers", kafka.bootstrapServers()),
                new ByteArraySerializer(),
                new ByteArraySerializer())) {
      streams.start();
      await("RUNNING", () -> streams.state() == KafkaStreams.State.RUNNING);

      // when: three records, each processed in a commit of its own request
      for (int i = 1; i <= 3; i++) {
        producer
            .send(new ProducerRecord<>(input, ("r" + i).getBytes(StandardCharsets.UTF_8)))
            .get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        int expected = i;
        await("record " + i + " processed", () -> processed.get() >= expected);
        // then: the store hears the commit while the task runs, not only when it closes
        await(
            "commit " + i + " heard (heard " + commitsHeard.get() + ")",
            () -> commitsHeard.get() >= expected);
      }
    }
  }

  private static void await(String what, java.util.function.BooleanSupplier condition)
      throws InterruptedException {
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime() - deadline).as("waiting for " + what).isNegative();
      TimeUnit.MILLISECONDS.sleep(20);
    }
  }
}

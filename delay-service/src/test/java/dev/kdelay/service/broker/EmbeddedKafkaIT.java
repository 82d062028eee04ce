package dev.kdelay.service.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.service.DelayServiceException;
import dev.kdelay.service.TargetTopicReader;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("integration")
class EmbeddedKafkaIT {

  private static final Duration TIMEOUT = Duration.ofSeconds(30);
  private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

  @TempDir Path dataDir;

  @Test
  void shouldKeepRecordsWhenRestartedOnTheSameDirectory() throws Exception {
    EmbeddedKafka.Listeners listeners = freeListeners();

    // given: a broker that stored records in a transaction, then stopped
    try (EmbeddedKafka kafka = EmbeddedKafka.start(dataDir, listeners)) {
      try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.bootstrapServers()))) {
        admin.createTopics(List.of(new NewTopic("round-trip", 2, (short) 1))).all().get();
      }
      produceTransactionally(kafka.bootstrapServers(), "a", "b", "c");
      assertThat(values(kafka.bootstrapServers())).containsExactlyInAnyOrder("a", "b", "c");
    }

    // when: a new broker starts on the same directory
    try (EmbeddedKafka kafka = EmbeddedKafka.start(dataDir, listeners)) {
      // then
      assertThat(values(kafka.bootstrapServers())).containsExactlyInAnyOrder("a", "b", "c");
    }
  }

  @Test
  void shouldRunWithTheTransactionSettingsKdelaysFailoverAndCommitsNeed() throws Exception {
    try (EmbeddedKafka kafka = EmbeddedKafka.start(dataDir, freeListeners());
        Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.bootstrapServers()))) {
      // when: the broker says what it runs with (a misspelt key would leave the default)
      ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, "1");
      Config config =
          admin.describeConfigs(List.of(broker)).all().get(30, TimeUnit.SECONDS).get(broker);

      // then
      assertThat(config.get("transaction.abort.timed.out.transaction.cleanup.interval.ms").value())
          .isEqualTo("1000");
      assertThat(config.get("add.partitions.to.txn.retry.backoff.ms").value()).isEqualTo("5");
      assertThat(config.get("add.partitions.to.txn.retry.backoff.max.ms").value())
          .isEqualTo("1000");
    }
  }

  @Test
  void shouldFailClearlyWhenThePortIsTaken() throws IOException {
    try (ServerSocket taken = new ServerSocket(0, 1, LOOPBACK);
        ServerSocket controller = new ServerSocket(0, 1, LOOPBACK)) {
      int port = taken.getLocalPort();
      int controllerPort = controller.getLocalPort();
      controller.close();
      EmbeddedKafka.Listeners listeners =
          new EmbeddedKafka.Listeners("127.0.0.1", port, controllerPort);

      assertThatThrownBy(() -> EmbeddedKafka.start(dataDir, listeners))
          .isInstanceOf(DelayServiceException.class)
          .hasMessageContaining("Port " + port + " on 127.0.0.1 is in use")
          .hasMessageContaining("DELAY_BOOTSTRAP_SERVERS=127.0.0.1:" + port);
    }
  }

  private static void produceTransactionally(String bootstrapServers, String... values) {
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(
            Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrapServers,
                ProducerConfig.TRANSACTIONAL_ID_CONFIG,
                "embedded-kafka-it"),
            new StringSerializer(),
            new StringSerializer())) {
      // A transaction proves the single-node transaction log settings, which exactly-once needs.
      producer.initTransactions();
      producer.beginTransaction();
      for (String value : values) {
        producer.send(new ProducerRecord<>("round-trip", value, value));
      }
      producer.commitTransaction();
    }
  }

  private static List<String> values(String bootstrapServers) {
    try (TargetTopicReader reader = new TargetTopicReader(bootstrapServers, "round-trip")) {
      return reader.pollUntil(received -> received.size() >= 3, TIMEOUT).stream()
          .map(received -> received.record().value())
          .toList();
    }
  }

  private static EmbeddedKafka.Listeners freeListeners() throws IOException {
    // Both sockets open at once, so that the two ports differ.
    try (ServerSocket broker = new ServerSocket(0, 1, LOOPBACK);
        ServerSocket controller = new ServerSocket(0, 1, LOOPBACK)) {
      return new EmbeddedKafka.Listeners(
          "127.0.0.1", broker.getLocalPort(), controller.getLocalPort());
    }
  }
}

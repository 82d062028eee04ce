package dev.kdelay.service;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.client.DelayClient;
import dev.kdelay.client.DelayedMessage;
import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.topology.DelayConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kdelay against Kafka in a container (Testcontainers' {@code KafkaContainer}) rather than the
 * in-JVM test kit: a broker that is a process of its own, reached over the container network as
 * users reach theirs. Skipped where no container engine runs (with the command that installs one),
 * failed instead under CI.
 */
@Tag("integration")
class ContainerKafkaIT {

  private static final Duration TIMEOUT = Duration.ofSeconds(60);

  private static TestcontainersCluster kafka;

  @TempDir Path stateDir;

  @BeforeAll
  static void startKafka() {
    TestcontainersCluster.assumeEngine();
    kafka = TestcontainersCluster.start();
  }

  @AfterAll
  static void stopKafka() {
    if (kafka != null) {
      kafka.close();
    }
  }

  @Test
  void shouldFireAScheduledMessageOnceToReadCommittedConsumers() throws Exception {
    // given: kdelay running on the container's broker, and a target topic
    String bootstrap = kafka.bootstrapServers();
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
      admin.createTopics(List.of(new NewTopic("reminders", 2, (short) 1))).all().get();
    }
    Map<String, Object> props = new HashMap<>();
    props.put(DelayConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(DelayConfig.APPLICATION_ID_CONFIG, "kdelay-container-it");
    props.put(DelayConfig.STATE_DIR_CONFIG, stateDir.toString());
    props.put(ServiceConfig.TOPIC_PARTITIONS_CONFIG, 2);
    props.put(ServiceConfig.TOPIC_REPLICATION_FACTOR_CONFIG, (short) 1);
    props.put(ServiceConfig.HTTP_PORT_CONFIG, 0);
    ServiceConfig config = new ServiceConfig(props);

    try (DelayService service = new DelayService(config)) {
      service.start(Optional.of(TIMEOUT));

      // when: a message is scheduled a second ahead
      try (DelayClient client =
          DelayClient.create(
              Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap),
              config.delay().requestsTopic())) {
        client
            .schedule(
                DelayedMessage.builder("container-1", "reminders")
                    .after(Duration.ofSeconds(1))
                    .payload("from a container broker")
                    .build())
            .get(10, TimeUnit.SECONDS);
      }

      // then: a read_committed consumer sees it fired once, and nothing more once it has drained
      // everything committed a while later
      try (TargetTopicReader reader = new TargetTopicReader(bootstrap, "reminders")) {
        List<TargetTopicReader.Received> fired =
            reader.pollUntil(received -> !received.isEmpty(), TIMEOUT);
        assertThat(fired).hasSize(1);
        assertThat(fired.get(0).record().key()).isEqualTo("container-1");
        assertThat(fired.get(0).record().value()).isEqualTo("from a container broker");
        Thread.sleep(3_000);
        assertThat(reader.drainCommitted(TIMEOUT)).hasSize(1);
      }
    }
  }
}

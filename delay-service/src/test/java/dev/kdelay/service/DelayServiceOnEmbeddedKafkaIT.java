package dev.kdelay.service;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.client.DelayClient;
import dev.kdelay.client.DelayedMessage;
import dev.kdelay.service.broker.EmbeddedKafka;
import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.topology.DelayConfig;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The service on its own {@link EmbeddedKafka}, started when no bootstrap servers are set. */
@Tag("integration")
class DelayServiceOnEmbeddedKafkaIT {

  private static final Duration TIMEOUT = Duration.ofSeconds(30);
  private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

  @TempDir Path dataDir;

  @Test
  void shouldRunTheServiceOnItWhenNoBootstrapServersAreConfigured() throws Exception {
    // given
    ServiceConfig config =
        new ServiceConfig(
            Map.of(
                DelayConfig.BOOTSTRAP_SERVERS_CONFIG,
                "",
                ServiceConfig.EMBEDDED_DATA_DIR_CONFIG,
                dataDir.resolve("kafka").toString(),
                DelayConfig.STATE_DIR_CONFIG,
                dataDir.resolve("streams").toString(),
                ServiceConfig.TOPIC_PARTITIONS_CONFIG,
                2));

    try (DelayService service = new DelayService(config, freeListeners())) {
      // when
      service.start(Optional.of(TIMEOUT));
      try (Admin admin = Admin.create(Map.of("bootstrap.servers", service.bootstrapServers()))) {
        admin.createTopics(List.of(new NewTopic("greetings", 1, (short) 1))).all().get();
      }
      try (DelayClient client =
          DelayClient.create(
              Map.of("bootstrap.servers", service.bootstrapServers()),
              config.delay().requestsTopic())) {
        client
            .schedule(
                DelayedMessage.builder("hello", "greetings")
                    .after(Duration.ofMillis(500))
                    .payload("hello, later")
                    .build())
            .get(10, TimeUnit.SECONDS);
      }

      // then
      try (Admin admin = Admin.create(Map.of("bootstrap.servers", service.bootstrapServers()))) {
        assertThat(
                admin
                    .describeTopics(
                        List.of("delay-requests", "delay-dlq", "delay-requests-rerouted"))
                    .allTopicNames()
                    .get())
            .allSatisfy((topic, description) -> assertThat(description.partitions()).hasSize(2));
      }
      try (TargetTopicReader reader =
          new TargetTopicReader(service.bootstrapServers(), "greetings")) {
        List<TargetTopicReader.Received> fired =
            reader.pollUntil(received -> !received.isEmpty(), TIMEOUT);
        assertThat(fired).hasSize(1);
        assertThat(fired.get(0).record().value()).isEqualTo("hello, later");
      }
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

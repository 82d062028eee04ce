package dev.kdelay.service;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.topology.DelayConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The durability a start computes, on a cluster of three brokers and on the shared one of one:
 * min(3, brokers) copies and min(2, copies) in sync, for kdelay's topics and Kafka Streams'
 * changelogs alike. The three brokers are a cluster of this class's own.
 */
@Tag("integration")
class ReplicatedTopicDefaultsIT {

  private static final Duration START_TIMEOUT = Duration.ofSeconds(90);

  private static KraftTestKitCluster threeBrokers;

  @TempDir Path stateDir;

  @BeforeAll
  static void startThreeBrokers() throws Exception {
    threeBrokers = KraftTestKitCluster.start(3);
  }

  @AfterAll
  static void stopThem() throws Exception {
    if (threeBrokers != null) {
      threeBrokers.close();
    }
  }

  @Test
  void shouldKeepThreeCopiesTwoInSyncEverywhereWhenTheClusterHasThreeBrokers() throws Exception {
    assertDurability(threeBrokers, "replicated", 3, "2");
  }

  @Test
  @org.junit.jupiter.api.extension.ExtendWith(KafkaClusterExtension.class)
  void shouldKeepOneCopyOneInSyncEverywhereWhenTheClusterHasOneBroker(KafkaTestCluster oneBroker)
      throws Exception {
    assertDurability(oneBroker, "single", 1, "1");
  }

  private void assertDurability(
      KafkaTestCluster kafka, String applicationId, int replication, String minInsync)
      throws Exception {
    // given: nothing configured about topics
    ServiceConfig config =
        new ServiceConfig(
            Map.of(
                DelayConfig.BOOTSTRAP_SERVERS_CONFIG,
                kafka.bootstrapServers(),
                DelayConfig.APPLICATION_ID_CONFIG,
                applicationId,
                DelayConfig.REQUESTS_TOPIC_CONFIG,
                applicationId + "-requests",
                DelayConfig.DLQ_TOPIC_CONFIG,
                applicationId + "-dlq",
                DelayConfig.STATE_DIR_CONFIG,
                stateDir.toString(),
                ServiceConfig.TOPIC_PARTITIONS_CONFIG,
                2,
                ServiceConfig.HTTP_PORT_CONFIG,
                0));

    // when
    try (DelayService service = new DelayService(config);
        DescribedTopics topics = new DescribedTopics(kafka)) {
      service.start(Optional.of(START_TIMEOUT));

      // then: the same for kdelay's topics and for the changelogs Kafka Streams created
      for (String topic :
          List.of(
              config.delay().requestsTopic(),
              config.delay().dlqTopic(),
              config.delay().rerouteTopic(),
              applicationId + "-delay-schedules-v2-changelog")) {
        assertThat(topics.replicationFactor(topic)).as(topic).isEqualTo(replication);
        assertThat(topics.config(topic, "min.insync.replicas")).as(topic).isEqualTo(minInsync);
      }
    }
  }
}

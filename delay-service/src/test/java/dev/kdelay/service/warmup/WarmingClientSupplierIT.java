package dev.kdelay.service.warmup;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.service.Conditions;
import dev.kdelay.service.KafkaClusterExtension;
import dev.kdelay.service.KafkaTestCluster;
import dev.kdelay.service.topics.AdminTargetTopics;
import dev.kdelay.topology.DelayConfig;
import dev.kdelay.topology.TargetTopic;
import dev.kdelay.topology.internals.delivery.DeliveryQuarantine;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link WarmingClientSupplier} against a real broker, told of topics by the service's {@link
 * AdminTargetTopics}.
 */
@Tag("integration")
@ExtendWith(KafkaClusterExtension.class)
class WarmingClientSupplierIT {

  private static final Duration CONDITION_TIMEOUT = Duration.ofSeconds(30);

  private final String prefix = "wcs-" + UUID.randomUUID().toString().substring(0, 8) + "-";
  private String bootstrapServers;
  private Admin admin;

  @BeforeEach
  void connect(KafkaTestCluster kafka) {
    bootstrapServers = kafka.bootstrapServers();
    admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers));
  }

  @AfterEach
  void disconnect() {
    admin.close(Duration.ofSeconds(5));
  }

  @Test
  void shouldGiveProducersATopicsMetadataWhenTheTopicIsFirstLookedUp() throws Exception {
    // given: a producer as Kafka Streams gets it, and two topics it never wrote to
    String seen = createTopic("seen");
    String unseen = createTopic("unseen");
    try (WarmingClientSupplier clients =
            new WarmingClientSupplier(new DeliveryQuarantine(new DelayConfig(Map.of())));
        Producer<byte[], byte[]> producer =
            clients.getProducer(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers));
        AdminTargetTopics topics = AdminTargetTopics.create(admin, targetTopics(), clients)) {
      producer.send(new ProducerRecord<>(seen, new byte[0])).get(30, TimeUnit.SECONDS);
      double waitedBefore = metadataWaitNanos(producer);

      // when: a request names the other topic
      assertThat(topics.lookUp(unseen).status()).isEqualTo(TargetTopic.Status.PRESENT);
      // the warming thread's fetch is the producer's only other metadata wait
      Conditions.awaitValue(
          CONDITION_TIMEOUT, () -> metadataWaitNanos(producer), waited -> waited > waitedBefore);
      double warmed = metadataWaitNanos(producer);

      // then: a send to it finds the metadata there and does not wait for it
      producer.send(new ProducerRecord<>(unseen, new byte[0])).get(30, TimeUnit.SECONDS);
      assertThat(metadataWaitNanos(producer)).isEqualTo(warmed);
    }
  }

  /** Look-ups that wait long enough for a loaded test machine, refreshes often. */
  private static DelayConfig targetTopics() {
    return new DelayConfig(
        Map.of(
            DelayConfig.TARGET_TOPICS_LOOKUP_TIMEOUT_CONFIG, "10000",
            DelayConfig.TARGET_TOPICS_REFRESH_CONFIG, "200",
            DelayConfig.TARGET_TOPICS_MAX_CONFIG, "100",
            DelayConfig.TARGET_TOPICS_ABSENT_RETENTION_CONFIG, "5000"));
  }

  private String createTopic(String name) throws Exception {
    String topic = prefix + name;
    admin
        .createTopics(List.of(new NewTopic(topic, Optional.of(2), Optional.empty())))
        .all()
        .get(30, TimeUnit.SECONDS);
    return topic;
  }

  /** Time the producer's sends spent waiting for metadata, from its own metric. */
  private static double metadataWaitNanos(Producer<byte[], byte[]> producer) {
    return producer.metrics().entrySet().stream()
        .filter(e -> e.getKey().group().equals("producer-metrics"))
        .filter(e -> e.getKey().name().equals("metadata-wait-time-ns-total"))
        .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue())
        .sum();
  }
}

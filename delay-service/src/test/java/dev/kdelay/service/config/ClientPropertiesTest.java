package dev.kdelay.service.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.service.config.ClientProperties.Kind;
import dev.kdelay.topology.DelayConfig;
import dev.kdelay.topology.StreamsTuning;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;

class ClientPropertiesTest {

  private static final String JAAS =
      "org.apache.kafka.common.security.plain.PlainLoginModule required"
          + " username=\"kdelay\" password=\"s3cr3t-pa55\";";

  private static final String ADMIN_JAAS =
      "org.apache.kafka.common.security.plain.PlainLoginModule required"
          + " username=\"kdelay-admin\" password=\"adm1n-pa55\";";

  @Test
  void shouldGiveEveryClientThePlainSecuritySettingsWhenTheyAreUnprefixed() {
    DelayConfig config =
        new DelayConfig(
            Map.of(
                "security.protocol", "SASL_SSL",
                "sasl.mechanism", "PLAIN",
                "sasl.jaas.config", JAAS,
                "ssl.truststore.location", "/etc/kdelay/truststore.p12"));

    for (Kind kind : Kind.values()) {
      assertThat(ClientProperties.of(config, "kafka:9093", kind))
          .as(kind.name())
          .containsEntry("security.protocol", "SASL_SSL")
          .containsEntry("sasl.mechanism", "PLAIN")
          .containsEntry("sasl.jaas.config", JAAS)
          .containsEntry("ssl.truststore.location", "/etc/kdelay/truststore.p12")
          .containsEntry("bootstrap.servers", "kafka:9093");
    }
  }

  @Test
  void shouldLetThePrefixedKeyWinWhenBothAreGiven() {
    DelayConfig config =
        new DelayConfig(
            Map.of(
                "sasl.jaas.config",
                JAAS,
                "admin.sasl.jaas.config",
                ADMIN_JAAS,
                "producer.ssl.keystore.location",
                "/etc/kdelay/producer.p12",
                "consumer.isolation.level",
                "read_uncommitted"));

    Map<String, Object> admin = ClientProperties.of(config, "kafka:9093", Kind.ADMIN);
    Map<String, Object> producer = ClientProperties.of(config, "kafka:9093", Kind.PRODUCER);
    Map<String, Object> consumer = ClientProperties.of(config, "kafka:9093", Kind.CONSUMER);

    assertThat(admin)
        .containsEntry("sasl.jaas.config", ADMIN_JAAS)
        .doesNotContainKey("ssl.keystore.location");
    assertThat(producer)
        .containsEntry("sasl.jaas.config", JAAS)
        .containsEntry("ssl.keystore.location", "/etc/kdelay/producer.p12");
    assertThat(consumer)
        .containsEntry("sasl.jaas.config", JAAS)
        .containsEntry("isolation.level", "read_uncommitted")
        .doesNotContainKey("ssl.keystore.location");
  }

  @Test
  void shouldLeaveOutKeysTheClientDoesNotKnowWhenTheyAreForOthers() {
    DelayConfig config =
        new DelayConfig(
            Map.of(
                "num.stream.threads", "4",
                "acks", "all",
                "producer.linger.ms", "5",
                "admin.linger.ms", "5",
                "main.consumer.max.poll.records", "10"));

    assertThat(ClientProperties.of(config, "kafka:9093", Kind.ADMIN))
        .containsOnlyKeys("bootstrap.servers");
    assertThat(ClientProperties.of(config, "kafka:9093", Kind.PRODUCER))
        .containsOnlyKeys("bootstrap.servers", "acks", "linger.ms");
    assertThat(ClientProperties.of(config, "kafka:9093", Kind.CONSUMER))
        .containsOnlyKeys("bootstrap.servers");
  }

  @Test
  void shouldUseTheGivenBootstrapServersWhenAPrefixedOneIsConfigured() {
    DelayConfig config = new DelayConfig(Map.of("admin.bootstrap.servers", "elsewhere:9092"));

    assertThat(ClientProperties.of(config, "kafka:9093", Kind.ADMIN))
        .containsEntry("bootstrap.servers", "kafka:9093");
  }

  @Test
  void shouldHideTheJaasConfigWhenKafkasClientLogsItsConfiguration() {
    // Kafka's clients log "ProducerConfig values:" from these values at startup.
    DelayConfig config = new DelayConfig(Map.of("producer.sasl.jaas.config", JAAS));
    Map<String, Object> props = ClientProperties.of(config, "kafka:9093", Kind.PRODUCER);
    props.put("key.serializer", ByteArraySerializer.class);
    props.put("value.serializer", ByteArraySerializer.class);

    ProducerConfig logged = new ProducerConfig(props);

    assertThat(logged.values().toString())
        .contains("sasl.jaas.config=[hidden]")
        .doesNotContain("s3cr3t-pa55");
  }

  @Test
  void shouldHideTheJaasConfigWhenKafkaStreamsLogsItsConfiguration() {
    DelayConfig config =
        new DelayConfig(
            Map.of(
                "delay.bootstrap.servers", "kafka:9093",
                "sasl.jaas.config", JAAS,
                "producer.sasl.jaas.config", ADMIN_JAAS));

    // Kafka Streams logs "StreamsConfig values:" from these values at startup; it declares no
    // SASL keys itself, and its clients log theirs with PASSWORD keys hidden.
    StreamsConfig logged = new StreamsConfig(StreamsTuning.streamsProperties(config));

    assertThat(logged.values().toString()).doesNotContain("s3cr3t-pa55", "adm1n-pa55");
    Map<String, Object> producerProps = logged.getProducerConfigs("kdelay-test");
    producerProps.put("key.serializer", ByteArraySerializer.class);
    producerProps.put("value.serializer", ByteArraySerializer.class);
    ProducerConfig producer = new ProducerConfig(producerProps);
    assertThat(producer.values().toString())
        .contains("sasl.jaas.config=[hidden]")
        .doesNotContain("s3cr3t-pa55", "adm1n-pa55");
  }
}

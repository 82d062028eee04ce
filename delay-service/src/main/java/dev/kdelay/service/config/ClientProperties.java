package dev.kdelay.service.config;

import dev.kdelay.topology.DelayConfig;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.StreamsConfig;

/**
 * Properties for a plain Kafka client (admin, producer, consumer) the service or the CLI creates
 * beside Kafka Streams: the bootstrap servers plus the pass-through Kafka properties that client
 * knows, so that TLS and SASL settings reach it and Streams-only settings do not make it warn.
 *
 * <p>Prefixes work as in Kafka Streams: a plain key reaches every kind of client, a key prefixed
 * {@code admin.}, {@code producer.} or {@code consumer.} reaches only that kind and wins over the
 * plain one. So one {@code sasl.jaas.config} serves all clients, and {@code admin.sasl.jaas.config}
 * gives the admin clients a principal of their own.
 *
 * <pre>{@code
 * Admin admin = Admin.create(ClientProperties.of(config, config.bootstrapServers(), Kind.ADMIN));
 * }</pre>
 */
public final class ClientProperties {

  /** A kind of client, with the prefix that addresses it and the property names it accepts. */
  public enum Kind {
    ADMIN(StreamsConfig.ADMIN_CLIENT_PREFIX, AdminClientConfig.configNames()),
    PRODUCER(StreamsConfig.PRODUCER_PREFIX, ProducerConfig.configNames()),
    CONSUMER(StreamsConfig.CONSUMER_PREFIX, ConsumerConfig.configNames());

    private final String prefix;
    private final Set<String> knownNames;

    Kind(String prefix, Set<String> knownNames) {
      this.prefix = prefix;
      this.knownNames = knownNames;
    }
  }

  private ClientProperties() {}

  /**
   * The properties of one kind of client.
   *
   * @param config the configuration; its pass-through Kafka properties are filtered
   * @param bootstrapServers where the client connects; wins over any configured one
   * @param kind the kind of client
   * @return a new mutable map
   */
  public static Map<String, Object> of(DelayConfig config, String bootstrapServers, Kind kind) {
    Map<String, Object> kafka = config.kafkaProperties();
    Map<String, Object> props = new HashMap<>();
    kafka.forEach(
        (key, value) -> {
          if (kind.knownNames.contains(key)) {
            props.put(key, value);
          }
        });
    // After the plain keys: the prefixed key wins, as Kafka Streams resolves them.
    kafka.forEach(
        (key, value) -> {
          if (key.startsWith(kind.prefix)) {
            String name = key.substring(kind.prefix.length());
            if (kind.knownNames.contains(name)) {
              props.put(name, value);
            }
          }
        });
    props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    return props;
  }
}

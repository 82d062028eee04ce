package dev.kdelay.service;

import dev.kdelay.topology.DelayConfig;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.CommonClientConfigs;

/**
 * Properties for a plain Kafka client (admin, producer, consumer) the service or the CLI creates
 * beside Kafka Streams: the bootstrap servers plus the pass-through Kafka properties that client
 * knows, so that TLS and SASL settings reach it and Streams-only settings do not make it warn.
 */
final class ClientProperties {

  private ClientProperties() {}

  /**
   * The properties of one kind of client.
   *
   * @param config the configuration; its pass-through Kafka properties are filtered
   * @param bootstrapServers where the client connects
   * @param knownNames the names the client accepts, such as {@code ProducerConfig.configNames()}
   * @return a new mutable map
   */
  static Map<String, Object> of(
      DelayConfig config, String bootstrapServers, Set<String> knownNames) {
    Map<String, Object> props = new HashMap<>();
    config
        .kafkaProperties()
        .forEach(
            (key, value) -> {
              if (knownNames.contains(key)) {
                props.put(key, value);
              }
            });
    props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    return props;
  }
}

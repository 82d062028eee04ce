package dev.kdelay.service.topics;

import dev.kdelay.service.KafkaTestCluster;
import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.topology.DelayConfig;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * The service the topic and move tests start: its own names, two partitions unless the settings say
 * otherwise, no HTTP.
 */
public final class TopicsTestConfig {

  private TopicsTestConfig() {}

  /** A service named {@code name} on the cluster, with these settings over the tests' own. */
  public static ServiceConfig named(
      KafkaTestCluster kafka, String name, Path stateDir, Map<String, Object> settings) {
    Map<String, Object> props = new HashMap<>();
    props.put(DelayConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    props.put(DelayConfig.APPLICATION_ID_CONFIG, name);
    props.put(DelayConfig.STATE_DIR_CONFIG, stateDir.toString());
    props.put(DelayConfig.REQUESTS_TOPIC_CONFIG, name + "-requests");
    props.put(DelayConfig.DLQ_TOPIC_CONFIG, name + "-dlq");
    props.put(ServiceConfig.TOPIC_PARTITIONS_CONFIG, 2);
    props.put(ServiceConfig.HTTP_PORT_CONFIG, 0);
    props.putAll(settings);
    return new ServiceConfig(props);
  }
}

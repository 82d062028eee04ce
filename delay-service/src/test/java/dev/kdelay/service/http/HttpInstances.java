package dev.kdelay.service.http;

import dev.kdelay.service.DelayService;
import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.topology.DelayConfig;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;

/** Instances with an HTTP port, on a test class's topics, for the HTTP integration tests. */
final class HttpInstances {

  private HttpInstances() {}

  /**
   * An instance on the topics {@code <name>-requests} and {@code <name>-dlq}, with a state
   * directory and an HTTP port of its own, not started; it and its directory are closed with {@code
   * resources}.
   */
  static DelayService create(
      String bootstrapServers,
      String name,
      int partitions,
      String applicationId,
      Path state,
      Map<String, Object> more,
      Collection<AutoCloseable> resources)
      throws IOException {
    resources.add(() -> HttpProbes.deleteRecursively(state));
    Map<String, Object> props = new HashMap<>();
    props.put(DelayConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    props.put(DelayConfig.APPLICATION_ID_CONFIG, applicationId);
    props.put(DelayConfig.STATE_DIR_CONFIG, state.toString());
    props.put(DelayConfig.REQUESTS_TOPIC_CONFIG, name + "-requests");
    props.put(DelayConfig.DLQ_TOPIC_CONFIG, name + "-dlq");
    props.put(ServiceConfig.TOPIC_PARTITIONS_CONFIG, partitions);
    props.put(ServiceConfig.TOPIC_REPLICATION_FACTOR_CONFIG, (short) 1);
    props.put(ServiceConfig.HTTP_PORT_CONFIG, freePort());
    props.putAll(more);
    DelayService service = new DelayService(new ServiceConfig(props));
    resources.add(service);
    return service;
  }

  /** A port nothing listens on right now. */
  static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}

package dev.kdelay.service.faults;

import dev.kdelay.service.broker.BrokerProfile;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.storage.Formatter;

/**
 * A KRaft broker (broker and controller in one) for a child JVM, so that a test can stop it, kill
 * it and start it again on the same data directory and ports: a single node, or one node of a
 * {@link BrokerCluster} whose controllers form one quorum. Its settings are the tests' {@link
 * BrokerProfile} ({@code -Dkdelay.broker.profile}, stock unless told otherwise) for a cluster of
 * its size.
 *
 * <p>Prints {@value #STARTED} to stdout once it serves; SIGTERM shuts it down cleanly, SIGKILL
 * leaves its logs to be recovered at the next start.
 */
final class StandaloneBroker {

  static final String STARTED = "STANDALONE BROKER STARTED";

  private StandaloneBroker() {}

  /**
   * One node of a cluster, or a single node.
   *
   * @param nodeId the node's id
   * @param voters the controller quorum, {@code id@host:port,...}
   * @param clusterId the cluster's id, the same for every node
   * @param nodes how many nodes the cluster has
   */
  record Node(
      Path dir,
      String host,
      int port,
      int controllerPort,
      int nodeId,
      String voters,
      String clusterId,
      int nodes) {

    /** A cluster of one. */
    static Node single(Path dir, String host, int port, int controllerPort) {
      return new Node(
          dir,
          host,
          port,
          controllerPort,
          1,
          "1@" + host + ":" + controllerPort,
          Uuid.randomUuid().toString(),
          1);
    }

    /** The arguments of {@link ChildMain} that run this node. */
    List<String> arguments() {
      return List.of(
          "broker",
          dir.toString(),
          host,
          Integer.toString(port),
          Integer.toString(controllerPort),
          Integer.toString(nodeId),
          voters,
          clusterId,
          Integer.toString(nodes));
    }

    /** The node {@link #arguments} name. */
    static Node of(List<String> arguments) {
      Path dir = Path.of(arguments.get(0));
      String host = arguments.get(1);
      int port = Integer.parseInt(arguments.get(2));
      int controllerPort = Integer.parseInt(arguments.get(3));
      if (arguments.size() == 4) {
        return single(dir, host, port, controllerPort);
      }
      return new Node(
          dir,
          host,
          port,
          controllerPort,
          Integer.parseInt(arguments.get(4)),
          arguments.get(5),
          arguments.get(6),
          Integer.parseInt(arguments.get(7)));
    }
  }

  static void run(Node node) throws Exception {
    KafkaConfig config = new KafkaConfig(properties(node), false);
    Path dir = node.dir();
    if (!Files.exists(dir.resolve("meta.properties"))) {
      format(node);
    }
    KafkaRaftServer server = new KafkaRaftServer(config, Time.SYSTEM);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  server.shutdown();
                  server.awaitShutdown();
                  System.out.println("STANDALONE BROKER STOPPED");
                  stopped.countDown();
                }));
    server.startup();
    System.out.println(STARTED + " on " + node.host() + ":" + node.port());
    stopped.await();
  }

  private static void format(Node node) throws Exception {
    Path dir = node.dir();
    Files.createDirectories(dir);
    new Formatter()
        .setPrintStream(new PrintStream(OutputStream.nullOutputStream()))
        .setNodeId(node.nodeId())
        .setClusterId(node.clusterId())
        .setDirectories(List.of(dir.toString()))
        .setMetadataLogDirectory(dir.toString())
        .setControllerListenerName("CONTROLLER")
        .run();
  }

  private static Map<String, String> properties(Node node) {
    String host = node.host();
    int port = node.port();
    int controllerPort = node.controllerPort();
    Map<String, String> props = new HashMap<>();
    props.put("process.roles", "broker,controller");
    props.put("node.id", Integer.toString(node.nodeId()));
    props.put("controller.quorum.voters", node.voters());
    props.put(
        "listeners",
        "PLAINTEXT://" + host + ":" + port + ",CONTROLLER://" + host + ":" + controllerPort);
    props.put("advertised.listeners", "PLAINTEXT://" + host + ":" + port);
    props.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
    props.put("controller.listener.names", "CONTROLLER");
    props.put("inter.broker.listener.name", "PLAINTEXT");
    props.put("log.dirs", node.dir().toString());
    props.putAll(BrokerProfile.forTests().settings(node.nodes()));
    return props;
  }
}

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
 * A single-node KRaft broker (broker and controller in one) for a child JVM, so that a test can
 * stop it, kill it and start it again on the same data directory and ports. Its settings are the
 * tests' {@link BrokerProfile} ({@code -Dkdelay.broker.profile}, stock unless told otherwise).
 *
 * <p>Prints {@value #STARTED} to stdout once it serves; SIGTERM shuts it down cleanly, SIGKILL
 * leaves its logs to be recovered at the next start.
 */
final class StandaloneBroker {

  static final String STARTED = "STANDALONE BROKER STARTED";

  private static final int NODE_ID = 1;

  private StandaloneBroker() {}

  static void run(Path dir, String host, int port, int controllerPort) throws Exception {
    KafkaConfig config = new KafkaConfig(properties(dir, host, port, controllerPort), false);
    if (!Files.exists(dir.resolve("meta.properties"))) {
      format(dir);
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
    System.out.println(STARTED + " on " + host + ":" + port);
    stopped.await();
  }

  private static void format(Path dir) throws Exception {
    Files.createDirectories(dir);
    new Formatter()
        .setPrintStream(new PrintStream(OutputStream.nullOutputStream()))
        .setNodeId(NODE_ID)
        .setClusterId(Uuid.randomUuid().toString())
        .setDirectories(List.of(dir.toString()))
        .setMetadataLogDirectory(dir.toString())
        .setControllerListenerName("CONTROLLER")
        .run();
  }

  private static Map<String, String> properties(
      Path dir, String host, int port, int controllerPort) {
    Map<String, String> props = new HashMap<>();
    props.put("process.roles", "broker,controller");
    props.put("node.id", Integer.toString(NODE_ID));
    props.put("controller.quorum.voters", NODE_ID + "@" + host + ":" + controllerPort);
    props.put(
        "listeners",
        "PLAINTEXT://" + host + ":" + port + ",CONTROLLER://" + host + ":" + controllerPort);
    props.put("advertised.listeners", "PLAINTEXT://" + host + ":" + port);
    props.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
    props.put("controller.listener.names", "CONTROLLER");
    props.put("inter.broker.listener.name", "PLAINTEXT");
    props.put("log.dirs", dir.toString());
    props.putAll(BrokerProfile.forTests().settings());
    return props;
  }
}

package dev.kdelay.service.faults;

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
 * stop it, kill it and start it again on the same data directory and ports. Tuned like kdelay's
 * embedded broker: one replica for every internal topic, no initial rebalance delay.
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
    props.put("offsets.topic.replication.factor", "1");
    props.put("offsets.topic.num.partitions", "5");
    props.put("transaction.state.log.replication.factor", "1");
    props.put("transaction.state.log.min.isr", "1");
    props.put("transaction.state.log.num.partitions", "5");
    props.put("share.coordinator.state.topic.replication.factor", "1");
    props.put("share.coordinator.state.topic.min.isr", "1");
    props.put("min.insync.replicas", "1");
    props.put("group.initial.rebalance.delay.ms", "0");
    // As kdelay's README asks of a broker: abort a dead producer's transaction within a second.
    props.put("transaction.abort.timed.out.transaction.cleanup.interval.ms", "1000");
    props.put("log.cleaner.dedupe.buffer.size", Long.toString(8L * 1024 * 1024));
    return props;
  }
}

package dev.kdelay.service.broker;

import static java.util.Objects.requireNonNull;

import dev.kdelay.service.DelayServiceException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.storage.Formatter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real single-node Apache Kafka broker in this JVM: one KRaft node that is both broker and
 * controller, for running kdelay without a Kafka of one's own.
 *
 * <p>The data directory is formatted on first start and reused afterwards, so topics, committed
 * offsets and the changelogs of pending tasks survive a restart. Its settings are those of a {@link
 * BrokerProfile}: {@code bin/kdelay} runs the tuned one.
 *
 * <pre>{@code
 * Listeners listeners = new Listeners("127.0.0.1", 9092, 9093);
 * try (EmbeddedKafka kafka =
 *     EmbeddedKafka.start(Path.of("data/kafka"), listeners, BrokerProfile.TUNED)) {
 *   String bootstrapServers = kafka.bootstrapServers(); // 127.0.0.1:9092
 * }
 * }</pre>
 */
public final class EmbeddedKafka implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(EmbeddedKafka.class);

  private static final int NODE_ID = 1;
  private static final String BROKER_LISTENER = "PLAINTEXT";
  private static final String CONTROLLER_LISTENER = "CONTROLLER";

  /**
   * Where the broker listens.
   *
   * @param host the address both listeners bind to
   * @param brokerPort the port clients connect to
   * @param controllerPort the port of the KRaft controller
   */
  public record Listeners(String host, int brokerPort, int controllerPort) {

    /** {@code 127.0.0.1:9092} for clients, {@code 127.0.0.1:9093} for the controller. */
    public static final Listeners DEFAULT = new Listeners("127.0.0.1", 9092, 9093);

    String bootstrapServers() {
      return host + ":" + brokerPort;
    }
  }

  private final KafkaRaftServer server;
  private final Listeners listeners;

  private EmbeddedKafka(KafkaRaftServer server, Listeners listeners) {
    this.server = server;
    this.listeners = listeners;
  }

  /**
   * Starts a broker with the {@link BrokerProfile#TUNED} settings, formatting the data directory if
   * it is new.
   *
   * @param dataDir the broker's log directory, created if absent
   * @param listeners where to listen
   * @return the running broker
   * @throws DelayServiceException if a port is taken, the directory is in use by another broker, or
   *     the broker fails to start
   */
  public static EmbeddedKafka start(Path dataDir, Listeners listeners) {
    return start(dataDir, listeners, BrokerProfile.TUNED);
  }

  /**
   * Starts a broker with the settings of a profile, formatting the data directory if it is new.
   *
   * @param dataDir the broker's log directory, created if absent
   * @param listeners where to listen
   * @param profile Apache Kafka's defaults, or the settings kdelay recommends
   * @return the running broker
   * @throws DelayServiceException if a port is taken, the directory is in use by another broker, or
   *     the broker fails to start
   */
  public static EmbeddedKafka start(Path dataDir, Listeners listeners, BrokerProfile profile) {
    requireNonNull(dataDir, "dataDir cannot be null");
    requireNonNull(listeners, "listeners cannot be null");
    requireNonNull(profile, "profile cannot be null");
    Path dir = dataDir.toAbsolutePath();
    ensurePortFree(listeners.host(), listeners.brokerPort(), "broker");
    ensurePortFree(listeners.host(), listeners.controllerPort(), "controller");
    long started = System.nanoTime();
    log.info(
        "event=broker-starting address={} data={} profile={}",
        listeners.bootstrapServers(),
        dir,
        profile.label());
    KafkaConfig config = new KafkaConfig(brokerProperties(dir, listeners, profile), false);
    formatIfNew(dir);
    KafkaRaftServer server = newServer(config, dir);
    try {
      server.startup();
    } catch (RuntimeException e) {
      server.shutdown();
      server.awaitShutdown();
      throw new DelayServiceException("The embedded Kafka broker failed to start: " + e, e);
    }
    log.info(
        "event=broker-started address={} startup_ms={}",
        listeners.bootstrapServers(),
        (System.nanoTime() - started) / 1_000_000);
    return new EmbeddedKafka(server, listeners);
  }

  /** The {@code host:port} clients connect to. */
  public String bootstrapServers() {
    return listeners.bootstrapServers();
  }

  /** Stops the broker and waits until it has released its ports and data directory. */
  @Override
  public void close() {
    server.shutdown();
    server.awaitShutdown();
    log.info("event=broker-stopped address={}", listeners.bootstrapServers());
  }

  private static Map<String, String> brokerProperties(
      Path dir, Listeners listeners, BrokerProfile profile) {
    Map<String, String> props = new HashMap<>();
    props.put("process.roles", "broker,controller");
    props.put("node.id", Integer.toString(NODE_ID));
    props.put(
        "controller.quorum.voters",
        NODE_ID + "@" + listeners.host() + ":" + listeners.controllerPort());
    props.put(
        "listeners",
        BROKER_LISTENER
            + "://"
            + listeners.bootstrapServers()
            + ","
            + CONTROLLER_LISTENER
            + "://"
            + listeners.host()
            + ":"
            + listeners.controllerPort());
    props.put("advertised.listeners", BROKER_LISTENER + "://" + listeners.bootstrapServers());
    props.put(
        "listener.security.protocol.map",
        BROKER_LISTENER + ":PLAINTEXT," + CONTROLLER_LISTENER + ":PLAINTEXT");
    props.put("controller.listener.names", CONTROLLER_LISTENER);
    props.put("inter.broker.listener.name", BROKER_LISTENER);
    props.put("log.dirs", dir.toString());
    props.putAll(profile.settings());
    return props;
  }

  private static void formatIfNew(Path dir) {
    if (Files.exists(dir.resolve("meta.properties"))) {
      return;
    }
    try {
      Files.createDirectories(dir);
      new Formatter()
          .setPrintStream(new PrintStream(OutputStream.nullOutputStream()))
          .setNodeId(NODE_ID)
          .setClusterId(Uuid.randomUuid().toString())
          .setDirectories(List.of(dir.toString()))
          .setMetadataLogDirectory(dir.toString())
          .setControllerListenerName(CONTROLLER_LISTENER)
          .run();
    } catch (Exception e) {
      throw new DelayServiceException("Cannot format the embedded Kafka data directory " + dir, e);
    }
    log.info("event=broker-formatted data={}", dir);
  }

  private static KafkaRaftServer newServer(KafkaConfig config, Path dir) {
    try {
      return new KafkaRaftServer(config, Time.SYSTEM);
    } catch (RuntimeException e) {
      // Most often the directory lock: another broker (another kdelay) uses the same directory.
      throw new DelayServiceException(
          "The embedded Kafka broker cannot use " + dir + " (is another kdelay using it?): " + e,
          e);
    }
  }

  private static void ensurePortFree(String host, int port, String role) {
    try (ServerSocket socket = new ServerSocket()) {
      // As Kafka's own listener does, so that a socket of a just-stopped broker in TIME_WAIT
      // does not count as taken.
      socket.setReuseAddress(true);
      socket.bind(new InetSocketAddress(host, port));
    } catch (BindException e) {
      String hint =
          role.equals("broker")
              ? " or, if a Kafka broker listens there, use it: DELAY_BOOTSTRAP_SERVERS="
                  + host
                  + ":"
                  + port
              : " or set DELAY_BOOTSTRAP_SERVERS to use a Kafka of your own";
      throw new DelayServiceException(
          String.format(
              "Port %d on %s is in use, so the embedded Kafka %s cannot listen there. Stop"
                  + " whatever listens on it,%s",
              port, host, role, hint),
          e);
    } catch (IOException e) {
      throw new DelayServiceException("Cannot check port " + port + " on " + host + ": " + e, e);
    }
  }
}

package dev.kdelay.service.faults;

import dev.kdelay.service.broker.BrokerProfile;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A {@link StandaloneBroker} in a child JVM, on fixed ports and a fixed data directory, so that it
 * can be stopped (SIGTERM), killed (SIGKILL) and started again as the same broker with the same
 * data: a broker restart as an operator, or a crash, does it. A single node, or one node of a
 * {@link BrokerCluster}.
 */
final class BrokerProcess implements AutoCloseable {

  private static final Duration START_TIMEOUT = Duration.ofSeconds(120);

  private final ChildJvm jvm;
  private final StandaloneBroker.Node node;

  private BrokerProcess(ChildJvm jvm, StandaloneBroker.Node node) {
    this.jvm = jvm;
    this.node = node;
  }

  /** Starts a single-node broker on two free loopback ports, its data and log under {@code dir}. */
  static BrokerProcess start(Path dir, Path logConfig) {
    int[] ports = freePorts(2);
    StandaloneBroker.Node node =
        StandaloneBroker.Node.single(dir.resolve("broker-data"), "127.0.0.1", ports[0], ports[1]);
    BrokerProcess broker = of(node, "broker", dir.resolve("broker.log"), logConfig);
    broker.restart();
    return broker;
  }

  /** A broker process for a node, not started yet. */
  static BrokerProcess of(StandaloneBroker.Node node, String name, Path log, Path logConfig) {
    ChildJvm jvm =
        new ChildJvm(
            name,
            log,
            List.of(
                "-Xms128m",
                "-Xmx768m",
                "-XX:+UseSerialGC",
                "-D" + BrokerProfile.TEST_PROPERTY + "=" + BrokerProfile.forTests().label(),
                "-Dlog4j2.configurationFile=" + logConfig),
            node.arguments(),
            Map.of());
    return new BrokerProcess(jvm, node);
  }

  String bootstrapServers() {
    return node.host() + ":" + node.port();
  }

  int nodeId() {
    return node.nodeId();
  }

  ChildJvm jvm() {
    return jvm;
  }

  /** Starts the broker again on the same ports and data, and waits until it serves. */
  void restart() {
    launch();
    awaitServing();
  }

  /** Starts the broker's JVM: a node of a cluster serves only once a quorum of them runs. */
  void launch() {
    jvm.start();
  }

  /** Waits until the broker started last serves. */
  void awaitServing() {
    jvm.awaitLog(
        Pattern.compile(Pattern.quote(StandaloneBroker.STARTED)),
        jvm.startedAtLogOffset(),
        START_TIMEOUT);
  }

  /**
   * SIGTERM: a controlled shutdown.
   *
   * @return how long the broker took to exit
   */
  Duration stop() {
    long started = System.nanoTime();
    jvm.terminate();
    jvm.awaitExit(Duration.ofSeconds(120));
    return Duration.ofNanos(System.nanoTime() - started);
  }

  /** SIGKILL: the broker recovers its logs at the next start. */
  void kill() {
    jvm.kill();
    jvm.awaitExit(Duration.ofSeconds(30));
  }

  /** As many free loopback ports, all different: held open together while they are chosen. */
  static int[] freePorts(int count) {
    InetAddress loopback = InetAddress.getLoopbackAddress();
    List<ServerSocket> sockets = new ArrayList<>();
    try {
      int[] ports = new int[count];
      for (int i = 0; i < count; i++) {
        ServerSocket socket = new ServerSocket(0, 1, loopback);
        sockets.add(socket);
        ports[i] = socket.getLocalPort();
      }
      return ports;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      for (ServerSocket socket : sockets) {
        try {
          socket.close();
        } catch (IOException e) {
          // Closing a listening socket of our own: nothing to do about it.
        }
      }
    }
  }

  @Override
  public void close() {
    jvm.destroy();
  }
}

package dev.kdelay.service.faults;

import dev.kdelay.service.broker.BrokerProfile;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A {@link StandaloneBroker} in a child JVM, on fixed ports and a fixed data directory, so that it
 * can be stopped (SIGTERM), killed (SIGKILL) and started again as the same broker with the same
 * data: a broker restart as an operator, or a crash, does it.
 */
final class BrokerProcess implements AutoCloseable {

  private static final Duration START_TIMEOUT = Duration.ofSeconds(120);

  private final ChildJvm jvm;
  private final String bootstrapServers;

  private BrokerProcess(ChildJvm jvm, String bootstrapServers) {
    this.jvm = jvm;
    this.bootstrapServers = bootstrapServers;
  }

  /** Starts a broker on two free loopback ports, its data and log under {@code dir}. */
  static BrokerProcess start(Path dir, Path logConfig) {
    int[] ports = freePorts();
    ChildJvm jvm =
        new ChildJvm(
            "broker",
            dir.resolve("broker.log"),
            List.of(
                "-Xms128m",
                "-Xmx768m",
                "-XX:+UseSerialGC",
                "-D" + BrokerProfile.TEST_PROPERTY + "=" + BrokerProfile.forTests().label(),
                "-Dlog4j2.configurationFile=" + logConfig),
            List.of(
                "broker",
                dir.resolve("broker-data").toString(),
                "127.0.0.1",
                Integer.toString(ports[0]),
                Integer.toString(ports[1])),
            Map.of());
    BrokerProcess broker = new BrokerProcess(jvm, "127.0.0.1:" + ports[0]);
    broker.restart();
    return broker;
  }

  String bootstrapServers() {
    return bootstrapServers;
  }

  ChildJvm jvm() {
    return jvm;
  }

  /** Starts the broker again on the same ports and data, and waits until it serves. */
  void restart() {
    jvm.start();
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

  private static int[] freePorts() {
    InetAddress loopback = InetAddress.getLoopbackAddress();
    // Both open at once, so that the two differ.
    try (ServerSocket broker = new ServerSocket(0, 1, loopback);
        ServerSocket controller = new ServerSocket(0, 1, loopback)) {
      return new int[] {broker.getLocalPort(), controller.getLocalPort()};
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    jvm.destroy();
  }
}

package dev.kdelay.service.faults;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * One kdelay instance in its own JVM: {@code dev.kdelay.service.Main run}, configured the way an
 * operator does it, through {@code DELAY_*} environment variables. Its Kafka {@code client.id} is
 * its name, so that the consumer group shows which instance owns which partitions. It serves HTTP
 * on a port of its own on loopback, as a deployment does, so that the instances find each other's
 * endpoints (the admin API's forwarding, and the eviction of a gone peer); the port stays the same
 * across restarts.
 */
final class ServiceInstance {

  /**
   * What Kafka Streams logs when the client reaches RUNNING. Kafka's own line rather than kdelay's,
   * so that a change of kdelay's log wording cannot break the harness.
   */
  static final Pattern RUNNING =
      Pattern.compile("stream-client \\[[^]]+\\] State transition from \\S+ to RUNNING");

  /** The start of a log line: its time, as the test log configuration writes it. */
  private static final Pattern LOG_LINE = Pattern.compile("\\d\\d:\\d\\d:\\d\\d\\.\\d{3} ");

  /** What Kafka Streams logs at the end of an orderly close. */
  static final Pattern STOPPED = Pattern.compile("Streams client stopped completely");

  /** What Kafka Streams (and kdelay's handler) log when a stream thread dies. */
  static final Pattern THREAD_REPLACED =
      Pattern.compile(
          "Replacing thread in the streams uncaught exception handler|opted to SHUTDOWN_CLIENT"
              + "|opted to SHUTDOWN_APPLICATION|failed; replacing it");

  private static final List<String> JVM_OPTIONS =
      List.of(
          "-Xms64m",
          "-Xmx384m",
          "-XX:+UseSerialGC",
          // C1 only: a child starts in half the CPU time, which matters on 2 loaded cores.
          "-XX:TieredStopAtLevel=1",
          "-XX:+ExitOnOutOfMemoryError");

  private final String name;
  private final Path stateDir;
  private final ChildJvm jvm;

  ServiceInstance(String name, Path dir, Path logConfig, Map<String, String> environment) {
    this.name = name;
    this.stateDir = dir.resolve("state-" + name);
    Map<String, String> env = new HashMap<>(environment);
    env.put("DELAY_STATE_DIR", stateDir.toString());
    env.put("DELAY_KAFKA_CLIENT_ID", name);
    env.putIfAbsent("DELAY_HTTP_PORT", Integer.toString(freePort()));
    // The warm-up exists to have C2 compile the fire path before the instance is ready; a child
    // runs C1 only (below), so 20,000 synthetic tasks would only take CPU from the start-up beside
    // it: 27-30 s of each restart under CI's load, against about 3 s on an idle machine. A
    // small one still runs the warm-up's code in every child.
    env.putIfAbsent("DELAY_WARMUP_TASKS", "2000");
    this.jvm =
        new ChildJvm(
            name,
            dir.resolve(name + ".log"),
            jvmOptions(logConfig),
            List.of("service", "run"),
            env);
  }

  private static int freePort() {
    try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
      return socket.getLocalPort();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static List<String> jvmOptions(Path logConfig) {
    List<String> options = new java.util.ArrayList<>(JVM_OPTIONS);
    options.add("-Dlog4j2.configurationFile=" + logConfig);
    return options;
  }

  String name() {
    return name;
  }

  Path stateDir() {
    return stateDir;
  }

  ChildJvm jvm() {
    return jvm;
  }

  void start() {
    jvm.start();
  }

  /** Waits until this start of the instance has reached RUNNING. */
  void awaitRunning(Duration timeout) {
    jvm.awaitLog(RUNNING, jvm.startedAtLogOffset(), timeout);
  }

  /**
   * Sends SIGTERM and waits for the process to exit.
   *
   * @return how long it took to exit
   */
  Duration terminateAndAwaitExit(Duration timeout) {
    long started = System.nanoTime();
    jvm.terminate();
    int code = jvm.awaitExit(timeout);
    Duration took = Duration.ofNanos(System.nanoTime() - started);
    // A JVM that exits because of SIGTERM reports 128 + 15 once its shutdown hooks have run.
    if (code != 0 && code != 143) {
      throw new AssertionError(name + " exited with " + code + " after SIGTERM; see " + jvm.log());
    }
    return took;
  }

  /**
   * Lines that say a stream thread died since the first start, each with what killed it: the
   * exception kdelay's handler logged last before it (its message and causes, without stack
   * frames), since a CI run shows only the failure message.
   */
  List<String> threadFailures() {
    List<String> lines = jvm.logLines();
    List<String> failures = new java.util.ArrayList<>();
    int cause = -1;
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      if (line.contains("event=stream-thread-failed")) {
        cause = i;
      }
      if (THREAD_REPLACED.matcher(line).find()) {
        failures.add(line + (cause < 0 ? "" : "\n    " + exceptionAt(lines, cause)));
      }
    }
    return failures;
  }

  /** The logged line at {@code start} and its exception's messages, without stack frames. */
  private static String exceptionAt(List<String> lines, int start) {
    List<String> text = new java.util.ArrayList<>(List.of(lines.get(start)));
    for (int i = start + 1; i < lines.size() && text.size() < 12; i++) {
      String line = lines.get(i);
      if (LOG_LINE.matcher(line).lookingAt()) {
        break; // the next log line: the exception has ended
      }
      if (!line.startsWith("\tat ") && !line.startsWith("\t... ")) {
        text.add(line.length() > 300 ? line.substring(0, 300) + "..." : line);
      }
    }
    return String.join("\n    ", text);
  }

  @Override
  public String toString() {
    return name;
  }
}

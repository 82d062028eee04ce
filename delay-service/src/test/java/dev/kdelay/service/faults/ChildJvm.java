package dev.kdelay.service.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * A child JVM running {@link ChildMain}, its stdout and stderr appended to one log file that
 * survives restarts. Signals are the real ones: {@link #terminate()} is SIGTERM, {@link #kill()}
 * SIGKILL, {@link #pause()} and {@link #resume()} SIGSTOP and SIGCONT.
 *
 * <p>The classpath is the test JVM's own (so children run exactly the code under test), or {@code
 * -Dkdelay.faults.classpath}, for instance the shaded {@code delay-service.jar}.
 */
final class ChildJvm {

  private final String name;
  private final Path log;
  private final List<String> jvmOptions;
  private final List<String> arguments;
  private final Map<String, String> environment;
  private Process process;
  private long startedAtLogOffset;

  ChildJvm(
      String name,
      Path log,
      List<String> jvmOptions,
      List<String> arguments,
      Map<String, String> environment) {
    this.name = name;
    this.log = log;
    this.jvmOptions = List.copyOf(jvmOptions);
    this.arguments = List.copyOf(arguments);
    this.environment = Map.copyOf(environment);
  }

  String name() {
    return name;
  }

  Path log() {
    return log;
  }

  /** Starts the JVM; the log offset at this moment is where {@link #awaitLog} starts looking. */
  synchronized void start() {
    if (process != null && process.isAlive()) {
      throw new IllegalStateException(name + " is already running");
    }
    try {
      Files.createDirectories(log.getParent());
      appendMarker("==== starting " + name);
      startedAtLogOffset = Files.size(log);
      ProcessBuilder builder = new ProcessBuilder(command());
      builder.environment().keySet().removeIf(variable -> variable.startsWith("DELAY_"));
      builder.environment().putAll(environment);
      builder.redirectErrorStream(true);
      builder.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
      process = builder.start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + name, e);
    }
  }

  private List<String> command() {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmOptions);
    command.add("-cp");
    command.add(
        System.getProperty("kdelay.faults.classpath", System.getProperty("java.class.path")));
    command.add(ChildMain.class.getName());
    command.addAll(arguments);
    return command;
  }

  synchronized long pid() {
    return process.pid();
  }

  synchronized boolean isAlive() {
    return process != null && process.isAlive();
  }

  /** SIGTERM: the JVM runs its shutdown hooks. */
  synchronized void terminate() {
    appendMarker("==== SIGTERM " + name);
    process.destroy();
  }

  /** SIGKILL: no shutdown hook, no flush, no goodbye to the group. */
  synchronized void kill() {
    appendMarker("==== SIGKILL " + name);
    process.destroyForcibly();
  }

  /** SIGSTOP: every thread stops at once, heartbeats included, until {@link #resume()}. */
  void pause() {
    appendMarker("==== SIGSTOP " + name);
    signal("STOP");
  }

  /** SIGCONT. */
  void resume() {
    signal("CONT");
    appendMarker("==== SIGCONT " + name);
  }

  private void signal(String signal) {
    try {
      Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid())).start();
      if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        throw new IllegalStateException("kill -" + signal + " " + pid() + " failed");
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /**
   * Waits for the process to exit.
   *
   * @return its exit code
   * @throws AssertionError if it is still running after the timeout
   */
  int awaitExit(Duration timeout) {
    Process running;
    synchronized (this) {
      running = process;
    }
    try {
      Duration scaled = Await.scaled(timeout);
      if (!running.waitFor(scaled.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new AssertionError(name + " did not exit within " + scaled.toSeconds() + " s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
    appendMarker("==== " + name + " exited with " + running.exitValue());
    return running.exitValue();
  }

  /** Kills the process if it still runs, also a paused one, and waits for it to go. */
  void destroy() {
    if (isAlive()) {
      kill();
      awaitExit(Duration.ofSeconds(30));
    }
  }

  /** Where the log ends now: pass it to {@link #awaitLog} to look only at what comes later. */
  long logOffset() {
    try {
      return Files.exists(log) ? Files.size(log) : 0;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  long startedAtLogOffset() {
    return startedAtLogOffset;
  }

  /** Waits until a line after {@code fromOffset} matches. */
  void awaitLog(Pattern line, long fromOffset, Duration timeout) {
    try {
      Await.until(
          name + " to log /" + line + "/ (see " + log + ")",
          timeout,
          () -> {
            if (!linesMatching(line, fromOffset).isEmpty()) {
              return true;
            }
            if (!isAlive()) {
              throw new AssertionError(
                  name + " exited before logging /" + line + "/; its log ends:\n" + logTail(4_000));
            }
            return false;
          });
    } catch (AssertionError timedOut) {
      // The log file stays behind on the machine that ran the test; CI shows only this message.
      String since = logText(fromOffset);
      throw new AssertionError(
          timedOut.getMessage()
              + "; alive="
              + isAlive()
              + "; the log since, last 6,000 characters:\n"
              + since.substring(Math.max(0, since.length() - 6_000)),
          timedOut);
    }
  }

  /** The last characters of the log. */
  String logTail(int characters) {
    String text = logText(Math.max(0, logOffset() - characters));
    return text;
  }

  /** The log lines after {@code fromOffset} that contain a match. */
  List<String> linesMatching(Pattern line, long fromOffset) {
    return logText(fromOffset).lines().filter(text -> line.matcher(text).find()).toList();
  }

  /** Every line of the log. */
  List<String> logLines() {
    return logText(0).lines().toList();
  }

  private String logText(long fromOffset) {
    try {
      byte[] bytes = Files.readAllBytes(log);
      int from = (int) Math.min(fromOffset, bytes.length);
      return new String(bytes, from, bytes.length - from, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void appendMarker(String text) {
    try {
      Files.createDirectories(log.getParent());
      Files.writeString(
          log,
          java.time.Instant.now() + " " + text + System.lineSeparator(),
          StandardCharsets.UTF_8,
          java.nio.file.StandardOpenOption.CREATE,
          java.nio.file.StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}

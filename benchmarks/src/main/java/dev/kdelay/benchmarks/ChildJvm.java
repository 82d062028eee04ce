package dev.kdelay.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A process of the benchmark (the broker, an application under test) in a JVM of its own, so that
 * its CPU time, resident memory and heap are its own and its garbage collector does not pause the
 * load generator.
 *
 * <p>The child speaks a line protocol: it prints {@code READY ...} and answers commands written to
 * its standard input; logs go to its standard error, which lands in a file. A child exits when its
 * standard input closes, so none outlives the benchmark.
 */
final class ChildJvm implements AutoCloseable {

  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(60);

  private final String name;
  private final Process process;
  private final PrintWriter commands;
  private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
  private final Path log;

  private ChildJvm(String name, Process process, Path log) {
    this.name = name;
    this.process = process;
    this.log = log;
    this.commands =
        new PrintWriter(process.outputWriter(StandardCharsets.UTF_8), /* autoFlush= */ true);
    Thread reader = new Thread(this::readLines, "child-" + name + "-stdout");
    reader.setDaemon(true);
    reader.start();
  }

  /**
   * Starts a JVM with this JVM's class path.
   *
   * @param name the child's name in logs and errors
   * @param jvmOptions options such as {@code -Xmx1g}
   * @param mainClass the main class
   * @param args its arguments
   * @param log the file its standard error goes to
   */
  static ChildJvm start(
      String name, List<String> jvmOptions, Class<?> mainClass, List<String> args, Path log) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmOptions);
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(mainClass.getName());
    command.addAll(args);
    try {
      Files.createDirectories(log.getParent());
      Process process =
          new ProcessBuilder(command)
              .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()))
              .start();
      return new ChildJvm(name, process, log);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + name, e);
    }
  }

  /**
   * Waits for the next protocol line starting with {@code prefix}; other lines are skipped.
   *
   * @return the rest of the line after the prefix and a space
   * @throws IllegalStateException if the child exits or is silent for longer than the timeout
   */
  String await(String prefix, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      long left = deadline - System.nanoTime();
      String line;
      try {
        line = lines.poll(Math.max(0, Math.min(left, 200_000_000L)), TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted waiting for " + name, e);
      }
      if (line != null && (line.equals(prefix) || line.startsWith(prefix + " "))) {
        return line.substring(prefix.length()).trim();
      }
      if (line == null && !process.isAlive() && lines.isEmpty()) {
        throw new IllegalStateException(
            name + " exited with " + process.exitValue() + " before " + prefix + "; see " + log);
      }
      if (left <= 0) {
        throw new IllegalStateException(
            name
                + " did not answer "
                + prefix
                + " within "
                + timeout.toSeconds()
                + " s; see "
                + log);
      }
    }
  }

  /** Sends a command line and waits for its answer, the line starting with the same word. */
  String ask(String command, Duration timeout) {
    commands.println(command);
    return await(command, timeout);
  }

  /** CPU time the child has used so far, user and system. */
  Duration cpuTime() {
    return process.info().totalCpuDuration().orElse(Duration.ZERO);
  }

  /** Resident set size of the child, from {@code /proc} (Linux); -1 elsewhere. */
  long residentBytes() {
    try {
      for (String line :
          Files.readAllLines(Path.of("/proc", Long.toString(process.pid()), "status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
        }
      }
    } catch (IOException | NumberFormatException e) {
      // Not Linux, or the process is gone.
    }
    return -1;
  }

  long pid() {
    return process.pid();
  }

  String name() {
    return name;
  }

  private void readLines() {
    try (BufferedReader in =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        lines.add(line);
      }
    } catch (IOException e) {
      // The child is gone; await() reports it.
    }
  }

  /** Asks the child to stop, waits for it, and kills it if it does not exit in time. */
  @Override
  public void close() {
    if (!process.isAlive()) {
      return;
    }
    commands.println("STOP");
    commands.close();
    try {
      if (!process.waitFor(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}

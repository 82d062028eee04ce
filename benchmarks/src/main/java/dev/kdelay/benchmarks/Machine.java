package dev.kdelay.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** What the benchmark ran on, for the report: figures mean little without it. */
final class Machine {

  private Machine() {}

  /** CPUs, memory, CPU model, OS and Java. */
  static String describe() {
    return String.format(
        "%d CPUs (%s), %s RAM, %s %s, Java %s (%s)",
        Runtime.getRuntime().availableProcessors(),
        cpuModel(),
        memTotal(),
        System.getProperty("os.name"),
        System.getProperty("os.version"),
        System.getProperty("java.version"),
        System.getProperty("java.vm.name"));
  }

  /** The 1, 5 and 15 minute load averages: how busy the shared machine was. */
  static String loadAverage() {
    String load = read(Path.of("/proc/loadavg")).stream().findFirst().orElse("? ? ?");
    String[] fields = load.split(" ");
    return fields.length >= 3 ? fields[0] + " " + fields[1] + " " + fields[2] : "unknown";
  }

  private static String cpuModel() {
    return read(Path.of("/proc/cpuinfo")).stream()
        .filter(line -> line.startsWith("model name"))
        .map(line -> line.substring(line.indexOf(':') + 1).trim())
        .findFirst()
        .orElse("unknown model");
  }

  private static String memTotal() {
    return read(Path.of("/proc/meminfo")).stream()
        .filter(line -> line.startsWith("MemTotal:"))
        .map(line -> Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024)
        .map(Report::bytes)
        .findFirst()
        .orElse("unknown");
  }

  private static List<String> read(Path file) {
    try {
      return Files.readAllLines(file);
    } catch (IOException e) {
      return List.of();
    }
  }
}

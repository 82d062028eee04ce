package dev.kdelay.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;

/**
 * A running application under test.
 *
 * @param kind kdelay or the pass-through
 * @param jvm its JVM
 * @param applicationId its Kafka Streams application id
 * @param input the topic it reads requests (or records) from
 * @param stateDir its state directory
 * @param startupMs from launch to RUNNING, restoring included
 */
record App(
    AppKind kind, ChildJvm jvm, String applicationId, String input, Path stateDir, long startupMs) {

  /** Heap in use after a full garbage collection. */
  long heapAfterGcBytes() {
    return Long.parseLong(jvm.ask("HEAP", Duration.ofMinutes(1)));
  }

  /** The application's Kafka Streams counters now. */
  StreamsCounters counters() {
    return StreamsCounters.parse(jvm.ask("COUNTERS", Duration.ofSeconds(30)));
  }

  /** Bytes on disk in the state directory. */
  long stateDirBytes() {
    for (int attempt = 1; ; attempt++) {
      try (Stream<Path> files = Files.walk(stateDir)) {
        return files.filter(Files::isRegularFile).mapToLong(App::size).sum();
      } catch (IOException | UncheckedIOException e) {
        // RocksDB compacts in the background: a file vanished under the walk. Walk again.
        if (attempt == 5) {
          throw new IllegalStateException("cannot measure " + stateDir, e);
        }
      }
    }
  }

  private static long size(Path file) {
    try {
      return Files.size(file);
    } catch (IOException e) {
      return 0; // removed while walking: RocksDB compacts in the background
    }
  }
}

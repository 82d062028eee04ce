package dev.kdelay.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.function.Predicate;

/** Waiting on what the admin API answers, for the HTTP integration tests. */
final class HttpProbes {

  private HttpProbes() {}

  /** Something that can be read again until it satisfies a condition. */
  @FunctionalInterface
  interface Probe<T> {
    T read() throws Exception;
  }

  /** Reads until the condition holds; fails with the last value read when it does not in time. */
  static <T> T await(Duration timeout, Probe<T> probe, Predicate<T> condition) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    T last = probe.read();
    while (!condition.test(last)) {
      assertThat(System.nanoTime())
          .as("condition met within %s; last read: %s", timeout, describe(last))
          .isLessThan(deadline);
      Thread.sleep(50); // the poll interval of this wait, not a guess at how long it takes
      last = probe.read();
    }
    return last;
  }

  private static String describe(Object value) {
    return value instanceof HttpResponse<?> response
        ? response.statusCode() + " " + response.body()
        : String.valueOf(value);
  }

  static void deleteRecursively(Path dir) throws IOException {
    try (var paths = Files.walk(dir)) {
      for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(path);
      }
    }
  }
}

package dev.kdelay.service.warmup;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * Waits until the JVM's JIT compilers have worked off their queues: until their total compilation
 * time (which grows as each compilation ends) grew by at most a tenth of a window's length over a
 * whole window, or a longest wait has passed. Not "no compilation at all": in a JVM that also runs
 * Kafka clients, or an embedded broker, something is always being compiled. A JVM that does not
 * report compilation time is taken as quiet.
 */
final class CompilerQuiet {

  /** How often the compilers' time is read. */
  private static final long STEP_MS = 25;

  private final LongSupplier compilationMs;
  private final LongSupplier nanoTime;

  private CompilerQuiet(LongSupplier compilationMs, LongSupplier nanoTime) {
    this.compilationMs = compilationMs;
    this.nanoTime = nanoTime;
  }

  /** This JVM's compilers, or empty if it does not report their time. */
  static Optional<CompilerQuiet> ofThisJvm() {
    CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
    if (jit == null || !jit.isCompilationTimeMonitoringSupported()) {
      return Optional.empty();
    }
    return Optional.of(new CompilerQuiet(jit::getTotalCompilationTime, System::nanoTime));
  }

  /** For tests: the compilers' time and the clock, given. */
  static CompilerQuiet of(LongSupplier compilationMs, LongSupplier nanoTime) {
    return new CompilerQuiet(compilationMs, nanoTime);
  }

  /**
   * Waits until, over a whole {@code window}, the compilers' time grew by at most a tenth of it,
   * for at most {@code atMost}.
   *
   * @return how long it waited
   */
  Duration await(Duration window, Duration atMost) throws InterruptedException {
    long started = nanoTime.getAsLong();
    long windowStart = started;
    long atWindowStart = compilationMs.getAsLong();
    long allowedMs = window.toMillis() / 10;
    while (true) {
      long now = nanoTime.getAsLong();
      if (now - started >= atMost.toNanos()) {
        return Duration.ofNanos(now - started);
      }
      Thread.sleep(STEP_MS);
      long compiled = compilationMs.getAsLong();
      now = nanoTime.getAsLong();
      if (now - windowStart >= window.toNanos()) {
        if (compiled - atWindowStart <= allowedMs) {
          return Duration.ofNanos(now - started);
        }
        windowStart = now;
        atWindowStart = compiled;
      }
    }
  }
}

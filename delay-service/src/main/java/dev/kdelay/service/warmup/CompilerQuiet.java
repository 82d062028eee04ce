package dev.kdelay.service.warmup;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * Waits until the JVM's JIT compilers have finished what they were asked to compile: until their
 * total compilation time (which grows as each compilation ends) has not grown for a while, or a
 * longest wait has passed. A JVM that does not report compilation time is taken as quiet.
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
  static java.util.Optional<CompilerQuiet> ofThisJvm() {
    CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
    if (jit == null || !jit.isCompilationTimeMonitoringSupported()) {
      return java.util.Optional.empty();
    }
    return java.util.Optional.of(new CompilerQuiet(jit::getTotalCompilationTime, System::nanoTime));
  }

  /** For tests: the compilers' time and the clock, given. */
  static CompilerQuiet of(LongSupplier compilationMs, LongSupplier nanoTime) {
    return new CompilerQuiet(compilationMs, nanoTime);
  }

  /**
   * Waits until the compilers' time has not grown for {@code quietFor}, for at most {@code atMost}.
   *
   * @return how long it waited
   */
  Duration await(Duration quietFor, Duration atMost) throws InterruptedException {
    long started = nanoTime.getAsLong();
    long last = compilationMs.getAsLong();
    long quietSince = started;
    while (true) {
      long now = nanoTime.getAsLong();
      if (now - quietSince >= quietFor.toNanos() || now - started >= atMost.toNanos()) {
        return Duration.ofNanos(now - started);
      }
      Thread.sleep(STEP_MS);
      long compiled = compilationMs.getAsLong();
      if (compiled != last) {
        last = compiled;
        quietSince = nanoTime.getAsLong();
      }
    }
  }
}

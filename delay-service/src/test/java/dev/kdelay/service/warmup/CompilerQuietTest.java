package dev.kdelay.service.warmup;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongUnaryOperator;
import org.junit.jupiter.api.Test;

class CompilerQuietTest {

  /** A clock that moves 25 ms at each reading of the compilers' time: one step of the wait. */
  private final AtomicLong nanos = new AtomicLong();

  /** The compilers' time at the n-th reading, the clock then at 25 ms * (n + 1). */
  private CompilerQuiet compilers(LongUnaryOperator compiledAtReading) {
    AtomicLong readings = new AtomicLong();
    return CompilerQuiet.of(
        () -> {
          nanos.addAndGet(Duration.ofMillis(25).toNanos());
          return compiledAtReading.applyAsLong(readings.getAndIncrement());
        },
        nanos::get);
  }

  @Test
  void shouldWaitForAWholeWindowInWhichTheCompilersWereBusyATenthOfTheTimeAtMost()
      throws Exception {
    // 20 ms of compilation ends at each of the first 8 readings (by 225 ms), then nothing.
    CompilerQuiet quiet = compilers(reading -> Math.min(reading, 8) * 20);

    Duration waited = quiet.await(Duration.ofMillis(100), Duration.ofSeconds(5));

    // Windows of 100 ms from the start: 0-100 grew 60 ms, 100-200 80, 200-300 20 (more than a
    // tenth), 300-400 nothing.
    assertThat(waited).isEqualTo(Duration.ofMillis(400));
  }

  @Test
  void shouldTakeCompilationsThatTakeATenthOfTheTimeAtMostAsQuiet() throws Exception {
    // A JVM with Kafka clients (or a broker) in it always compiles something: 8 ms per 100 ms.
    CompilerQuiet quiet = compilers(reading -> reading * 2);

    Duration waited = quiet.await(Duration.ofMillis(100), Duration.ofSeconds(5));

    assertThat(waited).isEqualTo(Duration.ofMillis(100));
  }

  @Test
  void shouldGiveUpAfterTheLongestWaitWhileTheCompilersKeepWorking() throws Exception {
    CompilerQuiet quiet = compilers(reading -> reading * 4); // 16 ms per 100 ms

    Duration waited = quiet.await(Duration.ofMillis(100), Duration.ofMillis(500));

    assertThat(waited).isEqualTo(Duration.ofMillis(500));
  }
}

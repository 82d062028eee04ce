package dev.kdelay.service.warmup;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class CompilerQuietTest {

  /** A clock that moves 25 ms at each reading of the compilers' time: one step of the wait. */
  private final AtomicLong nanos = new AtomicLong();

  @Test
  void shouldWaitUntilTheCompilersHaveFinishedNothingForTheQuietTime() throws Exception {
    AtomicLong reads = new AtomicLong();
    CompilerQuiet quiet =
        CompilerQuiet.of(
            () -> {
              long read = reads.getAndIncrement();
              nanos.addAndGet(Duration.ofMillis(25).toNanos());
              return Math.min(read, 8) * 10; // a compilation ends at each of the first 8 steps
            },
            nanos::get);

    Duration waited = quiet.await(Duration.ofMillis(100), Duration.ofSeconds(5));

    // The compilers' time grows at each reading until the ninth (the clock then at 225 ms), then
    // stays: quiet from 225 ms, so the wait ends 100 ms later.
    assertThat(waited).isEqualTo(Duration.ofMillis(325));
  }

  @Test
  void shouldGiveUpAfterTheLongestWaitWhileTheCompilersKeepWorking() throws Exception {
    AtomicLong compiled = new AtomicLong();
    CompilerQuiet quiet =
        CompilerQuiet.of(
            () -> {
              nanos.addAndGet(Duration.ofMillis(25).toNanos());
              return compiled.addAndGet(3);
            },
            nanos::get);

    Duration waited = quiet.await(Duration.ofMillis(100), Duration.ofMillis(500));

    assertThat(waited).isEqualTo(Duration.ofMillis(500));
  }
}

package dev.kdelay.service;

import static org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
import static org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class ReplaceThreadHandlerTest {

  private final MutableClock clock = new MutableClock();
  private final ReplaceThreadHandler handler =
      new ReplaceThreadHandler(2, Duration.ofMinutes(1), clock);
  private final RuntimeException failure = new TestFailure();

  @Test
  void shouldReplaceTheThreadWhenFailuresAreRare() {
    assertThat(handler.handle(failure)).isEqualTo(REPLACE_THREAD);
    clock.advance(Duration.ofSeconds(40));
    assertThat(handler.handle(failure)).isEqualTo(REPLACE_THREAD);
    clock.advance(Duration.ofSeconds(40));
    assertThat(handler.handle(failure)).isEqualTo(REPLACE_THREAD);
  }

  @Test
  void shouldShutDownWhenFailuresRepeatWithinTheWindow() {
    handler.handle(failure);
    handler.handle(failure);

    assertThat(handler.handle(failure)).isEqualTo(SHUTDOWN_CLIENT);
  }

  /** Without a stack trace, which the handler would log. */
  private static final class TestFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    TestFailure() {
      super("test failure", null, false, false);
    }
  }

  private static final class MutableClock extends Clock {
    private Instant now = Instant.parse("2030-01-01T00:00:00Z");

    void advance(Duration duration) {
      now = now.plus(duration);
    }

    @Override
    public Instant instant() {
      return now;
    }

    @Override
    public java.time.ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(java.time.ZoneId zone) {
      return this;
    }
  }
}

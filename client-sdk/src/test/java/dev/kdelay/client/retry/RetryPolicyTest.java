package dev.kdelay.client.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;

class RetryPolicyTest {

  @Test
  void shouldGrowTheDelayByTheMultiplierWhenJitterIsOff() {
    RetryPolicy policy =
        RetryPolicy.builder()
            .initialDelay(Duration.ofMillis(500))
            .multiplier(3)
            .maxDelay(Duration.ofHours(1))
            .jitter(0)
            .build();

    assertThat(policy.delay(1)).isEqualTo(Duration.ofMillis(500));
    assertThat(policy.delay(2)).isEqualTo(Duration.ofMillis(1_500));
    assertThat(policy.delay(3)).isEqualTo(Duration.ofMillis(4_500));
    assertThat(policy.delay(4)).isEqualTo(Duration.ofMillis(13_500));
  }

  @Test
  void shouldCapTheDelayAtTheMaximumWhenItGrowsPastIt() {
    RetryPolicy policy =
        RetryPolicy.builder()
            .initialDelay(Duration.ofSeconds(1))
            .maxDelay(Duration.ofSeconds(10))
            .jitter(0)
            .build();

    assertThat(policy.delay(4)).isEqualTo(Duration.ofSeconds(8));
    assertThat(policy.delay(5)).isEqualTo(Duration.ofSeconds(10));
    // 2^(attempt-1) overflows a long of milliseconds long before attempt 1000.
    assertThat(policy.delay(1_000)).isEqualTo(Duration.ofSeconds(10));
    assertThat(policy.delay(Integer.MAX_VALUE)).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void shouldKeepAFixedDelayWhenTheMultiplierIsOne() {
    RetryPolicy policy =
        RetryPolicy.builder().initialDelay(Duration.ofSeconds(2)).multiplier(1).jitter(0).build();

    assertThat(policy.delay(1)).isEqualTo(policy.delay(7)).isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void shouldMoveTheDelayByAtMostTheJitterEitherWay() {
    RetryPolicy policy =
        RetryPolicy.builder()
            .initialDelay(Duration.ofSeconds(10))
            .maxDelay(Duration.ofHours(1))
            .jitter(0.2)
            .random(new SplittableRandom(42))
            .build();

    long min = Long.MAX_VALUE;
    long max = Long.MIN_VALUE;
    for (int i = 0; i < 10_000; i++) {
      long delay = policy.delay(1).toMillis();
      min = Math.min(min, delay);
      max = Math.max(max, delay);
    }

    assertThat(min).isBetween(8_000L, 8_050L);
    assertThat(max).isBetween(11_950L, 12_000L);
  }

  @Test
  void shouldDrawTheBoundsOfTheJitterFromTheExtremesOfTheRandomSource() {
    assertThat(policyDrawing(0.0).delay(1)).isEqualTo(Duration.ofMillis(750));
    assertThat(policyDrawing(0.5).delay(1)).isEqualTo(Duration.ofMillis(1_000));
    assertThat(policyDrawing(Math.nextDown(1.0)).delay(1)).isEqualTo(Duration.ofMillis(1_250));
  }

  @Test
  void shouldNeverExceedTheMaximumDelayWhenJitterAddsToIt() {
    RetryPolicy policy =
        RetryPolicy.builder()
            .initialDelay(Duration.ofSeconds(1))
            .maxDelay(Duration.ofSeconds(4))
            .jitter(1)
            .random(fixed(Math.nextDown(1.0)))
            .build();

    assertThat(policy.baseDelay(3)).isEqualTo(Duration.ofSeconds(4));
    assertThat(policy.delay(3)).isEqualTo(Duration.ofSeconds(4));
    assertThat(policy.delay(2)).isEqualTo(Duration.ofSeconds(4));
  }

  @Test
  void shouldGiveTheSameDelaysWhenSeededTheSame() {
    RetryPolicy first = RetryPolicy.builder().random(new SplittableRandom(7)).build();
    RetryPolicy second = RetryPolicy.builder().random(new SplittableRandom(7)).build();

    for (int attempt = 1; attempt < 10; attempt++) {
      assertThat(first.delay(attempt)).isEqualTo(second.delay(attempt));
    }
  }

  @Test
  void shouldRetryEveryExceptionWhenNothingIsListed() {
    RetryPolicy policy = RetryPolicy.builder().build();

    assertThat(policy.isRetryable(new IllegalStateException())).isTrue();
    assertThat(policy.isRetryable(new Error())).isTrue();
  }

  @Test
  void shouldNotRetryANonRetryableExceptionNorOneItCaused() {
    RetryPolicy policy = RetryPolicy.builder().notRetryable(IllegalArgumentException.class).build();

    assertThat(policy.isRetryable(new NumberFormatException())).isFalse();
    assertThat(policy.isRetryable(new RuntimeException(new IllegalArgumentException()))).isFalse();
    assertThat(policy.isRetryable(new IllegalStateException())).isTrue();
  }

  @Test
  void shouldRetryOnlyListedExceptionsWhenRetryableOnesAreGiven() {
    RetryPolicy policy = RetryPolicy.builder().retryable(IOException.class).build();

    assertThat(policy.isRetryable(new IOException())).isTrue();
    assertThat(policy.isRetryable(new UncheckedIOException(new IOException()))).isTrue();
    assertThat(policy.isRetryable(new IllegalStateException())).isFalse();
  }

  @Test
  void shouldLetANonRetryableMatchWinOverARetryableOne() {
    RetryPolicy policy =
        RetryPolicy.builder()
            .retryable(IOException.class)
            .notRetryable(FileNotFoundException.class)
            .build();

    assertThat(policy.isRetryable(new FileNotFoundException())).isFalse();
    assertThat(policy.isRetryable(new IOException(new FileNotFoundException()))).isFalse();
    assertThat(policy.isRetryable(new IOException())).isTrue();
  }

  @Test
  void shouldStopAtACauseCycleWhenClassifying() {
    RuntimeException first = new RuntimeException();
    RuntimeException second = new RuntimeException(first);
    first.initCause(second);

    assertThat(RetryPolicy.builder().build().isRetryable(first)).isTrue();
  }

  @Test
  void shouldRefuseOptionsOutOfRangeNamingTheValue() {
    assertThatThrownBy(() -> RetryPolicy.builder().maxAttempts(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("got 0");
    assertThatThrownBy(() -> RetryPolicy.builder().multiplier(0.5)).hasMessageContaining("got 0.5");
    assertThatThrownBy(() -> RetryPolicy.builder().multiplier(Double.NaN))
        .hasMessageContaining("got NaN");
    assertThatThrownBy(() -> RetryPolicy.builder().jitter(1.5)).hasMessageContaining("got 1.5");
    assertThatThrownBy(() -> RetryPolicy.builder().initialDelay(Duration.ofMillis(-1)))
        .hasMessageContaining("PT-0.001S");
    assertThatThrownBy(
            () ->
                RetryPolicy.builder()
                    .initialDelay(Duration.ofMinutes(2))
                    .maxDelay(Duration.ofMinutes(1))
                    .build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("PT2M");
    assertThatThrownBy(() -> RetryPolicy.builder().build().delay(0)).hasMessageContaining("got 0");
  }

  private static RetryPolicy policyDrawing(double draw) {
    return RetryPolicy.builder()
        .initialDelay(Duration.ofSeconds(1))
        .jitter(0.25)
        .random(fixed(draw))
        .build();
  }

  /** A random source that always draws the same double. */
  private static RandomGenerator fixed(double draw) {
    return new RandomGenerator() {
      @Override
      public long nextLong() {
        throw new UnsupportedOperationException();
      }

      @Override
      public double nextDouble() {
        return draw;
      }
    };
  }
}

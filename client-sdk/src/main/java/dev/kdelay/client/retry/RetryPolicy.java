package dev.kdelay.client.retry;

import static java.util.Objects.requireNonNull;

import dev.kdelay.schemas.WireTimes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;

/**
 * When a failed record is tried again: exponential back-off with jitter, a maximum number of
 * attempts, a maximum delay, and which exceptions are worth retrying at all. Immutable and
 * thread-safe (unless built with a {@link Builder#random random source} that is not).
 *
 * <pre>{@code
 * RetryPolicy policy =
 *     RetryPolicy.builder()
 *         .maxAttempts(5)                        // the first delivery and four retries
 *         .initialDelay(Duration.ofSeconds(1))   // 1 s, 2 s, 4 s, 8 s ...
 *         .multiplier(2.0)
 *         .maxDelay(Duration.ofMinutes(5))
 *         .jitter(0.2)                           // each delay within +-20 %
 *         .notRetryable(IllegalArgumentException.class, JsonParseException.class)
 *         .build();
 * }</pre>
 *
 * <p>After the {@code n}-th failed attempt the record waits {@code initialDelay *
 * multiplier^(n-1)}, moved by a uniformly drawn jitter of up to {@code jitter} times that in either
 * direction, and never more than {@code maxDelay}. Jitter spreads the retries of records that
 * failed together (a downstream service that was down for a minute) so that they do not all come
 * back in the same millisecond.
 *
 * <p>An exception is retried unless it, or one of its causes, is an instance of a {@linkplain
 * Builder#notRetryable non-retryable} class. If {@linkplain Builder#retryable retryable} classes
 * are given, only an exception that is, or is caused by, one of them is retried. A non-retryable
 * match wins over a retryable one, so {@code retryable(IOException.class)} with {@code
 * notRetryable(FileNotFoundException.class)} sends a missing file straight to the dead-letter
 * topic.
 */
public final class RetryPolicy {

  /** Longest cause chain looked at; guards against a cause cycle built by hand. */
  private static final int MAX_CAUSES = 32;

  private final int maxAttempts;
  private final Duration initialDelay;
  private final double multiplier;
  private final Duration maxDelay;
  private final double jitter;
  private final List<Class<? extends Throwable>> retryable;
  private final List<Class<? extends Throwable>> notRetryable;
  private final RandomGenerator random;

  private RetryPolicy(Builder builder) {
    this.maxAttempts = builder.maxAttempts;
    this.initialDelay = builder.initialDelay;
    this.multiplier = builder.multiplier;
    this.maxDelay = builder.maxDelay;
    this.jitter = builder.jitter;
    this.retryable = List.copyOf(builder.retryable);
    this.notRetryable = List.copyOf(builder.notRetryable);
    this.random = builder.random;
  }

  /**
   * Starts building a policy. The defaults: 3 attempts, 1 s initial delay, multiplier 2, at most 5
   * minutes, jitter 0.2, every exception retried.
   *
   * @return a builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * How many times a record is delivered at most, the first delivery included.
   *
   * @return at least 1; 1 means a failed record goes straight to the dead-letter topic
   */
  public int maxAttempts() {
    return maxAttempts;
  }

  /**
   * The exponential delay after a failed attempt, before jitter: {@code initialDelay *
   * multiplier^(failedAttempt-1)}, at most {@code maxDelay}.
   *
   * @param failedAttempt the 1-based number of the attempt that failed
   * @return the delay before the next attempt, without jitter
   * @throws IllegalArgumentException if {@code failedAttempt} is less than 1
   */
  public Duration baseDelay(int failedAttempt) {
    if (failedAttempt < 1) {
      throw new IllegalArgumentException("failedAttempt must be at least 1, got " + failedAttempt);
    }
    double millis = initialDelay.toMillis() * Math.pow(multiplier, failedAttempt - 1);
    // A double that overflows a long becomes infinity or a huge value: the cap handles both.
    return Duration.ofMillis((long) Math.min(millis, maxDelay.toMillis()));
  }

  /**
   * The delay after a failed attempt: the {@linkplain #baseDelay base delay} moved by a jitter
   * drawn uniformly from {@code [-jitter, +jitter)} of it, at most {@code maxDelay}.
   *
   * @param failedAttempt the 1-based number of the attempt that failed
   * @return the delay before the next attempt, to the millisecond
   * @throws IllegalArgumentException if {@code failedAttempt} is less than 1
   */
  public Duration delay(int failedAttempt) {
    long base = baseDelay(failedAttempt).toMillis();
    if (jitter == 0) {
      return Duration.ofMillis(base);
    }
    RandomGenerator source = random == null ? ThreadLocalRandom.current() : random;
    double factor = 1 + jitter * (2 * source.nextDouble() - 1);
    return Duration.ofMillis(Math.min(Math.round(base * factor), maxDelay.toMillis()));
  }

  /**
   * Whether an exception is worth another attempt, as the class documentation describes.
   *
   * @param exception what the attempt threw
   * @return false if the record should go straight to the dead-letter topic
   * @throws NullPointerException if {@code exception} is null
   */
  public boolean isRetryable(Throwable exception) {
    requireNonNull(exception, "exception cannot be null");
    boolean listed = retryable.isEmpty();
    Throwable cause = exception;
    for (int depth = 0; cause != null && depth < MAX_CAUSES; depth++, cause = cause.getCause()) {
      if (isInstance(cause, notRetryable)) {
        return false;
      }
      listed |= isInstance(cause, retryable);
    }
    return listed;
  }

  private static boolean isInstance(Throwable exception, List<Class<? extends Throwable>> types) {
    for (Class<? extends Throwable> type : types) {
      if (type.isInstance(exception)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The initial delay.
   *
   * @return the delay after the first failed attempt, before jitter
   */
  public Duration initialDelay() {
    return initialDelay;
  }

  /**
   * The multiplier.
   *
   * @return by how much each delay grows over the one before, at least 1
   */
  public double multiplier() {
    return multiplier;
  }

  /**
   * The maximum delay.
   *
   * @return the longest delay, jitter included
   */
  public Duration maxDelay() {
    return maxDelay;
  }

  /**
   * The jitter.
   *
   * @return the fraction of the base delay by which a delay may move either way, 0..1
   */
  public double jitter() {
    return jitter;
  }

  @Override
  public String toString() {
    return "RetryPolicy{maxAttempts="
        + maxAttempts
        + ", initialDelay="
        + initialDelay
        + ", multiplier="
        + multiplier
        + ", maxDelay="
        + maxDelay
        + ", jitter="
        + jitter
        + ", retryable="
        + retryable
        + ", notRetryable="
        + notRetryable
        + "}";
  }

  /** Builds a {@link RetryPolicy}; every option has a default. Not thread-safe. */
  public static final class Builder {

    private int maxAttempts = 3;
    private Duration initialDelay = Duration.ofSeconds(1);
    private double multiplier = 2.0;
    private Duration maxDelay = Duration.ofMinutes(5);
    private double jitter = 0.2;
    private final List<Class<? extends Throwable>> retryable = new ArrayList<>();
    private final List<Class<? extends Throwable>> notRetryable = new ArrayList<>();
    private RandomGenerator random;

    private Builder() {}

    /**
     * How many times a record is delivered at most, the first delivery included (default 3).
     *
     * @param maxAttempts at least 1
     * @return this builder
     * @throws IllegalArgumentException if {@code maxAttempts} is less than 1
     */
    public Builder maxAttempts(int maxAttempts) {
      if (maxAttempts < 1) {
        throw new IllegalArgumentException("maxAttempts must be at least 1, got " + maxAttempts);
      }
      this.maxAttempts = maxAttempts;
      return this;
    }

    /**
     * The delay after the first failed attempt, before jitter (default 1 s).
     *
     * @param initialDelay a non-negative delay, to the millisecond
     * @return this builder
     * @throws NullPointerException if {@code initialDelay} is null
     * @throws IllegalArgumentException if {@code initialDelay} is negative or too large
     */
    public Builder initialDelay(Duration initialDelay) {
      this.initialDelay = WireTimes.requireMillis(initialDelay, "initialDelay");
      return this;
    }

    /**
     * By how much each delay grows over the one before (default 2; 1 means a fixed delay).
     *
     * @param multiplier at least 1
     * @return this builder
     * @throws IllegalArgumentException if {@code multiplier} is less than 1 or not finite
     */
    public Builder multiplier(double multiplier) {
      if (!(multiplier >= 1) || Double.isInfinite(multiplier)) {
        throw new IllegalArgumentException(
            "multiplier must be a finite number of at least 1, got " + multiplier);
      }
      this.multiplier = multiplier;
      return this;
    }

    /**
     * The longest delay, jitter included (default 5 minutes).
     *
     * @param maxDelay a non-negative delay, to the millisecond
     * @return this builder
     * @throws NullPointerException if {@code maxDelay} is null
     * @throws IllegalArgumentException if {@code maxDelay} is negative or too large
     */
    public Builder maxDelay(Duration maxDelay) {
      this.maxDelay = WireTimes.requireMillis(maxDelay, "maxDelay");
      return this;
    }

    /**
     * The fraction of the base delay by which a delay may move either way (default 0.2: a 10 s
     * delay becomes 8 to 12 s). 0 turns jitter off.
     *
     * @param jitter 0..1
     * @return this builder
     * @throws IllegalArgumentException if {@code jitter} is outside 0..1
     */
    public Builder jitter(double jitter) {
      if (!(jitter >= 0 && jitter <= 1)) {
        throw new IllegalArgumentException("jitter must be within 0..1, got " + jitter);
      }
      this.jitter = jitter;
      return this;
    }

    /**
     * Retries only exceptions that are, or are caused by, one of these classes (and those of
     * earlier calls). Without this every exception is retried, except the non-retryable ones.
     *
     * @param types exception classes
     * @return this builder
     * @throws NullPointerException if {@code types} or one of them is null
     */
    @SafeVarargs
    public final Builder retryable(Class<? extends Throwable>... types) {
      for (Class<? extends Throwable> type : types) {
        retryable.add(requireNonNull(type, "an exception class cannot be null"));
      }
      return this;
    }

    /**
     * Sends exceptions that are, or are caused by, one of these classes (and those of earlier
     * calls) straight to the dead-letter topic: a record that cannot be parsed fails the same way
     * every time.
     *
     * @param types exception classes
     * @return this builder
     * @throws NullPointerException if {@code types} or one of them is null
     */
    @SafeVarargs
    public final Builder notRetryable(Class<? extends Throwable>... types) {
      for (Class<? extends Throwable> type : types) {
        notRetryable.add(requireNonNull(type, "an exception class cannot be null"));
      }
      return this;
    }

    /**
     * The source of the jitter (default {@link ThreadLocalRandom}); a seeded one makes the delays
     * repeatable in tests. The policy calls it from every thread that asks for a delay, so it must
     * be thread-safe if several do.
     *
     * @param random the random source
     * @return this builder
     * @throws NullPointerException if {@code random} is null
     */
    public Builder random(RandomGenerator random) {
      this.random = requireNonNull(random, "random cannot be null");
      return this;
    }

    /**
     * Builds the policy.
     *
     * @return the policy
     * @throws IllegalStateException if the initial delay is longer than the maximum delay
     */
    public RetryPolicy build() {
      if (initialDelay.compareTo(maxDelay) > 0) {
        throw new IllegalStateException(
            "initialDelay ("
                + initialDelay
                + ") must not be longer than maxDelay ("
                + maxDelay
                + ")");
      }
      return new RetryPolicy(this);
    }
  }
}

package dev.kdelay.topology;

import java.util.Objects;

/**
 * The fire-rate limits in effect: read on the stream threads at every fire to a limited topic, and
 * replaced by whoever follows them (the service's limits topic; a test).
 *
 * <p>A final class rather than a {@code Supplier}: the fire path calls {@link #get} with its
 * compiled code inlined into the punctuation's, and HotSpot compiles an interface call for the one
 * class it saw there. The start-up warm-up built the topology with fixed limits (a lambda), the
 * service with its limits topic's feed: the instance's first real fire failed that class check and
 * threw the whole compiled fire path away, so that a fresh instance's first burst ran interpreted
 * while it was compiled again (JFR: a {@code class_check} deoptimization in {@code FireSlots.take}
 * at the burst's first fire). Here there is one class whoever builds the topology.
 */
public final class FireRateLimitsInEffect {

  private volatile FireRateLimits current;

  /** Limits in effect from the start: {@code delay.fire.rate.limits}, until {@link #set}. */
  public FireRateLimitsInEffect(FireRateLimits initial) {
    this.current = Objects.requireNonNull(initial, "initial cannot be null");
  }

  /** The limits in effect now; answered from memory. */
  public FireRateLimits get() {
    return current;
  }

  /** Puts {@code next} in effect for the fires that follow. */
  public void set(FireRateLimits next) {
    this.current = Objects.requireNonNull(next, "next cannot be null");
  }

  @Override
  public String toString() {
    return current.toString();
  }
}

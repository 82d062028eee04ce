package dev.kdelay.schemas.generators;

import java.math.BigInteger;
import java.util.Optional;

/**
 * A header text and the number it denotes for a reader who follows the contract, if any: an instant
 * or a duration in milliseconds, a partition, a fire count. The number may lie outside what a
 * {@code long} holds (year 1,000,000,000, a 20-digit count), which the contract then refuses.
 *
 * @param text the header text
 * @param denotes the number it stands for, or empty if it is not a number of its kind at all
 */
public record Denoted(String text, Optional<BigInteger> denotes) {

  /** A text that denotes {@code value}. */
  static Denoted of(String text, long value) {
    return new Denoted(text, Optional.of(BigInteger.valueOf(value)));
  }

  /** A text that denotes {@code value}, which may not fit a long. */
  static Denoted of(String text, BigInteger value) {
    return new Denoted(text, Optional.of(value));
  }

  /** A text that is not a number of its kind. */
  static Denoted garbage(String text) {
    return new Denoted(text, Optional.empty());
  }

  /** Whether the text denotes a number that a long holds. */
  public boolean fitsLong() {
    return denotes.isPresent() && denotes.get().bitLength() < Long.SIZE;
  }

  /** The number as a long; only when {@link #fitsLong}. */
  public long value() {
    return denotes.orElseThrow().longValueExact();
  }

  @Override
  public String toString() {
    return "'" + text + "'" + denotes.map(n -> "=" + n).orElse("(garbage)");
  }
}

package dev.kdelay.schemas;

import java.util.Optional;

/** What a recurring schedule does with occurrences missed while nothing could fire. */
public enum Misfire {
  /** Fire one catch-up occurrence, then resume the normal cadence. */
  FIRE_ONCE("fire-once"),
  /** Fire every missed occurrence in order, within the catch-up window. */
  FIRE_ALL("fire-all"),
  /** Fire none of the missed occurrences; continue with the next future one. */
  SKIP("skip");

  private final String wireName;

  Misfire(String wireName) {
    this.wireName = wireName;
  }

  /** The header value that names this policy. */
  public String wireName() {
    return wireName;
  }

  /**
   * Looks a policy up by its header value.
   *
   * @param value the header value, case-sensitive
   * @return the policy, or empty if the value names none
   */
  public static Optional<Misfire> fromWireName(String value) {
    for (Misfire misfire : values()) {
      if (misfire.wireName.equals(value)) {
        return Optional.of(misfire);
      }
    }
    return Optional.empty();
  }
}

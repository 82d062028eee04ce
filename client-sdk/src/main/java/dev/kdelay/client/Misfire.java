package dev.kdelay.client;

/**
 * What a recurring schedule does with occurrences it missed while nothing could fire (every
 * instance down, say), written as the {@code delay-misfire} request header.
 */
public enum Misfire {
  /** Fire once for all the missed occurrences, then go on with the next one. The default. */
  FIRE_ONCE("fire-once"),
  /** Fire every missed occurrence, oldest first. */
  FIRE_ALL("fire-all"),
  /** Fire none of the missed occurrences; go on with the next one. */
  SKIP("skip");

  private final String wireName;

  Misfire(String wireName) {
    this.wireName = wireName;
  }

  /**
   * The header value that names this policy.
   *
   * @return {@code fire-once}, {@code fire-all} or {@code skip}
   */
  public String wireName() {
    return wireName;
  }
}

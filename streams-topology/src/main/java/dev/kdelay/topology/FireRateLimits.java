package dev.kdelay.topology;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.apache.kafka.common.config.ConfigException;

/**
 * How fast kdelay may write to each limited target topic, and for each limited tenant: {@code
 * delay.fire.rate.limits}, a comma separated list of {@code topic=rate} or {@code
 * topic=rate/burst}, the rate in fires per second (a decimal above 0), the burst the most fires
 * that may go out at once after a quiet spell (a whole number, by default the rate rounded up). A
 * topic not listed is not limited. {@code tenant:<name>} in place of a topic limits all of a
 * tenant's fires, to whatever topic ({@link #tenant}); a tenant's fire then waits for both limits.
 *
 * <pre>
 *   delay.fire.rate.limits=orders.reminders=1000,billing.retries=2.5/10,tenant:billing=50/100
 * </pre>
 *
 * <p>Each partition of the request topic fires its share of the limit, rate and burst divided by
 * the partition count (a burst of at least one each), so that instances need not talk to each other
 * to keep a topic within its limit; ids spread unevenly over the partitions use less than the whole
 * of it.
 *
 * @param byTopic each limited topic's limit
 */
public record FireRateLimits(Map<String, Limit> byTopic) {

  /** No topic limited. */
  public static final FireRateLimits NONE = new FireRateLimits(Map.of());

  /** What names a tenant's limit: {@code tenant:<name>}, which no topic name can be. */
  public static final String TENANT_PREFIX = "tenant:";

  /** What a limit may apply to: a topic's name, or {@code tenant:} and a tenant's. */
  private static final String SUBJECT = "[A-Za-z0-9._-]{1,249}|tenant:[a-z0-9]{1,32}";

  /**
   * One topic's limit.
   *
   * @param perSecond fires per second; from {@value #MIN_PER_SECOND} (one in about 12 days) to
   *     {@value #MAX_PER_SECOND}
   * @param burst the most fires at once; at least 1
   */
  public record Limit(double perSecond, int burst) {

    /** The lowest rate a limit may have: one fire in about 12 days. */
    public static final double MIN_PER_SECOND = 1e-6;

    /** The highest rate a limit may have. */
    public static final double MAX_PER_SECOND = 1e9;

    /** Creates a limit. */
    public Limit {
      if (!(perSecond >= MIN_PER_SECOND && perSecond <= MAX_PER_SECOND)) {
        throw new IllegalArgumentException(
            "a rate must be above 0 fires a second, from "
                + MIN_PER_SECOND
                + " to "
                + MAX_PER_SECOND
                + ": "
                + perSecond);
      }
      if (burst < 1) {
        throw new IllegalArgumentException("a burst must be at least 1: " + burst);
      }
    }

    /**
     * The share of this limit that one of {@code partitions} partitions fires.
     *
     * @param partitions the request topic's partition count
     * @return the rate divided by it, and the burst likewise, at least 1
     */
    public Limit share(int partitions) {
      return new Limit(
          Math.max(MIN_PER_SECOND, perSecond / partitions), Math.max(1, burst / partitions));
    }

    /**
     * Reads {@code rate} or {@code rate/burst}, as an entry of {@code delay.fire.rate.limits} or a
     * record of the limits topic gives it.
     *
     * @param spec the text
     * @return the limit; the burst by default the rate rounded up
     * @throws IllegalArgumentException saying what is wrong
     */
    public static Limit parse(String spec) {
      String text = spec.strip();
      int slash = text.indexOf('/');
      try {
        double perSecond = Double.parseDouble(slash < 0 ? text : text.substring(0, slash));
        int burst =
            slash < 0
                ? (int) Math.min(Integer.MAX_VALUE, Math.ceil(perSecond))
                : Integer.parseInt(text.substring(slash + 1).strip());
        return new Limit(perSecond, burst);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("not a rate, or rate/burst: '" + text + "'", e);
      }
    }

    /** The limit as {@link #parse} reads it: {@code rate/burst}. */
    @Override
    public String toString() {
      String rate =
          perSecond == Math.rint(perSecond) && perSecond < 1e15
              ? Long.toString((long) perSecond)
              : Double.toString(perSecond);
      return rate + "/" + burst;
    }
  }

  /** Creates the limits. */
  public FireRateLimits {
    byTopic = Map.copyOf(Objects.requireNonNull(byTopic, "byTopic cannot be null"));
  }

  /**
   * The limit of a topic, or of a tenant ({@link #tenant}), if it has one.
   *
   * @param topic a target topic, or {@code tenant:<name>}
   * @return its limit, or empty if it is not limited
   */
  public Optional<Limit> of(String topic) {
    return Optional.ofNullable(byTopic.get(topic));
  }

  /** What names a tenant's limit, among the topics': {@code tenant:<name>}. */
  public static String tenant(String name) {
    return TENANT_PREFIX + name;
  }

  /** Whether a limit's key names a topic or a tenant ({@code tenant:<name>}) it may apply to. */
  public static boolean isSubject(String key) {
    return key.matches(SUBJECT);
  }

  /** Whether no topic is limited. */
  public boolean isEmpty() {
    return byTopic.isEmpty();
  }

  /**
   * Reads {@code delay.fire.rate.limits}.
   *
   * @param value the setting; blank for no limits
   * @return the limits
   * @throws ConfigException naming the entry that cannot be read
   */
  public static FireRateLimits parse(String value) {
    Map<String, Limit> limits = new LinkedHashMap<>();
    if (value == null || value.isBlank()) {
      return NONE;
    }
    for (String item : value.split(",", -1)) {
      String entry = item.strip();
      int equals = entry.lastIndexOf('=');
      if (equals <= 0 || equals == entry.length() - 1) {
        throw refused(entry, "expected topic=rate or topic=rate/burst");
      }
      String topic = entry.substring(0, equals).strip();
      if (!isSubject(topic)) {
        throw refused(entry, "not a topic name, nor tenant: and a tenant's name");
      }
      Limit limit;
      try {
        limit = Limit.parse(entry.substring(equals + 1));
      } catch (IllegalArgumentException e) {
        throw refused(entry, e.getMessage());
      }
      if (limits.put(topic, limit) != null) {
        throw refused(entry, "the topic is limited twice");
      }
    }
    return new FireRateLimits(limits);
  }

  /**
   * These limits with others set over them, topic by topic: a limit replaces the topic's, an empty
   * one lifts it.
   *
   * @param overrides each overridden topic's limit, or empty for none
   * @return the limits in effect
   */
  public FireRateLimits overriddenBy(Map<String, Optional<Limit>> overrides) {
    if (overrides.isEmpty()) {
      return this;
    }
    Map<String, Limit> merged = new LinkedHashMap<>(byTopic);
    overrides.forEach(
        (topic, limit) -> {
          if (limit.isPresent()) {
            merged.put(topic, limit.get());
          } else {
            merged.remove(topic);
          }
        });
    return new FireRateLimits(merged);
  }

  private static ConfigException refused(String entry, String why) {
    return new ConfigException(
        DelayConfig.FIRE_RATE_LIMITS_CONFIG, entry, "cannot be read as a limit: " + why);
  }

  @Override
  public String toString() {
    return byTopic.toString();
  }
}

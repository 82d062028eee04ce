package dev.kdelay.schemas;

import java.time.ZoneId;
import java.util.Objects;

/**
 * A recurring schedule: a validated cron expression evaluated in a time zone, with bounds.
 *
 * @param expression the cron expression, as given
 * @param flavor its dialect
 * @param zone the time zone it is evaluated in
 * @param startAtMs first instant an occurrence may fall on, epoch ms, or {@link #NO_START}
 * @param endAtMs last instant an occurrence may fall on, epoch ms, or {@link #NO_END}
 * @param maxFires most occurrences to fire, or {@link #UNLIMITED}
 * @param misfire what to do with occurrences missed while nothing could fire
 */
public record CronSpec(
    String expression,
    CronFlavor flavor,
    ZoneId zone,
    long startAtMs,
    long endAtMs,
    long maxFires,
    Misfire misfire)
    implements Timing {

  /** {@link #startAtMs()} of a schedule without a start bound. */
  public static final long NO_START = Long.MIN_VALUE;

  /** {@link #endAtMs()} of a schedule without an end bound. */
  public static final long NO_END = Long.MAX_VALUE;

  /** {@link #maxFires()} of a schedule without a fire limit. */
  public static final long UNLIMITED = 0;

  /**
   * Creates a cron spec.
   *
   * @throws NullPointerException if expression, flavor, zone or misfire is null
   */
  public CronSpec {
    Objects.requireNonNull(expression, "expression cannot be null");
    Objects.requireNonNull(flavor, "flavor cannot be null");
    Objects.requireNonNull(zone, "zone cannot be null");
    Objects.requireNonNull(misfire, "misfire cannot be null");
  }
}

package dev.kdelay.schemas;

import java.time.DateTimeException;
import java.time.ZoneId;
import java.util.OptionalLong;

/**
 * The options of a cron schedule beside its expression, as text: their defaults, how they read, and
 * what is said when one is wrong. One place for the request headers ({@code delay-cron-type},
 * {@code delay-zone}, {@code delay-max-fires}, {@code delay-misfire}), the HTTP API's fields and
 * the client's defaults, so that all three mean the same by an absent or a bad option.
 *
 * <p>Each reader takes the option's name (the header or field it came from), to name it in the
 * error, and its text, {@code null} when the option is absent:
 *
 * <pre>{@code
 * CronFlavor flavor = CronOptions.flavor(DelayHeaders.CRON_TYPE, headerText);   // null: QUARTZ
 * ZoneId zone = CronOptions.zone("zone", json.get("zone"));                      // null: UTC
 * }</pre>
 */
public final class CronOptions {

  /** The cron dialect of a schedule that names none. */
  public static final CronFlavor DEFAULT_FLAVOR = CronFlavor.QUARTZ;

  /** The time zone of a schedule that names none. */
  public static final ZoneId DEFAULT_ZONE = ZoneId.of("UTC");

  /** The misfire policy of a schedule that names none. */
  public static final Misfire DEFAULT_MISFIRE = Misfire.FIRE_ONCE;

  private CronOptions() {}

  /**
   * Reads a cron dialect by its wire name.
   *
   * @param option the header or field the text came from
   * @param text {@code quartz}, {@code unix} or {@code spring}; null for the default
   * @return the dialect
   * @throws RejectionException {@link RejectionReason#BAD_CRON} if the text names none
   */
  public static CronFlavor flavor(String option, String text) {
    if (text == null) {
      return DEFAULT_FLAVOR;
    }
    return CronFlavor.fromWireName(text)
        .orElseThrow(
            () ->
                new RejectionException(
                    RejectionReason.BAD_CRON,
                    option + " is '" + text + "'; expected quartz, unix or spring"));
  }

  /**
   * Reads a time zone.
   *
   * @param option the header or field the text came from
   * @param text a zone id such as {@code Europe/Berlin}; null for the default
   * @return the zone
   * @throws RejectionException {@link RejectionReason#BAD_ZONE} if the text is no zone id
   */
  public static ZoneId zone(String option, String text) {
    if (text == null) {
      return DEFAULT_ZONE;
    }
    try {
      return ZoneId.of(text);
    } catch (DateTimeException e) {
      throw new RejectionException(
          RejectionReason.BAD_ZONE,
          option + " is '" + text + "'; expected an IANA time zone such as Europe/Berlin");
    }
  }

  /**
   * Reads the most occurrences to fire.
   *
   * @param option the header or field the text came from
   * @param text a positive decimal ({@link WireText#nonNegativeDecimal}); null for no limit
   * @return the limit, or {@link CronSpec#UNLIMITED}
   * @throws RejectionException {@link RejectionReason#BAD_HEADER} if the text is no positive
   *     decimal
   */
  public static long maxFires(String option, String text) {
    if (text == null) {
      return CronSpec.UNLIMITED;
    }
    OptionalLong max = WireText.nonNegativeDecimal(text);
    if (max.isEmpty() || max.getAsLong() == 0) {
      throw new RejectionException(
          RejectionReason.BAD_HEADER, option + " is '" + text + "'; expected a positive integer");
    }
    return max.getAsLong();
  }

  /**
   * Reads a misfire policy by its wire name.
   *
   * @param option the header or field the text came from
   * @param text {@code fire-once}, {@code fire-all} or {@code skip}; null for the default
   * @return the policy
   * @throws RejectionException {@link RejectionReason#BAD_HEADER} if the text names none
   */
  public static Misfire misfire(String option, String text) {
    if (text == null) {
      return DEFAULT_MISFIRE;
    }
    return Misfire.fromWireName(text)
        .orElseThrow(
            () ->
                new RejectionException(
                    RejectionReason.BAD_HEADER,
                    option + " is '" + text + "'; expected fire-once, fire-all or skip"));
  }

  /**
   * A schedule with every option but dialect and zone at its default: no bounds, no limit on
   * occurrences, {@link #DEFAULT_MISFIRE}.
   *
   * @param expression the cron expression
   * @param flavor its dialect
   * @param zone the zone it is evaluated in
   * @return the spec
   * @throws NullPointerException if an argument is null
   */
  public static CronSpec unbounded(String expression, CronFlavor flavor, ZoneId zone) {
    return new CronSpec(
        expression,
        flavor,
        zone,
        CronSpec.NO_START,
        CronSpec.NO_END,
        CronSpec.UNLIMITED,
        DEFAULT_MISFIRE);
  }
}

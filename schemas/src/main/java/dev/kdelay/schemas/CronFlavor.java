package dev.kdelay.schemas;

import java.util.Optional;

/** The cron dialect of {@link DelayHeaders#CRON_TYPE}. */
public enum CronFlavor {
  /** Quartz: seconds, minutes, hours, day of month, month, day of week, optional year. */
  QUARTZ("quartz"),
  /** Unix crontab: minutes, hours, day of month, month, day of week. */
  UNIX("unix"),
  /** Spring: seconds, minutes, hours, day of month, month, day of week. */
  SPRING("spring");

  private final String wireName;

  CronFlavor(String wireName) {
    this.wireName = wireName;
  }

  /** The header value that names this flavour. */
  public String wireName() {
    return wireName;
  }

  /**
   * Looks a flavour up by its header value.
   *
   * @param value the header value, case-sensitive
   * @return the flavour, or empty if the value names none
   */
  public static Optional<CronFlavor> fromWireName(String value) {
    for (CronFlavor flavor : values()) {
      if (flavor.wireName.equals(value)) {
        return Optional.of(flavor);
      }
    }
    return Optional.empty();
  }
}

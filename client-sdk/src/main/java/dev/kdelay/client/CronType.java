package dev.kdelay.client;

/** The flavour of a cron expression, written as the {@code delay-cron-type} request header. */
public enum CronType {
  /** Quartz: six or seven fields, starting with seconds. The default. */
  QUARTZ("quartz"),
  /** Classic Unix cron: five fields, starting with minutes. */
  UNIX("unix"),
  /** Spring's {@code @Scheduled}: six fields, starting with seconds. */
  SPRING("spring");

  private final String wireName;

  CronType(String wireName) {
    this.wireName = wireName;
  }

  /**
   * The header value that names this cron type.
   *
   * @return {@code quartz}, {@code unix} or {@code spring}
   */
  public String wireName() {
    return wireName;
  }
}

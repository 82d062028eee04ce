package dev.kdelay.schemas.generators;

import dev.kdelay.schemas.CronFlavor;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;

/**
 * Generators of the texts the other request headers carry: actions, topics, keys, partitions, cron
 * expressions and their options, fire counts, misfire policies, ids and carried headers. Each text
 * comes with what it denotes, or says that it is garbage; which code a request with it earns is the
 * {@link ParseOracle}'s to say.
 */
public final class HeaderTexts {

  private HeaderTexts() {}

  /** Bytes that are not UTF-8: a lone continuation byte, an overlong form, a cut sequence. */
  public static final List<byte[]> INVALID_UTF8 =
      List.of(
          new byte[] {(byte) 0x80},
          new byte[] {'a', (byte) 0xC0, (byte) 0xAF},
          new byte[] {(byte) 0xE2, (byte) 0x82},
          new byte[] {(byte) 0xED, (byte) 0xA0, (byte) 0x80}, // an encoded surrogate
          new byte[] {(byte) 0xFF, (byte) 0xFE});

  /** Partition texts: in range, out of range, and garbage. */
  public static Denoted partition(Choices c) {
    if (c.weighted(8, 2) == 0) {
      int p = c.intBetween(0, 5);
      return Denoted.of(Integer.toString(p), p);
    }
    return c.pick(
        Denoted.of("00", 0),
        Denoted.of("-1", -1),
        Denoted.of("2147483647", Integer.MAX_VALUE),
        Denoted.of("2147483648", 2_147_483_648L),
        Denoted.of("99999999999999999999", new BigInteger("99999999999999999999")),
        Denoted.garbage(""),
        Denoted.garbage(" 1"),
        Denoted.garbage("1.0"),
        Denoted.garbage("one"),
        Denoted.garbage("+1"));
  }

  /** {@code delay-max-fires} texts. */
  public static Denoted maxFires(Choices c) {
    if (c.weighted(8, 2) == 0) {
      int n = c.intBetween(1, 5);
      return Denoted.of(Integer.toString(n), n);
    }
    return c.pick(
        Denoted.of("0", 0),
        Denoted.of("-1", -1),
        Denoted.of("0003", 3),
        Denoted.of("999999999999999999", 999_999_999_999_999_999L),
        Denoted.of("9223372036854775807", Long.MAX_VALUE),
        Denoted.of("99999999999999999999", new BigInteger("99999999999999999999")),
        Denoted.garbage(""),
        Denoted.garbage("three"),
        Denoted.garbage("1.5"));
  }

  /**
   * A text that names one of a few values, such as a misfire policy.
   *
   * @param text the header text
   * @param denotes the wire name it is, or null for garbage
   */
  public record Named(String text, String denotes) {
    @Override
    public String toString() {
      return "'" + text + "'";
    }
  }

  /** {@code delay-misfire} texts. */
  public static Named misfire(Choices c) {
    return c.pick(
        new Named("fire-once", "fire-once"),
        new Named("fire-all", "fire-all"),
        new Named("skip", "skip"),
        new Named("FIRE-ONCE", null),
        new Named("fire_all", null),
        new Named("", null),
        new Named("never", null));
  }

  /** {@code delay-misfire} texts that name a policy. */
  public static Named validMisfire(Choices c) {
    return c.pick(
        new Named("fire-once", "fire-once"),
        new Named("fire-all", "fire-all"),
        new Named("skip", "skip"));
  }

  /** {@code delay-cron-type} texts. */
  public static Named cronType(Choices c) {
    return c.pick(
        new Named("quartz", "quartz"),
        new Named("unix", "unix"),
        new Named("spring", "spring"),
        new Named("Quartz", null),
        new Named("cron", null),
        new Named("", null));
  }

  /** {@code delay-zone} texts; whether one names a zone is java.time's {@code ZoneId.of} to say. */
  public static String zone(Choices c) {
    return switch (c.weighted(6, 3, 1)) {
      case 0 -> "UTC";
      case 1 ->
          c.pick(
              "Europe/Berlin",
              "America/New_York",
              "Asia/Kolkata",
              "Asia/Kathmandu",
              "Australia/Lord_Howe",
              "Pacific/Chatham",
              "Pacific/Kiritimati",
              "Etc/GMT+12",
              "Z",
              "+05:30",
              "-18:00",
              "+18:00",
              "UTC+3",
              "GMT-12:00");
      default ->
          c.pick(
              "Mars/Phobos",
              "",
              "+19:00",
              "utc",
              "Europe/Berlin ",
              "UTC+25",
              "../../etc/passwd",
              "America/New York");
    };
  }

  /**
   * A cron expression in a flavour, and whether its occurrences are simple enough for a model to
   * compute: every {@code periodMs}, counted from the epoch (in any zone for a period of seconds,
   * since every zone's offset is whole minutes today; in UTC only for minutes).
   *
   * @param expression the expression
   * @param flavor the flavour it is written in
   * @param periodMs its period when it has one a model computes, else 0
   * @param valid whether it is valid in its flavour; null when the model does not tell (odd
   *     expressions: cron-utils decides)
   */
  public record CronText(String expression, CronFlavor flavor, long periodMs, Boolean valid) {
    @Override
    public String toString() {
      return "'" + expression + "'/" + flavor.wireName();
    }
  }

  /** Cron expressions: periodic ones a model computes, edge cases, and garbage. */
  public static CronText cron(Choices c) {
    return switch (c.weighted(6, 1, 2, 1)) {
      case 0 -> periodic(c);
      case 1 -> {
        int k = c.pick(1, 2, 5, 15);
        yield new CronText("*/" + k + " * * * *", CronFlavor.UNIX, k * 60_000L, true);
      }
      case 2 ->
          c.pick(
              new CronText("0 0 0 30 2 ?", CronFlavor.QUARTZ, 0, null), // February 30th: never
              new CronText("0 0 0 31 4 ?", CronFlavor.QUARTZ, 0, null), // April 31st: never
              new CronText("0 0 0 29 2 ?", CronFlavor.QUARTZ, 0, true), // leap days only
              new CronText("0 30 2 * * ?", CronFlavor.QUARTZ, 0, true), // in a DST gap somewhere
              new CronText("0 0 0 L * ?", CronFlavor.QUARTZ, 0, true),
              new CronText("0 0 0 LW * ?", CronFlavor.QUARTZ, 0, null),
              new CronText("0 0 0 ? * MON#5", CronFlavor.QUARTZ, 0, null),
              new CronText("0 0 0 ? * 6L", CronFlavor.QUARTZ, 0, null),
              new CronText("0 0 0 1 1 ? 1969", CronFlavor.QUARTZ, 0, null), // only in the past
              new CronText("0 0 0 1 1 ? 2099", CronFlavor.QUARTZ, 0, null),
              new CronText("0 0 0 1 1 ? 2200", CronFlavor.QUARTZ, 0, null), // beyond the horizon
              new CronText("* * * * * ? 2026-2030", CronFlavor.QUARTZ, 0, null),
              new CronText("59 59 23 31 12 ? 9999", CronFlavor.QUARTZ, 0, null),
              new CronText("0 0 12 ? * MON-FRI", CronFlavor.QUARTZ, 0, true),
              new CronText("0 0 9-17/2 * * *", CronFlavor.SPRING, 0, true),
              new CronText("@daily", CronFlavor.UNIX, 0, null),
              new CronText("0 0 * * 7", CronFlavor.UNIX, 0, null),
              new CronText("0 0 1,15 * *", CronFlavor.UNIX, 0, true));
      default ->
          new CronText(
              c.pick(
                  "",
                  " ",
                  "* * * * *",
                  "60 * * * * ?",
                  "* * * * * * * *",
                  "0 0 0 32 1 ?",
                  "1#",
                  "*/0 * * * * ?",
                  "garbage",
                  "0 0 0 ? * MON#9",
                  "\u0000",
                  "* * * * * ?".repeat(200)),
              c.pick(CronFlavor.values()),
              0,
              null);
    };
  }

  /** A cron expression firing every few seconds, in quartz or spring. */
  public static CronText periodic(Choices c) {
    int k = c.pick(1, 2, 3, 5, 10, 15, 20, 30);
    CronFlavor flavor = c.pick(CronFlavor.QUARTZ, CronFlavor.SPRING);
    return new CronText(
        c.pick("*/", "0/") + k + " * * * * " + (flavor == CronFlavor.QUARTZ ? "?" : "*"),
        flavor,
        k * 1_000L,
        true);
  }

  /** Schedule ids: text of every kind, at and beyond the length limit, and bytes that are not. */
  public static byte[] oddId(Choices c, int maxIdBytes) {
    if (c.weighted(3, 1) == 0) {
      return utf8(
          c.pick(
              "order-42",
              "\u00fc",
              "\u65e5\u672c\u8a9e",
              "\ud83d\ude00",
              "with\u0000nul",
              "  spaced  ",
              "new\nline",
              "\u202Eright-to-left",
              "a".repeat(maxIdBytes),
              "\u00e9".repeat(maxIdBytes / 2)));
    }
    return switch (c.below(3)) {
      case 0 -> new byte[0];
      case 1 -> utf8("a".repeat(maxIdBytes + 1));
      default -> c.pick(INVALID_UTF8);
    };
  }

  /**
   * Headers a request may carry besides its own: ordinary ones, names kdelay writes itself (which
   * it must drop), empty names and null or binary values.
   */
  public static List<Header> carried(Choices c) {
    return c.list(
        4,
        25,
        choices -> {
          String name =
              choices.chance(60)
                  ? choices.pick(
                      "traceparent",
                      "content-type",
                      "delay-foo",
                      "delay-id",
                      "delay-idempotency-key",
                      "delay-due-at",
                      "delay-error",
                      "",
                      "Delay-Action")
                  : choices.text(12);
          byte[] value =
              switch (choices.below(3)) {
                case 0 -> utf8(choices.text(30));
                case 1 -> choices.bytes(20);
                default -> null;
              };
          return new RecordHeader(name, value);
        });
  }

  static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}

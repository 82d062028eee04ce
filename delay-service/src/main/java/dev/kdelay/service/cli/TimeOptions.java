package dev.kdelay.service.cli;

import dev.kdelay.client.CronSchedule;
import dev.kdelay.client.DelayClient;
import dev.kdelay.client.DelayedMessage;
import dev.kdelay.schemas.CronExpressions;
import dev.kdelay.schemas.CronFlavor;
import dev.kdelay.schemas.CronOptions;
import dev.kdelay.schemas.RejectionException;
import dev.kdelay.service.input.TimeArguments;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * When a schedule fires, as {@code schedule} and {@code reschedule} take it: exactly one of {@code
 * --after DURATION}, {@code --at INSTANT} and {@code --cron EXPR}, the last with its options.
 *
 * @param after the delay, counted from the request's timestamp, if given
 * @param at the due time, if given
 * @param cron the recurring schedule, if given
 */
public record TimeOptions(
    Optional<Duration> after, Optional<Instant> at, Optional<CronSchedule> cron) {

  private static final List<String> CRON_OPTIONS =
      List.of("--cron-type", "--zone", "--start-at", "--end-at", "--max-fires", "--misfire");

  /** The options this reads. */
  static final Set<String> OPTIONS = options();

  /**
   * Reads the time options.
   *
   * @throws UsageException if one is malformed, or not exactly one of the three is given
   */
  static TimeOptions parse(CommandLine line) {
    Optional<Duration> after =
        line.option("--after").map(text -> argument("--after", () -> TimeArguments.duration(text)));
    Optional<Instant> at =
        line.option("--at").map(text -> argument("--at", () -> TimeArguments.instant(text)));
    Optional<CronSchedule> cron = line.option("--cron").map(text -> cron(text, line));
    int times = (after.isPresent() ? 1 : 0) + (at.isPresent() ? 1 : 0) + (cron.isPresent() ? 1 : 0);
    if (times != 1) {
      throw new UsageException(
          "give exactly one of --after DURATION, --at INSTANT and --cron EXPR");
    }
    if (cron.isEmpty() && CRON_OPTIONS.stream().anyMatch(o -> line.option(o).isPresent())) {
      throw new UsageException(
          "--cron-type, --zone, --start-at, --end-at, --max-fires and --misfire need --cron");
    }
    return new TimeOptions(after, at, cron);
  }

  /** Sets the time of a schedule request. */
  void applyTo(DelayedMessage.Builder builder) {
    after.ifPresent(builder::after);
    at.ifPresent(builder::fireAt);
    cron.ifPresent(builder::cron);
  }

  /** Sends the reschedule of an id to this time. */
  CompletableFuture<RecordMetadata> reschedule(DelayClient client, String id) {
    if (after.isPresent()) {
      return client.rescheduleAfter(id, after.get());
    }
    if (at.isPresent()) {
      return client.rescheduleAt(id, at.get());
    }
    return client.rescheduleCron(id, cron.orElseThrow());
  }

  /** When the request written with this metadata fires, in words. */
  String when(RecordMetadata request) {
    if (cron.isPresent()) {
      return "cron '" + cron.get().expression() + "' in " + cron.get().zone();
    }
    // A relative delay counts from the request's timestamp, which the broker just told us.
    return "due " + at.orElseGet(() -> Instant.ofEpochMilli(request.timestamp()).plus(after.get()));
  }

  private static CronSchedule cron(String expression, CommandLine line) {
    CronSchedule cron = argument("--cron", () -> CronSchedule.of(expression));
    Optional<String> type = line.option("--cron-type");
    if (type.isPresent()) {
      cron = cron.type(cronOption(() -> CronOptions.flavor("--cron-type", type.get())));
    }
    Optional<String> zone = line.option("--zone");
    if (zone.isPresent()) {
      cron = cron.zone(cronOption(() -> CronOptions.zone("--zone", zone.get())));
    }
    for (String bound : List.of("--start-at", "--end-at")) {
      Optional<String> text = line.option(bound);
      if (text.isPresent()) {
        Instant instant = argument(bound, () -> TimeArguments.instant(text.get()));
        CronSchedule base = cron;
        cron =
            argument(
                bound,
                () -> bound.equals("--start-at") ? base.startAt(instant) : base.endAt(instant));
      }
    }
    Optional<String> maxFires = line.option("--max-fires");
    if (maxFires.isPresent()) {
      CronSchedule base = cron;
      cron = argument("--max-fires", () -> base.maxFires(Long.parseLong(maxFires.get())));
    }
    Optional<String> misfire = line.option("--misfire");
    if (misfire.isPresent()) {
      cron = cron.misfire(cronOption(() -> CronOptions.misfire("--misfire", misfire.get())));
    }
    // The same check kdelay makes, here rather than as a BAD_CRON dead letter after sending.
    CronFlavor flavor = cron.type();
    try {
      CronExpressions.parse(cron.expression(), flavor);
    } catch (IllegalArgumentException e) {
      throw new UsageException(
          "--cron: "
              + e.getMessage()
              + " (read as a "
              + flavor.wireName()
              + " expression; --cron-type quartz, unix or spring)");
    }
    return cron;
  }

  /** Reads a cron option; its message already names the option and the value. */
  private static <T> T cronOption(Supplier<T> read) {
    try {
      return read.get();
    } catch (RejectionException e) {
      throw new UsageException(e.getMessage());
    }
  }

  private static <T> T argument(String option, Supplier<T> parser) {
    try {
      return parser.get();
    } catch (IllegalArgumentException | DateTimeException e) {
      throw new UsageException(option + ": " + e.getMessage());
    }
  }

  private static Set<String> options() {
    Set<String> options = new HashSet<>(Set.of("--after", "--at", "--cron"));
    options.addAll(CRON_OPTIONS);
    return Set.copyOf(options);
  }
}

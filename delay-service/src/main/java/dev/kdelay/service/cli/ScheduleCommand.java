package dev.kdelay.service.cli;

import dev.kdelay.client.CronSchedule;
import dev.kdelay.client.DelayClient;
import dev.kdelay.client.DelayedMessage;
import dev.kdelay.schemas.CronFlavor;
import dev.kdelay.schemas.Misfire;
import dev.kdelay.service.TimeArguments;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * {@code schedule --id ID --target TOPIC (--after DURATION | --at INSTANT | --cron EXPR ...) [--key
 * KEY] VALUE}.
 *
 * @param id the schedule id
 * @param targetTopic where the value is delivered
 * @param after the delay, counted from the request's timestamp, if given
 * @param at the due time, if given
 * @param cron the recurring schedule, if given
 * @param targetKey the key of the fired record, if not the id
 * @param value the payload
 */
public record ScheduleCommand(
    String id,
    String targetTopic,
    Optional<Duration> after,
    Optional<Instant> at,
    Optional<CronSchedule> cron,
    Optional<String> targetKey,
    String value) {

  private static final List<String> CRON_OPTIONS =
      List.of("--cron-type", "--zone", "--start-at", "--end-at", "--max-fires", "--misfire");

  public static final Set<String> OPTIONS = options();

  /**
   * Reads the command's arguments.
   *
   * @throws UsageException if one is missing, malformed, or both or neither of {@code --after} and
   *     {@code --at} are given
   */
  public static ScheduleCommand parse(CommandLine line) {
    String id = line.required("--id");
    String target = line.required("--target");
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
    return new ScheduleCommand(
        id, target, after, at, cron, line.option("--key"), line.singlePositional("VALUE"));
  }

  private static CronSchedule cron(String expression, CommandLine line) {
    CronSchedule cron = argument("--cron", () -> CronSchedule.of(expression));
    Optional<String> type = line.option("--cron-type");
    if (type.isPresent()) {
      CronFlavor flavor =
          CronFlavor.fromWireName(type.get())
              .orElseThrow(
                  () -> new UsageException("--cron-type: expected quartz, unix or spring"));
      cron = cron.type(flavor);
    }
    Optional<String> zone = line.option("--zone");
    if (zone.isPresent()) {
      CronSchedule base = cron;
      cron = argument("--zone", () -> base.zone(ZoneId.of(zone.get())));
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
      Misfire policy =
          Misfire.fromWireName(misfire.get())
              .orElseThrow(
                  () -> new UsageException("--misfire: expected fire-once, fire-all or skip"));
      cron = cron.misfire(policy);
    }
    return cron;
  }

  /** The request to send. */
  DelayedMessage message() {
    DelayedMessage.Builder builder = DelayedMessage.builder(id, targetTopic).payload(value);
    after.ifPresent(builder::after);
    at.ifPresent(builder::fireAt);
    cron.ifPresent(builder::cron);
    targetKey.ifPresent(builder::targetKey);
    return builder.build();
  }

  /** Sends the request and prints where it went and when it is due. */
  public int run(ClientOptions options, PrintStream out) {
    try (DelayClient client =
        DelayClient.create(options.producerProperties(), options.requestsTopic())) {
      RecordMetadata request =
          ClientOptions.awaitAck(client.schedule(message()), "scheduling " + id);
      out.printf(
          "Scheduled %s for %s, %s (request %s-%d@%d)%n",
          id, targetTopic, when(request), request.topic(), request.partition(), request.offset());
    }
    return CommandLine.OK;
  }

  private String when(RecordMetadata request) {
    if (cron.isPresent()) {
      return "cron '" + cron.get().expression() + "' in " + cron.get().zone();
    }
    // A relative delay counts from the request's timestamp, which the broker just told us.
    return "due " + at.orElseGet(() -> Instant.ofEpochMilli(request.timestamp()).plus(after.get()));
  }

  private static <T> T argument(String option, Supplier<T> parser) {
    try {
      return parser.get();
    } catch (IllegalArgumentException | java.time.DateTimeException e) {
      throw new UsageException(option + ": " + e.getMessage());
    }
  }

  private static Set<String> options() {
    Set<String> options = new HashSet<>(ClientOptions.OPTIONS);
    options.addAll(Set.of("--id", "--target", "--after", "--at", "--cron", "--key"));
    options.addAll(CRON_OPTIONS);
    return Set.copyOf(options);
  }
}

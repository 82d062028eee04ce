package dev.kdelay.service;

import dev.kdelay.client.DelayClient;
import dev.kdelay.client.DelayedMessage;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * {@code schedule --id ID --target TOPIC (--after DURATION | --at INSTANT) [--key KEY] VALUE}.
 *
 * @param id the schedule id
 * @param targetTopic where the value is delivered
 * @param after the delay, counted from the request's timestamp, if given
 * @param at the due time, if given
 * @param targetKey the key of the fired record, if not the id
 * @param value the payload
 */
record ScheduleCommand(
    String id,
    String targetTopic,
    Optional<Duration> after,
    Optional<Instant> at,
    Optional<String> targetKey,
    String value) {

  static final Set<String> OPTIONS = options();

  /**
   * Reads the command's arguments.
   *
   * @throws UsageException if one is missing, malformed, or both or neither of {@code --after} and
   *     {@code --at} are given
   */
  static ScheduleCommand parse(CommandLine line) {
    String id = line.required("--id");
    String target = line.required("--target");
    Optional<Duration> after =
        line.option("--after").map(text -> argument("--after", () -> TimeArguments.duration(text)));
    Optional<Instant> at =
        line.option("--at").map(text -> argument("--at", () -> TimeArguments.instant(text)));
    if (after.isPresent() == at.isPresent()) {
      throw new UsageException("give exactly one of --after DURATION and --at INSTANT");
    }
    return new ScheduleCommand(
        id, target, after, at, line.option("--key"), line.singlePositional("VALUE"));
  }

  /** The request to send. */
  DelayedMessage message() {
    DelayedMessage.Builder builder = DelayedMessage.builder(id, targetTopic).payload(value);
    after.ifPresent(builder::after);
    at.ifPresent(builder::fireAt);
    targetKey.ifPresent(builder::targetKey);
    return builder.build();
  }

  /** Sends the request and prints where it went and when it is due. */
  int run(ClientOptions options, PrintStream out) {
    try (DelayClient client =
        DelayClient.create(options.producerProperties(), options.requestsTopic())) {
      RecordMetadata request =
          ClientOptions.awaitAck(client.schedule(message()), "scheduling " + id);
      // A relative delay counts from the request's timestamp, which the broker just told us.
      Instant due = at.orElseGet(() -> Instant.ofEpochMilli(request.timestamp()).plus(after.get()));
      out.printf(
          "Scheduled %s for %s, due %s (request %s-%d@%d)%n",
          id, targetTopic, due, request.topic(), request.partition(), request.offset());
    }
    return Main.OK;
  }

  private static <T> T argument(String option, Supplier<T> parser) {
    try {
      return parser.get();
    } catch (IllegalArgumentException e) {
      throw new UsageException(option + ": " + e.getMessage());
    }
  }

  private static Set<String> options() {
    Set<String> options = new HashSet<>(ClientOptions.OPTIONS);
    options.addAll(Set.of("--id", "--target", "--after", "--at", "--key"));
    return Set.copyOf(options);
  }
}

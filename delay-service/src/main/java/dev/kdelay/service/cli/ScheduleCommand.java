package dev.kdelay.service.cli;

import dev.kdelay.client.DelayClient;
import dev.kdelay.client.DelayedMessage;
import java.io.PrintStream;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * {@code schedule --id ID --target TOPIC (--after DURATION | --at INSTANT | --cron EXPR ...) [--key
 * KEY] VALUE}.
 *
 * @param id the schedule id
 * @param targetTopic where the value is delivered
 * @param time when
 * @param targetKey the key of the fired record, if not the id
 * @param value the payload
 */
public record ScheduleCommand(
    String id, String targetTopic, TimeOptions time, Optional<String> targetKey, String value) {

  public static final Set<String> OPTIONS = options();

  /**
   * Reads the command's arguments.
   *
   * @throws UsageException if one is missing or malformed, or not exactly one time is given
   */
  public static ScheduleCommand parse(CommandLine line) {
    String id = line.required("--id");
    String target = line.required("--target");
    TimeOptions time = TimeOptions.parse(line);
    return new ScheduleCommand(
        id, target, time, line.option("--key"), line.singlePositional("VALUE"));
  }

  /** The request to send. */
  DelayedMessage message() {
    DelayedMessage.Builder builder = DelayedMessage.builder(id, targetTopic).payload(value);
    time.applyTo(builder);
    targetKey.ifPresent(builder::targetKey);
    return builder.build();
  }

  /** Sends the request and prints where it went and when it is due. */
  public int run(ClientOptions options, PrintStream out) {
    try (DelayClient client =
        DelayClient.create(options.producerProperties(), options.requestsTopicToWrite())) {
      RecordMetadata request =
          ClientOptions.awaitAck(client.schedule(message()), "scheduling " + id);
      out.printf(
          "Scheduled %s for %s, %s (request %s-%d@%d)%n",
          id,
          targetTopic,
          time.when(request),
          request.topic(),
          request.partition(),
          request.offset());
    }
    return CommandLine.OK;
  }

  private static Set<String> options() {
    Set<String> options = new HashSet<>(ClientOptions.OPTIONS);
    options.add(ClientOptions.TENANT);
    options.addAll(Set.of("--id", "--target", "--key"));
    options.addAll(TimeOptions.OPTIONS);
    return Set.copyOf(options);
  }
}

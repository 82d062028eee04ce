package dev.kdelay.service.cli;

import dev.kdelay.client.DelayClient;
import dev.kdelay.schemas.Action;
import java.io.PrintStream;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * {@code cancel}, {@code pause}, {@code resume} and {@code trigger --id ID}, the requests that name
 * a schedule and nothing else, and {@code reschedule --id ID} with a new time.
 *
 * @param action what to ask for
 * @param id the schedule id
 * @param time the new time of a reschedule; empty for the others
 */
public record IdCommand(Action action, String id, Optional<TimeOptions> time) {

  public static final Set<String> OPTIONS = options();

  /**
   * Reads the command's arguments.
   *
   * @throws UsageException if {@code --id} is missing or other arguments are given
   */
  public static IdCommand parse(Action action, CommandLine line) {
    line.requireNoPositionals();
    String id = line.required("--id");
    if (action == Action.RESCHEDULE) {
      return new IdCommand(action, id, Optional.of(TimeOptions.parse(line)));
    }
    if (TimeOptions.OPTIONS.stream().anyMatch(option -> line.option(option).isPresent())) {
      throw new UsageException("time options apply to schedule and reschedule only");
    }
    return new IdCommand(action, id, Optional.empty());
  }

  /** Sends the request. */
  public int run(ClientOptions options, PrintStream out) {
    try (DelayClient client =
        DelayClient.create(options.producerProperties(), options.requestsTopicToWrite())) {
      RecordMetadata request =
          ClientOptions.awaitAck(send(client), action.wireName() + " of " + id);
      out.printf(
          "Sent %s for %s%s (request %s-%d@%d)%n",
          action.wireName(),
          id,
          time.map(t -> ", " + t.when(request)).orElse(""),
          request.topic(),
          request.partition(),
          request.offset());
    }
    return CommandLine.OK;
  }

  private CompletableFuture<RecordMetadata> send(DelayClient client) {
    return switch (action) {
      case CANCEL -> client.cancel(id);
      case PAUSE -> client.pause(id);
      case RESUME -> client.resume(id);
      case TRIGGER -> client.trigger(id);
      case RESCHEDULE -> time.orElseThrow().reschedule(client, id);
      case SCHEDULE -> throw new IllegalStateException("schedule has its own command");
    };
  }

  private static Set<String> options() {
    Set<String> options = new HashSet<>(ClientOptions.OPTIONS);
    options.add(ClientOptions.TENANT);
    options.add("--id");
    options.addAll(TimeOptions.OPTIONS);
    return Set.copyOf(options);
  }
}

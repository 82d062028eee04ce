package dev.kdelay.service.cli;

import dev.kdelay.client.DelayClient;
import dev.kdelay.schemas.Action;
import java.io.PrintStream;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * {@code cancel --id ID}, {@code pause --id ID} and {@code resume --id ID}: the requests that name
 * a schedule and nothing else.
 *
 * @param action cancel, pause or resume
 * @param id the schedule id
 */
public record IdCommand(Action action, String id) {

  public static final Set<String> OPTIONS = options();

  /**
   * Reads the command's arguments.
   *
   * @throws UsageException if {@code --id} is missing or other arguments are given
   */
  public static IdCommand parse(Action action, CommandLine line) {
    line.requireNoPositionals();
    return new IdCommand(action, line.required("--id"));
  }

  /** Sends the request. */
  public int run(ClientOptions options, PrintStream out) {
    try (DelayClient client =
        DelayClient.create(options.producerProperties(), options.requestsTopic())) {
      RecordMetadata request =
          ClientOptions.awaitAck(send(client), action.wireName() + " of " + id);
      out.printf(
          "Sent %s for %s (request %s-%d@%d)%n",
          action.wireName(), id, request.topic(), request.partition(), request.offset());
    }
    return CommandLine.OK;
  }

  private CompletableFuture<RecordMetadata> send(DelayClient client) {
    return switch (action) {
      case CANCEL -> client.cancel(id);
      case PAUSE -> client.pause(id);
      case RESUME -> client.resume(id);
      case SCHEDULE -> throw new IllegalStateException("schedule has its own command");
    };
  }

  private static Set<String> options() {
    Set<String> options = new HashSet<>(ClientOptions.OPTIONS);
    options.add("--id");
    return Set.copyOf(options);
  }
}

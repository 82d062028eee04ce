package dev.kdelay.service;

import dev.kdelay.client.DelayClient;
import java.io.PrintStream;
import java.util.HashSet;
import java.util.Set;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * {@code cancel --id ID}.
 *
 * @param id the schedule id to cancel
 */
record CancelCommand(String id) {

  static final Set<String> OPTIONS = options();

  /**
   * Reads the command's arguments.
   *
   * @throws UsageException if {@code --id} is missing or other arguments are given
   */
  static CancelCommand parse(CommandLine line) {
    line.requireNoPositionals();
    return new CancelCommand(line.required("--id"));
  }

  /** Sends the cancel request. */
  int run(ClientOptions options, PrintStream out) {
    try (DelayClient client =
        DelayClient.create(options.producerProperties(), options.requestsTopic())) {
      RecordMetadata request = ClientOptions.awaitAck(client.cancel(id), "cancelling " + id);
      out.printf(
          "Cancelled %s (request %s-%d@%d)%n",
          id, request.topic(), request.partition(), request.offset());
    }
    return Main.OK;
  }

  private static Set<String> options() {
    Set<String> options = new HashSet<>(ClientOptions.OPTIONS);
    options.add("--id");
    return Set.copyOf(options);
  }
}

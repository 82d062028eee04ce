package dev.kdelay.service.cli;

import dev.kdelay.client.DeadLetter;
import dev.kdelay.client.DelayClient;
import dev.kdelay.client.Replay;
import dev.kdelay.service.deadletters.DeadLetterPages;
import dev.kdelay.service.deadletters.DeadLetterPages.Position;
import dev.kdelay.service.input.TimeArguments;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;

/**
 * {@code dlq list | show | replay}: the dead-letter topic read, and a dead letter submitted again.
 *
 * <pre>
 * kdelay dlq list [--code CODE] [--id ID] [--after CURSOR] [--limit N]
 * kdelay dlq show PARTITION.OFFSET
 * kdelay dlq replay PARTITION.OFFSET [--target TOPIC] [--at INSTANT | --after DURATION]
 * </pre>
 *
 * @param verb list, show or replay
 * @param line the rest of the command line
 */
public record DeadLetterCommand(String verb, CommandLine line) {

  /** Options of every verb; each verb checks which of them it takes. */
  public static final Set<String> OPTIONS = options();

  private static final Duration READ_TIMEOUT = Duration.ofSeconds(30);
  private static final int DEFAULT_LIMIT = 20;

  /**
   * Reads the verb and checks its arguments.
   *
   * @param args the arguments after {@code dlq}
   * @throws UsageException if the verb is unknown or its arguments are wrong
   */
  public static DeadLetterCommand parse(List<String> args) {
    if (args.isEmpty() || args.get(0).startsWith("-")) {
      throw new UsageException("dlq needs a verb: list, show or replay");
    }
    String verb = args.get(0);
    CommandLine line = CommandLine.parse(args.subList(1, args.size()), OPTIONS, Set.of());
    Set<String> allowed =
        switch (verb) {
          case "list" -> Set.of("--code", "--id", "--after", "--limit");
          case "show" -> Set.of();
          case "replay" -> Set.of("--target", "--at", "--after");
          default -> throw new UsageException("unknown dlq verb '" + verb + "'");
        };
    for (String option : OPTIONS) {
      if (line.option(option).isPresent()
          && !allowed.contains(option)
          && !ClientOptions.OPTIONS.contains(option)
          && !option.equals(ClientOptions.TENANT)) {
        throw new UsageException("dlq " + verb + " takes no " + option);
      }
    }
    if (verb.equals("list")) {
      line.requireNoPositionals();
    } else {
      position(line);
    }
    if (line.option("--at").isPresent() && line.option("--after").isPresent()) {
      throw new UsageException("give --at or --after, not both");
    }
    return new DeadLetterCommand(verb, line);
  }

  /** Runs the verb. */
  public int run(ClientOptions options, PrintStream out) {
    DeadLetterPages pages =
        new DeadLetterPages(
            DeadLetterPages.consumers(options.consumerProperties()),
            options.dlqTopic(),
            READ_TIMEOUT,
            Clock.systemUTC());
    return switch (verb) {
      case "list" -> list(pages, out);
      case "show" -> show(pages, out);
      default -> replay(pages, options, out);
    };
  }

  private int list(DeadLetterPages pages, PrintStream out) {
    Optional<Position> after =
        line.option("--after")
            .map(
                cursor ->
                    Position.parse(cursor)
                        .orElseThrow(
                            () ->
                                new UsageException(
                                    "--after " + cursor + " is not a cursor a list printed")));
    int limit = line.option("--limit").map(DeadLetterCommand::limit).orElse(DEFAULT_LIMIT);
    DeadLetterPages.Page page =
        pages.page(
            new DeadLetterPages.Filter(line.option("--code"), line.option("--id")), after, limit);
    for (DeadLetter letter : page.letters()) {
      out.printf(
          "%d.%d  %s  %s  %s  %s%n",
          letter.partition(),
          letter.offset(),
          Instant.ofEpochMilli(letter.timestamp()),
          letter.code(),
          letter.scheduleId().orElse("-"),
          firstLine(letter.message()));
    }
    if (page.letters().isEmpty()) {
      out.println("No dead letters" + (page.next().isPresent() ? " on this page" : "") + ".");
    }
    page.next()
        .ifPresent(next -> out.println("More: kdelay dlq list --after " + next.cursor() + " ..."));
    return CommandLine.OK;
  }

  private int show(DeadLetterPages pages, PrintStream out) {
    DeadLetter letter = find(pages);
    out.printf("dead letter  %s-%d@%d%n", letter.topic(), letter.partition(), letter.offset());
    out.printf("timestamp    %s%n", Instant.ofEpochMilli(letter.timestamp()));
    out.printf("code         %s%n", letter.code());
    out.printf("id           %s%n", letter.scheduleId().orElse("-"));
    out.printf("message      %s%n", letter.message());
    for (Header header : letter.headers()) {
      out.printf("header       %s: %s%n", header.key(), printable(header.value()));
    }
    out.printf(
        "payload      %s%n",
        letter.value() == null
            ? "(none)"
            : letter.value().length + " bytes: " + printable(letter.value()));
    return CommandLine.OK;
  }

  private int replay(DeadLetterPages pages, ClientOptions options, PrintStream out) {
    DeadLetter letter = find(pages);
    Replay replay = Replay.asIs();
    if (line.option("--target").isPresent()) {
      replay = replay.targetTopic(line.option("--target").get());
    }
    try {
      if (line.option("--at").isPresent()) {
        replay = replay.fireAt(TimeArguments.instant(line.option("--at").get()));
      }
      if (line.option("--after").isPresent()) {
        replay = replay.after(TimeArguments.duration(line.option("--after").get()));
      }
    } catch (IllegalArgumentException | ArithmeticException e) {
      throw new UsageException(e.getMessage());
    }
    try (DelayClient client =
        DelayClient.create(options.producerProperties(), options.requestsTopicToWrite())) {
      RecordMetadata request;
      try {
        request = ClientOptions.awaitAck(client.replay(letter, replay), "replay of " + letter);
      } catch (IllegalArgumentException e) {
        throw new UsageException("cannot replay: " + e.getMessage());
      }
      out.printf(
          "Replayed %s as %s (request %s-%d@%d)%n",
          letter,
          letter.scheduleId().orElseThrow(),
          request.topic(),
          request.partition(),
          request.offset());
    }
    return CommandLine.OK;
  }

  private DeadLetter find(DeadLetterPages pages) {
    Position position = position(line);
    return pages
        .at(position.partition(), position.offset())
        .orElseThrow(
            () ->
                new UsageException(
                    "no dead letter at " + position.cursor() + " of " + pages.topic()));
  }

  private static Position position(CommandLine line) {
    String text = line.singlePositional("PARTITION.OFFSET");
    return Position.parse(text)
        .orElseThrow(
            () -> new UsageException("'" + text + "' is not PARTITION.OFFSET, such as 3.1742"));
  }

  private static int limit(String text) {
    try {
      int limit = Integer.parseInt(text);
      if (limit >= 1 && limit <= 10_000) {
        return limit;
      }
    } catch (NumberFormatException e) {
      // Falls through to the error.
    }
    throw new UsageException("--limit " + text + ": expected 1 to 10000");
  }

  private static String firstLine(String message) {
    int newline = message.indexOf('\n');
    String line = newline < 0 ? message : message.substring(0, newline);
    return line.length() > 120 ? line.substring(0, 117) + "..." : line;
  }

  /** UTF-8 text as is, anything else as base64. */
  private static String printable(byte[] bytes) {
    if (bytes == null) {
      return "(null)";
    }
    String text = new String(bytes, StandardCharsets.UTF_8);
    return java.util.Arrays.equals(text.getBytes(StandardCharsets.UTF_8), bytes)
        ? text
        : "base64:" + Base64.getEncoder().encodeToString(bytes);
  }

  private static Set<String> options() {
    Set<String> options = new HashSet<>(ClientOptions.OPTIONS);
    options.add(ClientOptions.TENANT);
    options.addAll(List.of("--code", "--id", "--after", "--limit", "--target", "--at"));
    return Set.copyOf(options);
  }
}

package dev.kdelay.service;

import dev.kdelay.schemas.Action;
import dev.kdelay.service.cli.ClientOptions;
import dev.kdelay.service.cli.CommandLine;
import dev.kdelay.service.cli.DeadLetterCommand;
import dev.kdelay.service.cli.IdCommand;
import dev.kdelay.service.cli.LimitsCommand;
import dev.kdelay.service.cli.MoveCommand;
import dev.kdelay.service.cli.ScheduleCommand;
import dev.kdelay.service.cli.UsageException;
import dev.kdelay.service.cli.WatchCommand;
import dev.kdelay.service.config.ConfigSources;
import dev.kdelay.service.config.ServiceConfig;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.streams.KafkaStreams;
import org.slf4j.LoggerFactory;

/**
 * The {@code kdelay} command: {@code run} (the default) starts the service; {@code schedule},
 * {@code cancel} and {@code watch} are a small CLI over the client SDK.
 *
 * <p>Exit codes: {@value CommandLine#OK} success, {@value CommandLine#FAILED} failure (invalid
 * configuration, Kafka unreachable, the service stopped on an error), {@value CommandLine#USAGE}
 * wrong command line.
 */
public final class Main {

  /** What a Kafka timeout most often means to a command-line user. */
  static final String TIMEOUT_HINT =
      "Kafka did not answer in time. Check that the bootstrap servers (DELAY_BOOTSTRAP_SERVERS) are"
          + " reachable and, if the cluster requires authentication or TLS, that security.protocol"
          + " and the sasl.* or ssl.* settings are given (DELAY_KAFKA_SECURITY_PROTOCOL, ..., or in"
          + " the --config file).";

  static final String USAGE_TEXT =
      """
      Usage: kdelay [COMMAND] [OPTIONS]

      Commands:
        run [--config FILE]
            Start the service (the default command). With no bootstrap servers configured it
            starts an embedded Kafka broker on 127.0.0.1:9092 with its data under ./data.
        schedule --id ID --target TOPIC (--after DURATION | --at INSTANT | --cron EXPR)
                 [--key KEY] VALUE
            Deliver VALUE to TOPIC later, keyed KEY (default: ID). Re-using an ID replaces it.
            A --cron schedule recurs; it takes [--cron-type quartz|unix|spring] [--zone ZONE]
            [--start-at INSTANT] [--end-at INSTANT] [--max-fires N]
            [--misfire fire-once|fire-all|skip].
        cancel --id ID
            Cancel a schedule.
        pause --id ID, resume --id ID
            Pause a recurring schedule; resume it with its first occurrence after now.
        trigger --id ID
            Fire a schedule's next occurrence now, with the idempotency key it would have had on
            time; a recurring schedule goes on from the occurrence after it.
        reschedule --id ID (--after DURATION | --at INSTANT | --cron EXPR [cron options])
            Move a schedule to a new time, keeping its target and payload.
        watch [--from-beginning] TOPIC
            Print the records of TOPIC as a read_committed consumer sees them, with each fired
            record's id, idempotency key, due and fired times and lateness. Ctrl-C stops.
        dlq list [--code CODE] [--id ID] [--limit N] [--after CURSOR]
            List the dead-letter topic's records, oldest first, a page at a time.
        dlq show PARTITION.OFFSET
            Print one dead letter: its code, message, headers and payload.
        dlq replay PARTITION.OFFSET [--target TOPIC] [--at INSTANT | --after DURATION]
            Submit a dead letter again, as it was or corrected. It keeps its original timestamp,
            so it never overrides a newer request for the same id.
        limits [list]
            Show the fire-rate limits: the configuration's, and those set with limits set.
        limits set TOPIC RATE[/BURST], limits set TOPIC none, limits clear TOPIC
            Limit the fires a second to TOPIC (and the most at once), lift its limit, or go back
            to the configuration's, on every instance at once, for the tasks that come due from
            then on. Tasks over a limit wait for their slot, in order; none is dropped.
            TOPIC may be tenant:NAME: a limit on all of that tenant's fires.
        move --to TOPIC [--application-id ID] [--batch N] [--wait DURATION]
            Move every schedule of a stopped deployment (the one --config and the environment
            describe, or --application-id), and the requests it had not applied, into a new
            deployment's requests topic: how to get more partitions. The new deployment runs
            with delay.import.from set to the old application id. See docs/operations.md.

      Options of every command but run:
        --bootstrap-servers HOST:PORT  default: $DELAY_BOOTSTRAP_SERVERS, else 127.0.0.1:9092
        --requests-topic TOPIC         default: from the configuration, else delay-requests
        --config FILE                  the properties file run takes, for TLS/SASL settings
        --tenant NAME                  schedule, the id commands and dlq: act as a tenant, on
                                       its own request and dead-letter topics

      DURATION  ISO-8601 (PT30S) or a number with a unit: 500ms, 30s, 5m, 2h, 1d
      INSTANT   ISO-8601 (2030-01-01T09:00:00Z, 2030-01-01T10:00:00+01:00) or epoch millis

      Configuration: the --config properties file, then environment variables, which win:
        DELAY_<NAME>        kdelay's keys: DELAY_REQUESTS_TOPIC sets delay.requests.topic
        DELAY_KAFKA_<NAME>  Kafka properties: DELAY_KAFKA_SECURITY_PROTOCOL sets
                            security.protocol
      """;

  /** The commands that are clients of a running service: their stdout is their output. */
  private static final Set<String> CLIENT_COMMANDS =
      Set.of(
          "schedule",
          "cancel",
          "pause",
          "resume",
          "trigger",
          "reschedule",
          "watch",
          "dlq",
          "limits",
          "move");

  private final Map<String, String> environment;
  private final PrintStream out;
  private final PrintStream err;

  Main(Map<String, String> environment, PrintStream out, PrintStream err) {
    this.environment = environment;
    this.out = out;
    this.err = err;
  }

  /**
   * Runs a command and exits with its code.
   *
   * @param args the command and its arguments
   */
  public static void main(String[] args) {
    // Before the first logger exists: the CLI's stdout is its output, so its log goes to stderr.
    if (args.length > 0 && CLIENT_COMMANDS.contains(args[0])) {
      System.setProperty("kdelay.log.target", "SYSTEM_ERR");
    }
    int code;
    try {
      code = new Main(System.getenv(), System.out, System.err).execute(Arrays.asList(args));
    } catch (RuntimeException e) {
      LoggerFactory.getLogger(Main.class).error("event=failed", e);
      code = CommandLine.FAILED;
    }
    // Exit explicitly: Kafka client threads must not keep a failed process alive.
    System.exit(code);
  }

  /**
   * Runs a command.
   *
   * @param args the command and its arguments
   * @return the exit code
   */
  int execute(List<String> args) {
    boolean named = !args.isEmpty() && !args.get(0).startsWith("-");
    String command = named ? args.get(0) : "run";
    List<String> rest = named ? args.subList(1, args.size()) : args;
    if (command.equals("help") || rest.contains("--help") || rest.contains("-h")) {
      out.print(USAGE_TEXT);
      return CommandLine.OK;
    }
    try {
      return switch (command) {
        case "run" -> run(CommandLine.parse(rest, Set.of("--config"), Set.of()));
        case "schedule" -> {
          CommandLine line = CommandLine.parse(rest, ScheduleCommand.OPTIONS, Set.of());
          ScheduleCommand schedule = ScheduleCommand.parse(line);
          yield schedule.run(ClientOptions.from(line, environment), out);
        }
        case "cancel", "pause", "resume", "trigger", "reschedule" -> {
          CommandLine line = CommandLine.parse(rest, IdCommand.OPTIONS, Set.of());
          Action action = Action.fromWireName(command).orElseThrow();
          yield IdCommand.parse(action, line).run(ClientOptions.from(line, environment), out);
        }
        case "watch" -> {
          CommandLine line = CommandLine.parse(rest, WatchCommand.OPTIONS, WatchCommand.FLAGS);
          WatchCommand watch = WatchCommand.parse(line);
          yield watch.run(ClientOptions.from(line, environment), out);
        }
        case "dlq" -> {
          DeadLetterCommand dlq = DeadLetterCommand.parse(rest);
          yield dlq.run(ClientOptions.from(dlq.line(), environment), out);
        }
        case "limits" -> {
          LimitsCommand limits = LimitsCommand.parse(rest);
          yield limits.run(ClientOptions.from(limits.line(), environment), out);
        }
        case "move" -> {
          CommandLine line = CommandLine.parse(rest, MoveCommand.OPTIONS, Set.of());
          MoveCommand move = MoveCommand.parse(line);
          yield move.run(ClientOptions.from(line, environment), out);
        }
        default -> throw new UsageException("unknown command '" + command + "'");
      };
    } catch (UsageException e) {
      err.println("kdelay " + command + ": " + e.getMessage());
      err.println();
      err.print(USAGE_TEXT);
      return CommandLine.USAGE;
    } catch (DelayServiceException | KafkaException e) {
      // KafkaException includes ConfigException, whose message names key, value and what is
      // allowed.
      err.println("kdelay " + command + ": " + e.getMessage());
      if (timedOut(e)) {
        // A client without the cluster's security settings sees only closed connections.
        err.println(TIMEOUT_HINT);
      }
      return CommandLine.FAILED;
    }
  }

  private static boolean timedOut(Throwable e) {
    for (Throwable cause = e; cause != null; cause = cause.getCause()) {
      if (cause instanceof org.apache.kafka.common.errors.TimeoutException) {
        return true;
      }
    }
    return false;
  }

  private int run(CommandLine line) {
    line.requireNoPositionals();
    ServiceConfig config = ConfigSources.load(line.option("--config").map(Path::of), environment);
    DelayService service = new DelayService(config);
    // SIGTERM and ctrl-C, also while starting: commit, leave the group, stop within a bound.
    Runtime.getRuntime().addShutdownHook(new Thread(service::close, "kdelay-shutdown"));
    service.start();
    try {
      if (service.awaitTermination() == KafkaStreams.State.ERROR) {
        LoggerFactory.getLogger(Main.class).error("event=streams-failed exit=1");
        service.close();
        return CommandLine.FAILED;
      }
      return CommandLine.OK;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      service.close();
      return CommandLine.FAILED;
    }
  }
}

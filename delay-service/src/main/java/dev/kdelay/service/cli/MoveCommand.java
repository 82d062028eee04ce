package dev.kdelay.service.cli;

import dev.kdelay.service.input.TimeArguments;
import dev.kdelay.service.move.DeploymentMove;
import java.io.PrintStream;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;

/**
 * {@code move --to TOPIC}: moves a stopped deployment's schedules, and the requests it had not
 * applied, into the requests topic of a new deployment (see {@link DeploymentMove}). The old
 * deployment is the one the options describe: its application id and topics come from {@code
 * --config} and the environment as {@code run} reads them, or from {@code --application-id} and
 * {@code --requests-topic}.
 *
 * @param to the new deployment's requests topic
 * @param applicationId the old deployment's application id, if given on the command line
 * @param batch how many ids or requests one transaction moves
 * @param patience how long to wait for a transaction the old deployment left open
 */
public record MoveCommand(String to, String applicationId, int batch, Duration patience) {

  public static final Set<String> OPTIONS = options();

  private static final Duration DEFAULT_WAIT = Duration.ofMinutes(2);

  private static Set<String> options() {
    Set<String> options = new HashSet<>(ClientOptions.OPTIONS);
    options.addAll(Set.of("--to", "--application-id", "--batch", "--wait"));
    return Set.copyOf(options);
  }

  /**
   * Reads the command's arguments.
   *
   * @throws UsageException if {@code --to} is missing or a value is invalid
   */
  public static MoveCommand parse(CommandLine line) {
    line.requireNoPositionals();
    int batch;
    try {
      batch =
          Integer.parseInt(
              line.option("--batch").orElse(Integer.toString(DeploymentMove.DEFAULT_BATCH)));
    } catch (NumberFormatException e) {
      throw new UsageException("--batch must be a number, got " + line.option("--batch").get());
    }
    if (batch < 1) {
      throw new UsageException("--batch must be at least 1, got " + batch);
    }
    Duration wait;
    try {
      wait = line.option("--wait").map(TimeArguments::duration).orElse(DEFAULT_WAIT);
    } catch (IllegalArgumentException e) {
      throw new UsageException("--wait: " + e.getMessage());
    }
    return new MoveCommand(
        line.required("--to"), line.option("--application-id").orElse(null), batch, wait);
  }

  /** Moves, and says what moved. */
  public int run(ClientOptions options, PrintStream out) {
    String application = applicationId != null ? applicationId : options.config().applicationId();
    String reroute =
        options.requestsTopic().equals(options.config().requestsTopic())
            ? options.config().rerouteTopic()
            : options.requestsTopic() + "-rerouted";
    DeploymentMove.Source from =
        new DeploymentMove.Source(application, options.requestsTopic(), reroute);
    out.printf(
        "Moving the schedules of application '%s' (%s) to %s on %s%n",
        application, options.requestsTopic(), to, options.bootstrapServers());
    DeploymentMove.Report report =
        new DeploymentMove(
                options.adminProperties(),
                options.consumerProperties(),
                options.producerProperties(),
                from,
                to,
                batch,
                patience,
                System::currentTimeMillis)
            .run();
    out.printf(
        "Moved %d ids to %s (%d partitions): %d scheduled, %d paused, %d cancel or fire markers"
            + " still in retention, %d unreadable (dead-lettered there); %d expired markers left"
            + " behind.%n",
        report.moved(),
        to,
        report.toPartitions(),
        report.scheduled(),
        report.paused(),
        report.markers(),
        report.unreadable(),
        report.expired());
    out.printf(
        "Forwarded %d requests that '%s' had not applied.%n", report.forwarded(), application);
    out.printf(
        "Application '%s' holds no schedules now: do not start it again. Point producers at %s;"
            + " run this command again to forward what still arrives on %s meanwhile.%n",
        application, to, options.requestsTopic());
    return CommandLine.OK;
  }
}

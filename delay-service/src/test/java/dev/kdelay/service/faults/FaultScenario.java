package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.service.faults.CommittedRecords.Received;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;

/**
 * One fault scenario's world: its topics on the broker, its application id, a directory under
 * {@code target/faults/<name>} for the instances' state and logs, the load, the ledger and the
 * {@code read_committed} reader of every target topic; and the final check.
 *
 * <p>Closing it kills whatever child JVM is still running, also after a failed assertion.
 */
final class FaultScenario implements AutoCloseable {

  static final int REQUESTS_PARTITIONS = 6;
  static final int TARGET_PARTITIONS = 3;

  /** Where every scenario appends its figures, one line each. */
  static final Path FIGURES = Path.of("target", "faults", "figures.txt");

  private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(60);

  private final String name;
  private final String bootstrapServers;
  private final short replicas;
  private final Path dir;
  private final Admin admin;
  private final Ledger ledger = new Ledger();
  private final List<AutoCloseable> resources = new ArrayList<>();
  private TaskLoad load;
  private CommittedRecords fired;
  private IntakeProgress intake;
  private List<Received> finished = List.of();
  private boolean closed;

  FaultScenario(String name, String bootstrapServers) {
    this(name, bootstrapServers, (short) 1);
  }

  /**
   * A scenario whose topics have {@code replicas} replicas each, and need two in sync from three
   * replicas on, as kdelay's own on a cluster of that size.
   */
  FaultScenario(String name, String bootstrapServers, short replicas) {
    this.name = name;
    this.bootstrapServers = bootstrapServers;
    this.replicas = replicas;
    this.dir = freshDir(name);
    this.admin = Admin.create(Map.of("bootstrap.servers", bootstrapServers));
    createTopics();
  }

  /**
   * Creates kdelay's own topics and the targets before any instance starts, as an operator
   * provisioning topics does; {@code StartupRaceIT} covers kdelay creating them itself.
   */
  private void createTopics() {
    Map<String, Integer> topics = new java.util.LinkedHashMap<>();
    topics.put(requestsTopic(), REQUESTS_PARTITIONS);
    topics.put(requestsTopic() + "-rerouted", REQUESTS_PARTITIONS);
    topics.put(dlqTopic(), REQUESTS_PARTITIONS);
    targets().forEach(target -> topics.put(target, TARGET_PARTITIONS));
    createTopics(admin, topics, replicas);
  }

  /** Creates topics with one replica each, waiting until the broker has. */
  static void createTopics(Admin admin, Map<String, Integer> partitionsByTopic) {
    createTopics(admin, partitionsByTopic, (short) 1);
  }

  /**
   * Creates topics with {@code replicas} replicas each (two in sync needed from three on), waiting
   * until the controller has.
   */
  static void createTopics(Admin admin, Map<String, Integer> partitionsByTopic, short replicas) {
    List<NewTopic> topics = new ArrayList<>();
    Map<String, String> configs =
        replicas >= 3 ? Map.of("min.insync.replicas", "2") : Map.<String, String>of();
    partitionsByTopic.forEach(
        (topic, partitions) ->
            topics.add(new NewTopic(topic, partitions, replicas).configs(configs)));
    try {
      admin.createTopics(topics).all().get(ADMIN_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("cannot create the topics " + partitionsByTopic.keySet(), e);
    }
  }

  String name() {
    return name;
  }

  /** How many replicas each of the scenario's topics has. */
  short replicas() {
    return replicas;
  }

  String bootstrapServers() {
    return bootstrapServers;
  }

  Path dir() {
    return dir;
  }

  Admin admin() {
    return admin;
  }

  String applicationId() {
    return "faults-" + name;
  }

  String requestsTopic() {
    return name + "-requests";
  }

  String dlqTopic() {
    return name + "-dlq";
  }

  int requestsPartitions() {
    return REQUESTS_PARTITIONS;
  }

  List<String> targets() {
    return List.of(name + "-target-a", name + "-target-b");
  }

  Ledger ledger() {
    return ledger;
  }

  /** An empty directory {@code target/faults/<name>}, for a scenario or a broker of its own. */
  static Path freshDir(String name) {
    Path dir = Path.of("target", "faults", name).toAbsolutePath();
    deleteRecursively(dir);
    return dir;
  }

  /** The log4j configuration of the child JVMs: kdelay and Kafka Streams' lifecycle at INFO. */
  static Path childLogConfig() {
    try {
      return Path.of(FaultScenario.class.getResource("child-log4j2.xml").toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A fleet of instances sharing this scenario's application id. */
  Fleet fleet(int standbys) {
    return fleet(standbys, Map.of());
  }

  Fleet fleet(int standbys, Map<String, String> environment) {
    return register(new Fleet(this, standbys, environment));
  }

  /** Starts reading every target topic, then starts sending the load. */
  TaskLoad startLoad(TaskLoad.Plan plan) {
    startReading();
    intake = register(new IntakeProgress(admin, applicationId(), requestsTopic()));
    load =
        register(
            new TaskLoad(
                bootstrapServers, requestsTopic(), REQUESTS_PARTITIONS, targets(), plan, ledger));
    load.start();
    return load;
  }

  /** Starts the {@code read_committed} reader of every target topic, if not yet started. */
  CommittedRecords startReading() {
    if (fired == null) {
      fired =
          register(new CommittedRecords(bootstrapServers, targets(), DelayHeaders.IDEMPOTENCY_KEY));
    }
    return fired;
  }

  CommittedRecords fired() {
    return fired;
  }

  /** Everything the {@code read_committed} reader received, once {@link #verify} has run. */
  List<Received> finished() {
    return finished;
  }

  /**
   * The final check: waits for the load to be sent, sends a sentinel per partition due after
   * everything, waits until every expected occurrence and every sentinel is visible, reads on to
   * the last stable offsets, and holds it all against the ledger and the dead letters. Every
   * request of the load is valid: a dead letter the contract does not explain fails here.
   */
  Verdict verify(Duration fireTimeout) throws InterruptedException {
    load.awaitFinished(Duration.ofMinutes(3));
    load.sendSentinels(Math.max(ledger.maxDueMs(), System.currentTimeMillis()) + 1_000);
    try {
      Await.until(
          "every expected occurrence to be visible (" + ledger.expected().size() + ")",
          fireTimeout,
          () ->
              ledger.awaited(fired.missing(ledger.expected().keySet()), fired::contains).isEmpty());
    } catch (AssertionError e) {
      // Leave the evidence and say what is missing before failing: lost, or only very late?
      List<Received> sofar = fired.finish(Duration.ofSeconds(60));
      Evidence.write(dir, ledger, sofar);
      throw new AssertionError(
          e.getMessage() + "; so far: " + Verdict.of(ledger, sofar, intake).report(), e);
    }
    List<Received> received = fired.finish(Duration.ofSeconds(60));
    finished = received;
    Evidence.write(dir, ledger, received);
    Verdict verdict = Verdict.of(ledger, received, intake, deadLetters());
    report(verdict.report());
    assertThat(verdict.unexplainedDeadLetters())
        .as("dead letters of a load of valid requests")
        .isEmpty();
    return verdict;
  }

  /** Waits until a task of these requests partitions has become visible within the last second. */
  void awaitFiring(Set<Integer> partitions) {
    Await.until(
        "a task of partitions " + partitions + " to fire",
        Duration.ofSeconds(90),
        () ->
            fired
                .first(
                    received -> {
                      Ledger.Task task = ledger.task(received.header(DelayHeaders.IDEMPOTENCY_KEY));
                      return task != null
                          && partitions.contains(task.requestPartition())
                          && received.receivedAtMs() > System.currentTimeMillis() - 1_000;
                    })
                .isPresent());
  }

  /** Waits until another instance has fired a task of the victim's partitions after the fault. */
  void awaitTakeover(Failover failover) {
    Await.until(
        "another instance to fire a task of " + failover.victimPartitions(),
        Duration.ofMinutes(3),
        () -> fired.first(received -> failover.firedByNewOwner(ledger, received)).isPresent());
  }

  /**
   * What a consumer that ignores transactions sees that a {@code read_committed} one does not:
   * fires in transactions that were aborted (the killed or fenced instance's). They must never show
   * to {@code read_committed}; {@link Verdict} checks that, this says the fault made some.
   */
  String abortedFires(List<Received> committed) throws InterruptedException {
    try (CommittedRecords all =
        new CommittedRecords(
            bootstrapServers, targets(), DelayHeaders.IDEMPOTENCY_KEY, "read_uncommitted")) {
      List<Received> uncommitted = all.finish(Duration.ofSeconds(60));
      long twice =
          uncommitted.stream()
              .collect(
                  java.util.stream.Collectors.groupingBy(
                      r -> String.valueOf(r.header(DelayHeaders.IDEMPOTENCY_KEY)),
                      java.util.stream.Collectors.counting()))
              .values()
              .stream()
              .filter(count -> count > 1)
              .count();
      return String.format(
          "read_uncommitted sees %d fired records, read_committed %d: %d fires were in aborted"
              + " transactions; %d idempotency keys appear more than once to read_uncommitted,"
              + " none to read_committed",
          uncommitted.size(), committed.size(), uncommitted.size() - committed.size(), twice);
    }
  }

  /** Every record of the dead-letter topic: its key and {@code delay-error}. */
  List<Verdict.DeadLetter> deadLetters() throws InterruptedException {
    try (CommittedRecords dead =
        new CommittedRecords(bootstrapServers, List.of(dlqTopic()), DelayHeaders.ERROR)) {
      return dead.finish(Duration.ofSeconds(60)).stream()
          .map(Received::record)
          .map(
              r ->
                  new Verdict.DeadLetter(
                      new String(r.key(), StandardCharsets.UTF_8), header(r, DelayHeaders.ERROR)))
          .toList();
    }
  }

  private static String header(
      org.apache.kafka.clients.consumer.ConsumerRecord<byte[], byte[]> record, String name) {
    var header = record.headers().lastHeader(name);
    return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
  }

  /** Prints a line of figures and appends it to {@link #FIGURES}. */
  void report(String figures) {
    String line = "FAULTS " + name + ": " + figures;
    System.out.println(line);
    try {
      Files.createDirectories(FIGURES.getParent());
      Files.writeString(
          FIGURES,
          java.time.Instant.now() + " " + line + System.lineSeparator(),
          StandardCharsets.UTF_8,
          StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private <T extends AutoCloseable> T register(T resource) {
    resources.add(resource);
    return resource;
  }

  /** Kills the child JVMs and closes the clients; closing again does nothing. */
  @Override
  public void close() throws Exception {
    if (closed) {
      return;
    }
    closed = true;
    Exception first = null;
    for (int i = resources.size() - 1; i >= 0; i--) {
      try {
        resources.get(i).close();
      } catch (Exception e) {
        first = first == null ? e : first;
      }
    }
    admin.close(Duration.ofSeconds(10));
    if (first != null) {
      throw first;
    }
  }

  private static void deleteRecursively(Path path) {
    if (!Files.exists(path)) {
      return;
    }
    try (Stream<Path> files = Files.walk(path)) {
      files.sorted(Comparator.reverseOrder()).forEach(FaultScenario::delete);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void delete(Path path) {
    try {
      Files.delete(path);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}

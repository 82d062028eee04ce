package dev.kdelay.service.faults;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.common.GroupState;

/**
 * The kdelay instances of one application id, each a {@link ServiceInstance} with its own state
 * directory, and who owns which requests partition, read from the consumer group as the broker sees
 * it.
 */
final class Fleet implements AutoCloseable {

  private static final Duration START_TIMEOUT = Duration.ofSeconds(120);

  /**
   * What Kafka's transactional producer throws when a broker answers one of its transaction
   * requests with an error it has no handling for, such as {@code UNKNOWN_SERVER_ERROR} to an
   * {@code EndTxn} from a coordinator in the middle of a broker's death or restart.
   */
  private static final Pattern BROKERS_FATAL_ANSWER =
      Pattern.compile(
          "Caused by: org\\.apache\\.kafka\\.common\\.KafkaException: Unhandled error in \\w+Response");

  private final Path dir;
  private final Path logConfig;
  private final Map<String, String> environment;
  private final Admin admin;
  private final String applicationId;
  private final String requestsTopic;
  private final int partitions;
  private final Map<String, ServiceInstance> instances = new LinkedHashMap<>();

  Fleet(FaultScenario scenario, int standbys, Map<String, String> overrides) {
    this.dir = scenario.dir();
    this.logConfig = FaultScenario.childLogConfig();
    this.admin = scenario.admin();
    this.applicationId = scenario.applicationId();
    this.requestsTopic = scenario.requestsTopic();
    this.partitions = scenario.requestsPartitions();
    Map<String, String> env = new HashMap<>();
    env.put("DELAY_BOOTSTRAP_SERVERS", scenario.bootstrapServers());
    env.put("DELAY_APPLICATION_ID", applicationId);
    env.put("DELAY_REQUESTS_TOPIC", requestsTopic);
    env.put("DELAY_DLQ_TOPIC", scenario.dlqTopic());
    env.put("DELAY_NUM_STANDBY_REPLICAS", Integer.toString(standbys));
    env.put("DELAY_TOPIC_PARTITIONS", Integer.toString(partitions));
    // As many replicas as the scenario's own topics have: one on a single broker, three on a
    // cluster, where a changelog of one replica would go offline with its broker.
    env.put("DELAY_TOPIC_REPLICATION_FACTOR", Integer.toString(scenario.replicas()));
    env.put("DELAY_ROCKSDB_BLOCK_CACHE_BYTES", Integer.toString(16 << 20));
    env.put("DELAY_ROCKSDB_WRITE_BUFFER_BYTES", Integer.toString(8 << 20));
    // No session timeout of its own: the fleet fails over with kdelay's defaults, which are what
    // the failover figures are about. (Its 6 s here never took effect: kdelay's
    // consumer.-prefixed default won over a plain pass-through key.)
    env.putAll(overrides);
    this.environment = Map.copyOf(env);
  }

  /** The instance of this name, created (not started) on first use. */
  synchronized ServiceInstance instance(String name) {
    return instances.computeIfAbsent(
        name, n -> new ServiceInstance(n, dir, logConfig, environment));
  }

  /** Starts the named instances at once and waits until each has reached RUNNING. */
  List<ServiceInstance> start(String... names) {
    List<ServiceInstance> started = java.util.Arrays.stream(names).map(this::instance).toList();
    started.forEach(ServiceInstance::start);
    started.forEach(instance -> instance.awaitRunning(START_TIMEOUT));
    return started;
  }

  /**
   * Waits until the group is stable with exactly these members and every requests partition is
   * owned.
   *
   * @return instance name to the requests partitions it owns
   */
  Map<String, Set<Integer>> awaitOwners(Collection<ServiceInstance> members, Duration timeout) {
    Set<String> names = members.stream().map(ServiceInstance::name).collect(Collectors.toSet());
    return Await.value(
        "group " + applicationId + " stable with members " + new TreeSet<>(names),
        timeout,
        () -> owners().filter(owners -> owners.keySet().equals(names)));
  }

  /**
   * The owners as the broker sees them, if the group is stable and every partition is owned.
   *
   * @return instance name to the requests partitions it owns; members without a partition too
   */
  Optional<Map<String, Set<Integer>>> owners() {
    ConsumerGroupDescription group;
    try {
      group =
          admin
              .describeConsumerGroups(List.of(applicationId))
              .all()
              .get(10, TimeUnit.SECONDS)
              .get(applicationId);
    } catch (Exception e) {
      return Optional.empty(); // the broker may be restarting; ask again
    }
    if (group.groupState() != GroupState.STABLE) {
      return Optional.empty();
    }
    Map<String, Set<Integer>> owners = new TreeMap<>();
    for (MemberDescription member : group.members()) {
      owners
          .computeIfAbsent(instanceOf(member), name -> new TreeSet<>())
          .addAll(
              member.assignment().topicPartitions().stream()
                  .filter(partition -> partition.topic().equals(requestsTopic))
                  .map(partition -> partition.partition())
                  .toList());
    }
    long owned = owners.values().stream().mapToLong(Set::size).sum();
    return owned == partitions ? Optional.of(owners) : Optional.empty();
  }

  /** Kafka Streams names its consumer {@code <client.id>-StreamThread-<n>-consumer}. */
  private static String instanceOf(MemberDescription member) {
    String clientId = member.clientId();
    int thread = clientId.indexOf("-StreamThread-");
    return thread < 0 ? clientId : clientId.substring(0, thread);
  }

  synchronized Collection<ServiceInstance> all() {
    return List.copyOf(instances.values());
  }

  /** Stream-thread failures logged by any instance since the test began. */
  List<String> threadFailures() {
    return all().stream()
        .flatMap(instance -> instance.threadFailures().stream().map(line -> instance + ": " + line))
        .toList();
  }

  /**
   * Whether a line of {@link #threadFailures()} is a stream thread the producer's fatal error
   * killed after a broker's unexpected answer to a transaction request, and kdelay replaced.
   * Nothing on the client side can carry on with that producer, so Kafka Streams lets the thread
   * die; its transaction aborts and the replaced thread takes its tasks up from their changelogs.
   */
  static boolean replacedAfterABrokersFatalAnswer(String failure) {
    return failure.contains("Replacing thread in the streams uncaught exception handler")
        && BROKERS_FATAL_ANSWER.matcher(failure).find();
  }

  @Override
  public void close() {
    for (ServiceInstance instance : all()) {
      instance.jvm().destroy();
    }
  }
}

package dev.kdelay.benchmarks;

import dev.kdelay.service.broker.BrokerProfile;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * The benchmark's machinery: the broker in its JVM, an admin client, the load generator and the
 * visibility probe (in this JVM), and the applications under test, each in a JVM of its own.
 */
final class Testbed implements AutoCloseable {

  /** Options of the broker's JVM. */
  static final List<String> BROKER_JVM = List.of("-Xmx1g", "-XX:+UseG1GC");

  /** Options of every application's JVM. */
  static final List<String> APP_JVM =
      List.of("-Xmx1g", "-XX:+UseG1GC", "-Dkdelay.log.target=SYSTEM_ERR");

  /** Environment variable with extra options for the applications' JVMs (profilers, flags). */
  static final String APP_JVM_OPTS_VARIABLE = "KDELAY_BENCH_APP_JVM_OPTS";

  /** Environment variable with extra options for the broker's JVM (a request log, a profiler). */
  static final String BROKER_JVM_OPTS_VARIABLE = "KDELAY_BENCH_BROKER_JVM_OPTS";

  private static final Duration START_TIMEOUT = Duration.ofMinutes(30);

  private final Path workDir;
  private final Optional<Path> jfrDir;
  private final Map<String, String> overrides;
  private final ChildJvm broker;
  private final String bootstrapServers;
  private final Admin admin;
  private final RequestProducer producer;
  private final VisibilityProbe probe;
  private final List<App> apps = new ArrayList<>();

  Testbed(
      Path workDir, Optional<Path> jfrDir, Map<String, String> overrides, BrokerProfile profile) {
    this.workDir = workDir;
    this.jfrDir = jfrDir;
    this.overrides = Map.copyOf(overrides);
    List<String> brokerJvm = new ArrayList<>(BROKER_JVM);
    jfrDir.ifPresent(dir -> brokerJvm.add(flightRecording(dir, "broker")));
    brokerJvm.addAll(extraBrokerOptions());
    this.broker =
        ChildJvm.start(
            "broker",
            brokerJvm,
            BenchmarkBroker.class,
            List.of(
                workDir.resolve("kafka").toString(),
                Integer.toString(freePort()),
                Integer.toString(freePort()),
                profile.label()),
            workDir.resolve("logs/broker.log"));
    this.bootstrapServers = broker.await("READY", Duration.ofMinutes(2));
    this.admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers));
    this.producer = new RequestProducer(bootstrapServers);
    this.probe = new VisibilityProbe(bootstrapServers);
  }

  String bootstrapServers() {
    return bootstrapServers;
  }

  ChildJvm broker() {
    return broker;
  }

  RequestProducer producer() {
    return producer;
  }

  /** A plain transactional producer with kdelay's producer settings, the first fires' yardstick. */
  PlainFirer plainFirer() {
    return new PlainFirer(bootstrapServers, overrides);
  }

  VisibilityProbe probe() {
    return probe;
  }

  /** Creates topics with the benchmark's partition count. */
  void createTopics(String... names) {
    List<NewTopic> topics = new ArrayList<>();
    for (String name : names) {
      topics.add(new NewTopic(name, Optional.of(Benchmark.PARTITIONS), Optional.empty()));
    }
    await(admin.createTopics(topics).all());
  }

  /** Creates a topic with a partition count of its own. */
  void createTopic(String name, int partitions) {
    await(
        admin
            .createTopics(List.of(new NewTopic(name, Optional.of(partitions), Optional.empty())))
            .all());
  }

  /**
   * Starts an application in a JVM of its own and waits until it is RUNNING.
   *
   * @param kind kdelay or the pass-through
   * @param name its name in logs and profiles
   * @param applicationId the Kafka Streams application id; a new state directory each time
   * @param input the requests or input topic
   * @param output the pass-through's output topic; ignored for kdelay
   */
  App start(AppKind kind, String name, String applicationId, String input, String output) {
    Path stateDir = workDir.resolve("state").resolve(name);
    List<String> jvm = new ArrayList<>(APP_JVM);
    jvm.addAll(extraAppOptions());
    jfrDir.ifPresent(dir -> jvm.add(flightRecording(dir, name)));
    List<String> args =
        new ArrayList<>(
            List.of(
                kind.name(), bootstrapServers, applicationId, stateDir.toString(), input, output));
    overrides.forEach((key, value) -> args.add(key + "=" + value));
    ChildJvm child =
        ChildJvm.start(
            name, jvm, AppUnderTest.class, args, workDir.resolve("logs").resolve(name + ".log"));
    long startupMs = Long.parseLong(child.await("READY", START_TIMEOUT));
    App app = new App(kind, child, applicationId, input, stateDir, startupMs);
    apps.add(app);
    return app;
  }

  /** Stops an application; it closes its Kafka Streams instance cleanly. */
  void stop(App app) {
    app.jvm().close();
    apps.remove(app);
  }

  /** Requests the application has not yet committed as processed (0 once it is caught up). */
  long lag(App app) {
    Map<TopicPartition, OffsetAndMetadata> committed =
        await(admin.listConsumerGroupOffsets(app.applicationId()).partitionsToOffsetAndMetadata());
    Map<TopicPartition, Long> ends = endOffsets(app.input());
    long lag = 0;
    for (Map.Entry<TopicPartition, Long> end : ends.entrySet()) {
      OffsetAndMetadata done = committed.get(end.getKey());
      lag += end.getValue() - (done == null ? 0 : done.offset());
    }
    return lag;
  }

  /** The sum of the end offsets of a topic's partitions. */
  long endOffsetSum(String topic) {
    return endOffsets(topic).values().stream().mapToLong(Long::longValue).sum();
  }

  /** The bytes a topic's log segments take on the broker (one replica: a single broker). */
  long topicBytes(String topic) {
    List<Integer> brokers =
        await(admin.describeCluster().nodes()).stream().map(node -> node.id()).toList();
    long bytes = 0;
    for (var dirs : await(admin.describeLogDirs(brokers).allDescriptions()).values()) {
      for (var dir : dirs.values()) {
        for (var replica : dir.replicaInfos().entrySet()) {
          if (replica.getKey().topic().equals(topic)) {
            bytes += replica.getValue().size();
          }
        }
      }
    }
    return bytes;
  }

  private Map<TopicPartition, Long> endOffsets(String topic) {
    int partitions =
        await(admin.describeTopics(List.of(topic)).allTopicNames()).get(topic).partitions().size();
    Map<TopicPartition, OffsetSpec> request = new java.util.HashMap<>();
    for (int p = 0; p < partitions; p++) {
      request.put(new TopicPartition(topic, p), OffsetSpec.latest());
    }
    Map<TopicPartition, ListOffsetsResultInfo> result = await(admin.listOffsets(request).all());
    return result.entrySet().stream()
        .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().offset()));
  }

  private static <T> T await(org.apache.kafka.common.KafkaFuture<T> future) {
    try {
      return future.get();
    } catch (ExecutionException e) {
      throw new IllegalStateException("Kafka admin request failed: " + e.getCause(), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  /** Extra options for the applications' JVMs, from {@value #APP_JVM_OPTS_VARIABLE}. */
  static List<String> extraAppOptions() {
    return extraOptions(APP_JVM_OPTS_VARIABLE);
  }

  /** Extra options for the broker's JVM, from {@value #BROKER_JVM_OPTS_VARIABLE}. */
  static List<String> extraBrokerOptions() {
    return extraOptions(BROKER_JVM_OPTS_VARIABLE);
  }

  private static List<String> extraOptions(String variable) {
    String extra = System.getenv(variable);
    return extra == null || extra.isBlank() ? List.of() : List.of(extra.trim().split("\\s+"));
  }

  private static String flightRecording(Path dir, String name) {
    return "-XX:StartFlightRecording=settings=profile,dumponexit=true,filename="
        + dir.resolve(name + ".jfr");
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("no free port", e);
    }
  }

  @Override
  public void close() {
    for (App app : List.copyOf(apps)) {
      stop(app);
    }
    producer.close();
    admin.close();
    broker.close();
  }
}

package dev.kdelay.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.service.cli.CommandLine;
import dev.kdelay.service.config.ConfigSources;
import dev.kdelay.service.config.ServiceConfig;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.io.TempDir;

/**
 * The service, its HTTP API and the CLI against a broker that requires SASL/PLAIN, a cluster of its
 * own since the shared one is PLAINTEXT: credentials passed as {@code DELAY_KAFKA_*} variables or
 * in the {@code --config} file reach every client kdelay creates, and without them, or with a wrong
 * password, kdelay fails within a bound and says why.
 */
@Tag("integration")
class SaslIT {

  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
  private static final Duration FIRE_TIMEOUT = Duration.ofSeconds(60);

  /** How long a failing start or CLI command may take: well above its own timeouts. */
  private static final Duration FAILURE_BOUND = Duration.ofSeconds(40);

  private static KraftTestKitCluster kafka;

  @TempDir Path dir;

  private final List<AutoCloseable> resources = new ArrayList<>();
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();
  private String name;

  @BeforeAll
  static void startSaslCluster() throws Exception {
    kafka = KraftTestKitCluster.startWithSasl();
  }

  @AfterAll
  static void stopSaslCluster() throws Exception {
    if (kafka != null) {
      kafka.close();
    }
  }

  @BeforeEach
  void name(TestInfo test) {
    name = "sasl-" + UUID.randomUUID().toString().substring(0, 8);
  }

  @AfterEach
  void tearDown() throws Exception {
    for (int i = resources.size() - 1; i >= 0; i--) {
      resources.get(i).close();
    }
  }

  @Test
  void shouldFireWhatTheCliAndTheHttpApiScheduleWhenCredentialsArePassedThrough() throws Exception {
    // given: the service with credentials from DELAY_KAFKA_* variables
    String target = createTopic(name + "-target");
    Map<String, String> environment =
        serviceEnvironment(credentials(KraftTestKitCluster.SASL_PASSWORD));
    int httpPort = freePort();
    environment.put("DELAY_HTTP_PORT", Integer.toString(httpPort));
    environment.put("DELAY_HTTP_ADVERTISED_HOST", "127.0.0.1");
    DelayService service = service(environment);
    service.start(Optional.of(START_TIMEOUT));

    // when: the CLI schedules with credentials from its --config file, for the producer only
    Path file = dir.resolve("kdelay.properties");
    Files.writeString(
        file,
        "security.protocol=SASL_PLAINTEXT\n"
            + "sasl.mechanism=PLAIN\n"
            + "producer.sasl.jaas.config="
            + KraftTestKitCluster.plainJaasConfig(
                KraftTestKitCluster.SASL_USER, KraftTestKitCluster.SASL_PASSWORD)
            + "\n");
    int cliCode =
        main(
            Map.of(),
            "schedule",
            "--config",
            file.toString(),
            "--bootstrap-servers",
            kafka.bootstrapServers(),
            "--requests-topic",
            name + "-requests",
            "--id",
            "from-cli",
            "--target",
            target,
            "--after",
            "500ms",
            "cli-payload");
    // and the HTTP API schedules through its own producer
    HttpResponse<String> posted =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/schedules"))
                    .header("Content-Type", "application/json")
                    .timeout(Duration.ofSeconds(20))
                    .POST(
                        HttpRequest.BodyPublishers.ofString(
                            "{\"id\":\"from-http\",\"targetTopic\":\""
                                + target
                                + "\",\"after\":\"PT0.5S\",\"payload\":\"http-payload\"}"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());

    // then
    assertThat(cliCode).as(text(err)).isEqualTo(CommandLine.OK);
    assertThat(posted.statusCode()).as(posted.body()).isEqualTo(202);
    assertThat(readValues(target, 2)).containsExactlyInAnyOrder("cli-payload", "http-payload");
  }

  @Test
  void shouldFailFastAndSayAuthenticationFailedWhenThePasswordIsWrong() {
    Map<String, String> wrong = credentials("not-the-password");
    DelayService service = service(serviceEnvironment(wrong));

    long started = System.nanoTime();
    assertThatThrownBy(() -> service.start(Optional.of(START_TIMEOUT)))
        .hasMessageContaining("Authentication failed");
    assertThat(elapsed(started)).isLessThan(FAILURE_BOUND);

    started = System.nanoTime();
    int code = schedule(wrong);
    assertThat(elapsed(started)).isLessThan(FAILURE_BOUND);
    assertThat(code).isEqualTo(CommandLine.FAILED);
    assertThat(text(err)).contains("Authentication failed").doesNotContain("not-the-password");
  }

  @Test
  void shouldFailWithinItsTimeoutsWhenNoCredentialsAreGiven() {
    // A PLAINTEXT client gets no error from a SASL listener, only closed connections: only the
    // timeouts can end its wait, so they must be there.
    Map<String, String> environment = serviceEnvironment(Map.of());
    environment.put("DELAY_TOPIC_READY_TIMEOUT_MS", "3000");
    DelayService service = service(environment);

    long started = System.nanoTime();
    assertThatThrownBy(() -> service.start(Optional.of(START_TIMEOUT)))
        .isInstanceOf(DelayServiceException.class)
        .hasMessageContaining("security.protocol")
        .hasMessageContaining(ServiceConfig.TOPIC_READY_TIMEOUT_CONFIG);
    assertThat(elapsed(started)).isLessThan(FAILURE_BOUND);

    started = System.nanoTime();
    int code = schedule(Map.of());
    assertThat(elapsed(started)).isLessThan(FAILURE_BOUND);
    assertThat(code).isEqualTo(CommandLine.FAILED);
    assertThat(text(err)).contains("kdelay schedule:", "security.protocol");
  }

  private static Map<String, String> credentials(String password) {
    return Map.of(
        "DELAY_KAFKA_SECURITY_PROTOCOL", "SASL_PLAINTEXT",
        "DELAY_KAFKA_SASL_MECHANISM", "PLAIN",
        "DELAY_KAFKA_SASL_JAAS_CONFIG",
            KraftTestKitCluster.plainJaasConfig(KraftTestKitCluster.SASL_USER, password));
  }

  private Map<String, String> serviceEnvironment(Map<String, String> security) {
    Map<String, String> environment = new HashMap<>(security);
    environment.put("DELAY_BOOTSTRAP_SERVERS", kafka.bootstrapServers());
    environment.put("DELAY_APPLICATION_ID", "kdelay-" + name);
    environment.put("DELAY_STATE_DIR", dir.resolve("state").toString());
    environment.put("DELAY_REQUESTS_TOPIC", name + "-requests");
    environment.put("DELAY_DLQ_TOPIC", name + "-dlq");
    environment.put("DELAY_TOPIC_PARTITIONS", "2");
    return environment;
  }

  private DelayService service(Map<String, String> environment) {
    DelayService service = new DelayService(ConfigSources.load(Optional.empty(), environment));
    resources.add(service);
    return service;
  }

  /** {@code kdelay schedule} with the given variables, against the SASL cluster. */
  private int schedule(Map<String, String> security) {
    Map<String, String> environment = new HashMap<>(security);
    environment.put("DELAY_BOOTSTRAP_SERVERS", kafka.bootstrapServers());
    environment.put("DELAY_REQUESTS_TOPIC", name + "-requests");
    return main(environment, "schedule", "--id", "x", "--target", "t", "--after", "1s", "payload");
  }

  private int main(Map<String, String> environment, String... args) {
    return new Main(
            environment,
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8))
        .execute(List.of(args));
  }

  private static Map<String, Object> clientProperties() {
    Map<String, Object> props = new HashMap<>();
    props.put("bootstrap.servers", kafka.bootstrapServers());
    props.put("security.protocol", "SASL_PLAINTEXT");
    props.put("sasl.mechanism", "PLAIN");
    props.put(
        "sasl.jaas.config",
        KraftTestKitCluster.plainJaasConfig(
            KraftTestKitCluster.SASL_USER, KraftTestKitCluster.SASL_PASSWORD));
    return props;
  }

  private static String createTopic(String topic) throws Exception {
    try (Admin admin = Admin.create(clientProperties())) {
      admin
          .createTopics(List.of(new NewTopic(topic, 1, (short) 1)))
          .all()
          .get(30, TimeUnit.SECONDS);
    }
    return topic;
  }

  /** The values of the first {@code count} committed records of the topic. */
  private static List<String> readValues(String topic, int count) {
    Map<String, Object> props = clientProperties();
    props.put("isolation.level", "read_committed");
    List<String> values = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
      TopicPartition partition = new TopicPartition(topic, 0);
      consumer.assign(List.of(partition));
      consumer.seekToBeginning(List.of(partition));
      long deadline = System.nanoTime() + FIRE_TIMEOUT.toNanos();
      while (values.size() < count) {
        assertThat(System.nanoTime())
            .as("%d records on %s within %s; got %s", count, topic, FIRE_TIMEOUT, values)
            .isLessThan(deadline);
        for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
          values.add(record.value());
        }
      }
    }
    return values;
  }

  private static Duration elapsed(long startedNanos) {
    return Duration.ofNanos(System.nanoTime() - startedNanos);
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  private static String text(ByteArrayOutputStream stream) {
    return stream.toString(StandardCharsets.UTF_8);
  }
}

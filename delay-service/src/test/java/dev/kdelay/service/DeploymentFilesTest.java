package dev.kdelay.service;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.kdelay.schemas.Action;
import dev.kdelay.schemas.RejectionReason;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Keeps the docker-compose deployment valid where no Docker engine runs: the compose file parses
 * and has its services and ports, every file it and the files it mounts refer to exists, and every
 * metric the dashboard and the alerts query is one the service registers.
 */
class DeploymentFilesTest {

  private static final List<String> BROKERS = List.of("kafka-1", "kafka-2", "kafka-3");

  private static final List<String> REPLICAS = List.of("kdelay-1", "kdelay-2", "kdelay-3");

  /** Compose's {@code ${NAME:-default}}: an image CI may substitute, the public one by default. */
  private static final Pattern SUBSTITUTABLE = Pattern.compile("\\$\\{[A-Z_]+:-([^}]+)}");

  /** Compose's {@code ${NAME:?message}}: fails when NAME is unset or empty, has no default. */
  private static final String REQUIRED_VARIABLE = "\\$\\{[A-Z_]+:\\?[^}]+}";

  private static final Pattern METRIC = Pattern.compile("\\b((?:kdelay|jvm|process)_[a-z0-9_]+)");

  private final YAMLMapper yaml = new YAMLMapper();
  private final Path root = RepositoryFiles.root();
  private final JsonNode compose = read(root.resolve("docker-compose.yml"));
  private final JsonNode services = compose.path("services");

  @Test
  void shouldDefineThreeBrokersThreeReplicasPrometheusAndGrafana() {
    assertThat(names(services))
        .containsExactlyInAnyOrder(
            "kafka-1",
            "kafka-2",
            "kafka-3",
            "kdelay-1",
            "kdelay-2",
            "kdelay-3",
            "prometheus",
            "grafana");
    for (Map.Entry<String, JsonNode> service : services.properties()) {
      assertThat(service.getValue().path("image").asText())
          .as("image of %s", service.getKey())
          .isNotBlank();
    }
  }

  @Test
  void shouldRunThreeKafkaBrokersInKRaftModeFromTheOfficialImageByDefault() {
    Set<String> clusterIds = new HashSet<>();
    Set<Integer> hostPorts = new HashSet<>();
    for (String broker : BROKERS) {
      JsonNode kafka = services.path(broker);
      JsonNode env = kafka.path("environment");

      assertThat(publicDefault(kafka.path("image").asText())).startsWith("apache/kafka:");
      assertThat(env.path("KAFKA_PROCESS_ROLES").asText()).contains("broker", "controller");
      assertThat(env.path("KAFKA_CONTROLLER_QUORUM_VOTERS").asText())
          .contains("kafka-1:9093", "kafka-2:9093", "kafka-3:9093");
      assertThat(env.path("KAFKA_DEFAULT_REPLICATION_FACTOR").asText()).isEqualTo("3");
      assertThat(env.path("KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR").asText())
          .isEqualTo("3");
      assertThat(env.path("KAFKA_MIN_INSYNC_REPLICAS").asText()).isEqualTo("2");
      assertThat(kafka.path("healthcheck").path("test").toString()).contains(broker + ":19092");
      clusterIds.add(env.path("CLUSTER_ID").asText());
      hostPorts.addAll(ports(kafka).keySet());
    }
    assertThat(clusterIds).hasSize(1).doesNotContain("");
    assertThat(ports(services.path("kafka-1"))).containsEntry(9092, 9092);
    assertThat(hostPorts).hasSize(BROKERS.size());
  }

  @Test
  void shouldBuildEveryReplicaFromTheRepositoryAndShareOneApplication() throws IOException {
    Set<String> applications = new HashSet<>();
    Set<Integer> hostPorts = new HashSet<>();
    StringBuilder advertisedListeners = new StringBuilder();
    for (String broker : BROKERS) {
      advertisedListeners
          .append(
              services.path(broker).path("environment").path("KAFKA_ADVERTISED_LISTENERS").asText())
          .append(',');
    }
    for (String replica : REPLICAS) {
      JsonNode service = services.path(replica);
      JsonNode env = service.path("environment");
      Path dockerfile =
          root.resolve(service.path("build").path("context").asText())
              .resolve(service.path("build").path("dockerfile").asText());

      assertThat(dockerfile).as("Dockerfile of %s", replica).isRegularFile();
      assertThat(env.path("DELAY_HTTP_ADVERTISED_HOST").asText()).isEqualTo(replica);
      assertThat(env.path("DELAY_BOOTSTRAP_SERVERS").asText().split(","))
          .hasSize(BROKERS.size())
          .allSatisfy(server -> assertThat(advertisedListeners).contains("//" + server + ","));
      assertThat(env.path("DELAY_TOPIC_REPLICATION_FACTOR").asText()).isEqualTo("3");
      assertThat(publicDefault(service.path("build").path("args").path("JRE_IMAGE").asText()))
          .startsWith("eclipse-temurin:17");
      int httpPort = Integer.parseInt(env.path("DELAY_HTTP_PORT").asText());
      Map<Integer, Integer> ports = ports(service);
      assertThat(ports).as("ports of %s", replica).containsValue(httpPort).hasSize(1);
      hostPorts.addAll(ports.keySet());
      applications.add(env.path("DELAY_APPLICATION_ID").asText());
      for (String broker : BROKERS) {
        assertThat(service.path("depends_on").path(broker).path("condition").asText())
            .isEqualTo("service_healthy");
      }
    }
    assertThat(applications).hasSize(1);
    assertThat(hostPorts).hasSize(REPLICAS.size());
    // The image runs the jar the build makes, as a user other than root, and says when it is ready.
    String dockerfile = Files.readString(root.resolve("Dockerfile"));
    assertThat(dockerfile)
        .contains(
            "ARG JRE_IMAGE=eclipse-temurin:17",
            "FROM ${JRE_IMAGE}",
            "COPY delay-service/target/delay-service.jar",
            "USER kdelay",
            "HEALTHCHECK",
            "/health/ready");
    assertThat(Files.readAllLines(root.resolve(".dockerignore")))
        .contains("!delay-service/target/delay-service.jar");
    assertThat(Files.readString(root.resolve("delay-service/pom.xml")))
        .contains("<finalName>delay-service</finalName>");
  }

  @Test
  void shouldMountOnlyFilesThatExist() {
    for (Map.Entry<String, JsonNode> service : services.properties()) {
      for (JsonNode volume : service.getValue().path("volumes")) {
        String source = volume.asText().split(":")[0];
        if (source.startsWith(".")) {
          assertThat(root.resolve(source)).as("mount of %s", service.getKey()).exists();
        } else {
          assertThat(compose.path("volumes").has(source))
              .as("named volume %s of %s", source, service.getKey())
              .isTrue();
        }
      }
    }
  }

  @Test
  void shouldScrapeEveryReplicaAtItsMetricsPort() {
    JsonNode prometheus = read(hostFile("prometheus", "/etc/prometheus/prometheus.yml"));
    JsonNode job = prometheus.path("scrape_configs").get(0);
    List<String> targets = new ArrayList<>();
    job.path("static_configs")
        .forEach(c -> c.path("targets").forEach(t -> targets.add(t.asText())));

    assertThat(job.path("metrics_path").asText()).isEqualTo("/metrics");
    assertThat(targets)
        .containsExactlyInAnyOrderElementsOf(
            REPLICAS.stream()
                .map(
                    r ->
                        r
                            + ":"
                            + services.path(r).path("environment").path("DELAY_HTTP_PORT").asText())
                .toList());
    for (JsonNode rules : prometheus.path("rule_files")) {
      assertThat(hostFile("prometheus", rules.asText())).isRegularFile();
    }
  }

  @Test
  void shouldProvisionGrafanaWithPrometheusAndTheDashboard() throws IOException {
    Path provisioning = hostFile("grafana", "/etc/grafana/provisioning");
    JsonNode datasource =
        read(provisioning.resolve("datasources/prometheus.yml")).path("datasources").get(0);
    JsonNode provider =
        read(provisioning.resolve("dashboards/kdelay.yml")).path("providers").get(0);
    Path dashboards = hostFile("grafana", provider.path("options").path("path").asText());

    assertThat(datasource.path("type").asText()).isEqualTo("prometheus");
    assertThat(datasource.path("url").asText())
        .isEqualTo(
            "http://prometheus:" + ports(services.path("prometheus")).values().iterator().next());
    try (Stream<Path> files = Files.list(dashboards)) {
      assertThat(files.map(p -> p.getFileName().toString())).contains("kdelay.json");
    }
    JsonNode dashboard = new ObjectMapper().readTree(dashboards.resolve("kdelay.json").toFile());
    List<String> titles = new ArrayList<>();
    dashboard.path("panels").forEach(panel -> titles.add(panel.path("title").asText()));
    assertThat(titles)
        .contains(
            "Fire rate",
            "Lateness percentiles (due to fired)",
            "Pending and paused",
            "Rejections by reason",
            "Oldest overdue task age");
    dashboard
        .path("panels")
        .forEach(
            panel ->
                assertThat(panel.path("datasource").path("uid").asText())
                    .isEqualTo(datasource.path("uid").asText()));
  }

  @Test
  void shouldQueryOnlyMetricsTheServiceRegisters() throws IOException {
    // given: every series name a scrape of the service shows
    Set<String> registered = registeredSeries();

    // when: the metric names in the dashboard's and the alerts' queries
    Set<String> queried = new TreeSet<>();
    JsonNode dashboard =
        new ObjectMapper()
            .readTree(root.resolve("monitoring/grafana/dashboards/kdelay.json").toFile());
    dashboard
        .path("panels")
        .forEach(
            p -> p.path("targets").forEach(t -> queried.addAll(metrics(t.path("expr").asText()))));
    read(root.resolve("monitoring/prometheus/alerts.yml"))
        .path("groups")
        .forEach(
            g -> g.path("rules").forEach(r -> queried.addAll(metrics(r.path("expr").asText()))));

    // then
    assertThat(queried).contains("kdelay_tasks_fired_total", "kdelay_fire_lateness_seconds_bucket");
    assertThat(registered).containsAll(queried);
  }

  private static Set<String> registeredSeries() {
    ServiceMetrics metrics = new ServiceMetrics(Clock.systemUTC(), () -> 0);
    try {
      metrics.requestApplied(Action.SCHEDULE);
      metrics.requestRejected(Action.SCHEDULE, RejectionReason.BAD_TIME);
      metrics.taskFired(5);
      metrics.punctuated(1_000_000, 1);
      Set<String> names = new HashSet<>();
      for (String line : metrics.scrape().split("\n")) {
        if (!line.startsWith("#") && !line.isBlank()) {
          names.add(line.split("[{ ]")[0]);
        }
      }
      return names;
    } finally {
      metrics.close();
    }
  }

  private static Set<String> metrics(String expression) {
    Set<String> names = new HashSet<>();
    Matcher matcher = METRIC.matcher(expression);
    while (matcher.find()) {
      names.add(matcher.group(1));
    }
    return names;
  }

  @Test
  void shouldPublishEveryPortOnLoopbackOnly() {
    for (Map.Entry<String, JsonNode> service : services.properties()) {
      for (JsonNode port : service.getValue().path("ports")) {
        // Without a host address Docker publishes on every interface, firewall rules bypassed.
        assertThat(port.asText()).as("port of %s", service.getKey()).startsWith("127.0.0.1:");
      }
    }
  }

  @Test
  void shouldTakeSecretsFromTheEnvFileWithNoWorkingDefault() throws IOException {
    String grafanaPassword =
        services.path("grafana").path("environment").path("GF_SECURITY_ADMIN_PASSWORD").asText();
    String tokensFile = compose.path("secrets").path("kdelay-http-tokens").path("file").asText();

    assertThat(grafanaPassword).matches(REQUIRED_VARIABLE).contains("GRAFANA_ADMIN_PASSWORD");
    assertThat(tokensFile).matches(REQUIRED_VARIABLE).contains("KDELAY_HTTP_TOKENS_FILE");
    // The example names every variable but gives none a value that works.
    Map<String, String> example = new HashMap<>();
    for (String line : Files.readAllLines(root.resolve(".env.example"))) {
      if (!line.isBlank() && !line.startsWith("#")) {
        String[] assignment = line.split("=", 2);
        example.put(assignment[0].trim(), assignment[1].trim());
      }
    }
    assertThat(example)
        .containsOnlyKeys("GRAFANA_ADMIN_PASSWORD", "KDELAY_HTTP_TOKENS_FILE")
        .allSatisfy((name, value) -> assertThat(value).as(name).isEmpty());
    assertThat(Files.readAllLines(root.resolve(".gitignore"))).contains(".env");
  }

  @Test
  void shouldBindEveryReplicaBeyondLoopbackOnlyWithTokens() {
    for (String replica : REPLICAS) {
      JsonNode service = services.path(replica);
      JsonNode env = service.path("environment");

      assertThat(env.path("DELAY_HTTP_BIND_ADDRESS").asText()).isEqualTo("0.0.0.0");
      assertThat(env.path("DELAY_HTTP_AUTH_TOKENS_FILE").asText())
          .isEqualTo("/run/secrets/kdelay-http-tokens");
      assertThat(service.path("secrets").toString()).contains("kdelay-http-tokens");
    }
  }

  @Test
  void shouldLetTheBrokerAbortDeadTransactionsWithinASecond() {
    for (String broker : BROKERS) {
      assertThat(
              services
                  .path(broker)
                  .path("environment")
                  .path("KAFKA_TRANSACTION_ABORT_TIMED_OUT_TRANSACTION_CLEANUP_INTERVAL_MS")
                  .asText())
          .as(broker)
          .isEqualTo("1000");
    }
  }

  @Test
  void shouldLetTheBrokerWaitForThePreviousTransactionsMarkersItself() {
    for (String broker : BROKERS) {
      JsonNode environment = services.path(broker).path("environment");
      assertThat(environment.path("KAFKA_ADD_PARTITIONS_TO_TXN_RETRY_BACKOFF_MS").asText())
          .isEqualTo("5");
      assertThat(environment.path("KAFKA_ADD_PARTITIONS_TO_TXN_RETRY_BACKOFF_MAX_MS").asText())
          .isEqualTo("1000");
    }
  }

  /** The file on the host a service's container sees at a path, through its bind mounts. */
  private Path hostFile(String service, String containerPath) {
    for (JsonNode volume : services.path(service).path("volumes")) {
      String[] parts = volume.asText().split(":");
      if (parts[0].startsWith(".") && containerPath.startsWith(parts[1])) {
        return root.resolve(parts[0])
            .resolve(containerPath.substring(parts[1].length()).replaceFirst("^/", ""));
      }
    }
    throw new AssertionError(service + " mounts nothing at " + containerPath);
  }

  /** The image a {@code ${NAME:-default}} names when NAME is unset; a plain name as it is. */
  private static String publicDefault(String image) {
    Matcher matcher = SUBSTITUTABLE.matcher(image);
    return matcher.matches() ? matcher.group(1) : image;
  }

  /** Published ports, {@code [HOST_IP:]HOST_PORT:CONTAINER_PORT}: host port to container port. */
  private static Map<Integer, Integer> ports(JsonNode service) {
    Map<Integer, Integer> ports = new HashMap<>();
    for (JsonNode port : service.path("ports")) {
      String[] parts = port.asText().split(":");
      int host = parts.length - 2;
      ports.put(Integer.parseInt(parts[host]), Integer.parseInt(parts[host + 1]));
    }
    return ports;
  }

  private static Set<String> names(JsonNode object) {
    Set<String> names = new TreeSet<>();
    object.properties().forEach(property -> names.add(property.getKey()));
    return names;
  }

  private JsonNode read(Path file) {
    try {
      return yaml.readTree(file.toFile());
    } catch (IOException e) {
      throw new AssertionError("cannot parse " + file + ": " + e.getMessage(), e);
    }
  }
}

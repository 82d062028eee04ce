package dev.kdelay.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kdelay.service.DelayService;
import dev.kdelay.service.KafkaClusterExtension;
import dev.kdelay.service.KafkaTestCluster;
import dev.kdelay.service.config.ServiceConfig;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Predicate;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Two instances serving HTTPS from one PKCS12 keystore made with keytool, with tokens: callers are
 * served over HTTPS only, and the instances forward reads to each other over HTTPS, checking each
 * other's certificate.
 */
@Tag("integration")
@ExtendWith(KafkaClusterExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HttpsIT {

  private static final Duration START_TIMEOUT = Duration.ofSeconds(90);
  private static final Duration TIMEOUT = Duration.ofSeconds(60);
  private static final int PARTITIONS = 4;
  private static final String PASSWORD = "keystore-" + UUID.randomUUID();
  private static final String WRITE = "write-" + UUID.randomUUID();
  private static final String PEER = "peer-" + UUID.randomUUID();

  private final List<AutoCloseable> resources = new ArrayList<>();
  private HttpClient https;
  private String name;
  private String target;
  private List<Integer> ports;

  @BeforeAll
  void startTwoInstancesOverHttps(KafkaTestCluster kafka) throws Exception {
    name = "https-" + UUID.randomUUID().toString().substring(0, 8);
    target = name + "-target";
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.bootstrapServers()))) {
      admin.createTopics(List.of(new NewTopic(target, 2, (short) 1))).all().get();
    }
    Path dir = Files.createTempDirectory("kdelay-https-it");
    resources.add(() -> HttpProbes.deleteRecursively(dir));
    Path keystore = TestKeystores.keystore(dir, "kdelay", PASSWORD);
    Path tokens = Files.writeString(dir.resolve("tokens"), "write " + WRITE + "\npeer " + PEER);
    https =
        HttpClient.newBuilder()
            .sslContext(HttpsKeys.read(keystore, PASSWORD, Optional.empty(), "").clientContext())
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    Map<String, Object> secured =
        Map.of(
            ServiceConfig.HTTP_TLS_KEYSTORE_FILE_CONFIG,
            keystore.toString(),
            ServiceConfig.HTTP_TLS_KEYSTORE_PASSWORD_CONFIG,
            PASSWORD,
            ServiceConfig.HTTP_AUTH_TOKENS_FILE_CONFIG,
            tokens.toString());
    List<DelayService> instances = new ArrayList<>();
    for (String instance : List.of("a", "b")) {
      instances.add(
          HttpInstances.create(
              kafka.bootstrapServers(),
              name,
              PARTITIONS,
              "kdelay-it-" + name,
              Files.createTempDirectory("kdelay-https-it-" + instance),
              secured,
              resources));
    }
    for (DelayService instance : instances) {
      instance.start(Optional.of(START_TIMEOUT));
    }
    ports = instances.stream().map(instance -> instance.httpPort().orElseThrow()).toList();
    for (int port : ports) {
      await(() -> get(url(port, "/schedules?limit=1")), r -> r.statusCode() == 200);
    }
  }

  @AfterAll
  void stop() throws Exception {
    for (int i = resources.size() - 1; i >= 0; i--) {
      resources.get(i).close();
    }
  }

  @Test
  void shouldScheduleOnOneInstanceAndReadItThroughTheOtherOverHttps() throws Exception {
    // given: one schedule per partition, or near enough, each written through either instance
    Set<String> ids = new HashSet<>();
    for (int i = 0; i < 8; i++) {
      String id = "tls-" + i + "-" + UUID.randomUUID();
      ids.add(id);
      HttpResponse<String> accepted = post(url(ports.get(i % 2), "/schedules"), schedule(id));
      assertThat(accepted.statusCode()).as(accepted.body()).isEqualTo(202);
    }

    // when: each id read through the instance that did not write it, which may forward
    // then: found, wherever its partition is
    int i = 0;
    for (String id : ids) {
      int other = ports.get((i++ + 1) % 2);
      await(() -> get(url(other, "/schedules/" + id)), r -> r.statusCode() == 200);
    }
    // and: each instance's listing, which asks the other over HTTPS, shows them all
    for (int port : ports) {
      JsonNode page = ApiResponse.MAPPER.readTree(get(url(port, "/schedules?limit=1000")).body());
      Set<String> listed = new HashSet<>();
      page.path("tasks").forEach(task -> listed.add(task.path("id").asText()));
      assertThat(listed).containsAll(ids);
    }
  }

  @Test
  void shouldNotServePlainHttpOnTheHttpsPort() throws Exception {
    HttpClient plain = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    URI uri = URI.create("http://127.0.0.1:" + ports.get(0) + "/health/live");

    int status;
    try {
      status =
          plain
              .send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString())
              .statusCode();
    } catch (IOException closed) {
      status = -1;
    }

    assertThat(status).isNotEqualTo(200);
    assertThat(get(url(ports.get(0), "/health/live")).statusCode()).isEqualTo(200);
  }

  private String schedule(String id) {
    return "{\"id\":\""
        + id
        + "\",\"targetTopic\":\""
        + target
        + "\",\"after\":\"PT1H\",\"payload\":\"p\"}";
  }

  private static URI url(int port, String path) {
    return URI.create("https://localhost:" + port + path);
  }

  private HttpResponse<String> get(URI uri) throws IOException, InterruptedException {
    return https.send(
        HttpRequest.newBuilder(uri)
            .timeout(Duration.ofSeconds(20))
            .header("Authorization", "Bearer " + WRITE)
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> post(URI uri, String body) throws IOException, InterruptedException {
    return https.send(
        HttpRequest.newBuilder(uri)
            .timeout(Duration.ofSeconds(20))
            .header("Authorization", "Bearer " + WRITE)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static <T> T await(HttpProbes.Probe<T> probe, Predicate<T> condition) throws Exception {
    return HttpProbes.await(TIMEOUT, probe, condition);
  }
}

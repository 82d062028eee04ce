package dev.kdelay.service.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.service.DelayService;
import dev.kdelay.service.KafkaClusterExtension;
import dev.kdelay.service.KafkaTestCluster;
import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.topology.DelayConfig;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Predicate;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 13 over a real broker: two instances with tokens that forward reads to each other, every
 * route with no, a bad, a read and a write token; cross-site writes refused before anything reaches
 * the request topic; where the endpoint may listen.
 */
@Tag("integration")
@ExtendWith(KafkaClusterExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HttpSecurityIT {

  private static final Duration START_TIMEOUT = Duration.ofSeconds(90);
  private static final Duration TIMEOUT = Duration.ofSeconds(60);
  private static final int PARTITIONS = 4;
  private static final String READ = "read-" + UUID.randomUUID();
  private static final String WRITE = "write-" + UUID.randomUUID();
  private static final String PEER = "peer-" + UUID.randomUUID();
  private static final String CONSOLE = "https://console.example";

  /** The credentials a caller may present: the header value, or none. */
  private enum Caller {
    NONE(null),
    BAD("Bearer not-a-token"),
    READER("Bearer " + READ),
    PEER_TOKEN("Bearer " + PEER),
    WRITER("Bearer " + WRITE);

    final String authorization;

    Caller(String authorization) {
      this.authorization = authorization;
    }
  }

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final List<AutoCloseable> resources = new ArrayList<>();
  private String bootstrapServers;
  private String name;
  private String target;
  private Path tokens;
  private List<String> urls;

  @BeforeAll
  void startTwoInstancesWithTokens(KafkaTestCluster kafka) throws Exception {
    bootstrapServers = kafka.bootstrapServers();
    name = "secure-" + UUID.randomUUID().toString().substring(0, 8);
    target = name + "-target";
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrapServers))) {
      admin.createTopics(List.of(new NewTopic(target, 2, (short) 1))).all().get();
    }
    Path dir = Files.createTempDirectory("kdelay-tokens");
    resources.add(() -> HttpProbes.deleteRecursively(dir));
    tokens =
        Files.writeString(
            dir.resolve("tokens"),
            "# kdelay tokens\n\nread sha256:"
                + HexFormat.of().formatHex(AccessTokens.sha256(READ))
                + "\nwrite "
                + WRITE
                + "\npeer "
                + PEER
                + "\n");
    Map<String, Object> secured =
        Map.of(
            ServiceConfig.HTTP_AUTH_TOKENS_FILE_CONFIG,
            tokens.toString(),
            ServiceConfig.HTTP_ALLOWED_ORIGINS_CONFIG,
            CONSOLE);
    DelayService first = create("a", "kdelay-it-" + name, secured);
    DelayService second = create("b", "kdelay-it-" + name, secured);
    first.start(Optional.of(START_TIMEOUT));
    second.start(Optional.of(START_TIMEOUT));
    urls =
        List.of(
            "http://127.0.0.1:" + first.httpPort().orElseThrow(),
            "http://127.0.0.1:" + second.httpPort().orElseThrow());
    for (String url : urls) {
      await(() -> get(url + "/health/ready", Caller.NONE), r -> r.statusCode() == 200);
    }
    // Every partition readable from each: the listing asks the other instance.
    for (String url : urls) {
      await(() -> get(url + "/schedules?limit=1", Caller.READER), r -> r.statusCode() == 200);
    }
  }

  @AfterAll
  void stop() throws Exception {
    for (int i = resources.size() - 1; i >= 0; i--) {
      resources.get(i).close();
    }
  }

  @Test
  void shouldAnswerEveryRouteByTheCallersRoleOnBothInstances() throws Exception {
    Set<String> refused = new HashSet<>();
    for (String url : urls) {
      for (Caller caller : Caller.values()) {
        String id = "route-" + UUID.randomUUID();
        if (caller != Caller.WRITER) {
          refused.add(id);
        }
        String anyId = "/schedules/" + id;
        boolean reads = caller == Caller.READER || caller == Caller.PEER_TOKEN;
        int read = reads || caller == Caller.WRITER ? 200 : 401;
        int write = caller == Caller.WRITER ? 202 : reads ? 403 : 401;
        String as = url + " as " + caller;

        assertThat(get(url + "/health/live", caller).statusCode()).as(as).isEqualTo(200);
        assertThat(get(url + "/health/ready", caller).statusCode()).as(as).isEqualTo(200);
        assertThat(get(url + "/metrics", caller).statusCode()).as(as).isEqualTo(200);
        assertThat(get(url + "/schedules?limit=5", caller).statusCode()).as(as).isEqualTo(read);
        assertThat(send(url + "/schedules", "POST", schedule(id), caller).statusCode())
            .as(as)
            .isEqualTo(write);
        if (caller == Caller.WRITER) {
          // Written through the request topic; the owner may be the other instance.
          await(() -> get(url + anyId, caller), r -> r.statusCode() == 200);
          assertThat(get(otherThan(url) + anyId, Caller.READER).statusCode()).isEqualTo(200);
        } else {
          HttpResponse<String> view = get(url + anyId, caller);
          assertThat(view.statusCode()).as(as).isEqualTo(read == 200 ? 404 : 401);
        }
        assertThat(send(url + anyId + "/pause", "POST", "", caller).statusCode())
            .as(as)
            .isEqualTo(write);
        assertThat(send(url + anyId + "/resume", "POST", "", caller).statusCode())
            .as(as)
            .isEqualTo(write);
        assertThat(send(url + anyId + "/trigger", "POST", "{}", caller).statusCode())
            .as(as)
            .isEqualTo(write);
        assertThat(
                send(url + anyId + "/reschedule", "POST", "{\"after\":\"1h\"}", caller)
                    .statusCode())
            .as(as)
            .isEqualTo(write);
        assertThat(send(url + anyId, "DELETE", "", caller).statusCode()).as(as).isEqualTo(write);
        assertThat(get(url + "/dead-letters?limit=1", caller).statusCode()).as(as).isEqualTo(read);
        int letter = get(url + "/dead-letters/0/0", caller).statusCode();
        if (read == 200) {
          // Past the access rules: whether that offset holds a dead letter is another matter.
          assertThat(letter).as(as).isIn(200, 404);
        } else {
          assertThat(letter).as(as).isEqualTo(401);
        }
        assertThat(get(url + "/overview", caller).statusCode()).as(as).isEqualTo(read);
        assertThat(
                get(url + "/cron/preview?cron=0%200%209%20*%20*%20%3F&zone=Europe/Berlin", caller)
                    .statusCode())
            .as(as)
            .isEqualTo(read);
        // The console's page holds no data: served to anyone who can reach the instance.
        assertThat(get(url + "/", caller).statusCode()).as(as).isEqualTo(200);
        int replay = send(url + "/dead-letters/0/0/replay", "POST", "{}", caller).statusCode();
        if (caller == Caller.WRITER) {
          // Past the access rules: whether there is a dead letter to replay is another matter.
          assertThat(replay).as(as).isIn(202, 404, 409);
        } else {
          assertThat(replay).as(as).isEqualTo(write);
        }
        HttpResponse<String> unauthenticated = get(url + anyId, caller);
        if (read == 401) {
          assertThat(unauthenticated.headers().firstValue("WWW-Authenticate"))
              .contains("Bearer realm=\"kdelay\"");
        }
      }
    }
    // No refused change reached the request topic, up to one accepted after them all.
    String marker = "route-marker-" + UUID.randomUUID();
    assertThat(
            send(urls.get(0) + "/schedules", "POST", schedule(marker), Caller.WRITER).statusCode())
        .isEqualTo(202);
    assertThat(requestKeysUpTo(marker)).doesNotContainAnyElementsOf(refused);
  }

  @Test
  void shouldIgnoreTheForwardedMarkerOfACallerWithoutAToken() throws Exception {
    for (String url : urls) {
      HttpResponse<String> response =
          http.send(
              HttpRequest.newBuilder(URI.create(url + "/schedules?limit=1"))
                  .header(ApiRequest.FORWARDED_HEADER, "true")
                  .timeout(Duration.ofSeconds(20))
                  .build(),
              HttpResponse.BodyHandlers.ofString());

      assertThat(response.statusCode()).isEqualTo(401);
    }
  }

  @Test
  void shouldRefuseCrossSiteWritesAndWriteNothingToTheRequestTopic() throws Exception {
    String url = urls.get(0);
    String plain = "plain-" + UUID.randomUUID();
    String bodiless = "bodiless-" + UUID.randomUUID();
    String foreign = "foreign-" + UUID.randomUUID();
    String marker = "marker-" + UUID.randomUUID();
    String curlDelete = "curl-delete-" + UUID.randomUUID();
    String foreignDelete = "foreign-delete-" + UUID.randomUUID();

    // when: a text/plain POST, a body-less POST without a type, a JSON POST from another origin;
    // a DELETE without a type, as curl sends it, and one from another origin
    HttpResponse<String> textPlain =
        http.send(
            request(url + "/schedules", Caller.WRITER)
                .header("Content-Type", "text/plain")
                .POST(HttpRequest.BodyPublishers.ofString(schedule(plain)))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    HttpResponse<String> noType =
        http.send(
            request(url + "/schedules/" + bodiless + "/pause", Caller.WRITER)
                .POST(HttpRequest.BodyPublishers.noBody())
                .build(),
            HttpResponse.BodyHandlers.ofString());
    HttpResponse<String> fromElsewhere =
        http.send(
            request(url + "/schedules", Caller.WRITER)
                .header("Content-Type", "application/json")
                .header("Origin", "https://evil.example")
                .POST(HttpRequest.BodyPublishers.ofString(schedule(foreign)))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    HttpResponse<String> plainDelete =
        http.send(
            request(url + "/schedules/" + curlDelete, Caller.WRITER).DELETE().build(),
            HttpResponse.BodyHandlers.ofString());
    HttpResponse<String> deleteFromElsewhere =
        http.send(
            request(url + "/schedules/" + foreignDelete, Caller.WRITER)
                .header("Origin", "https://evil.example")
                .DELETE()
                .build(),
            HttpResponse.BodyHandlers.ofString());
    HttpResponse<String> fromConsole =
        http.send(
            request(url + "/schedules", Caller.WRITER)
                .header("Content-Type", "application/json")
                .header("Origin", CONSOLE)
                .POST(HttpRequest.BodyPublishers.ofString(schedule(marker)))
                .build(),
            HttpResponse.BodyHandlers.ofString());

    // then
    assertThat(textPlain.statusCode()).as(textPlain.body()).isEqualTo(415);
    assertThat(noType.statusCode()).as(noType.body()).isEqualTo(415);
    assertThat(fromElsewhere.statusCode()).as(fromElsewhere.body()).isEqualTo(403);
    assertThat(plainDelete.statusCode()).as(plainDelete.body()).isEqualTo(202);
    assertThat(deleteFromElsewhere.statusCode()).as(deleteFromElsewhere.body()).isEqualTo(403);
    assertThat(fromConsole.statusCode()).as(fromConsole.body()).isEqualTo(202);
    // Everything up to the allowed request written last has been read: of the others, only the
    // plain DELETE's cancel is there.
    Set<String> written = requestKeysUpTo(marker);
    assertThat(written).doesNotContain(plain, bodiless, foreign, foreignDelete);
    assertThat(written).contains(curlDelete);
  }

  @Test
  void shouldAnswer422AtOnceWhenTheTargetTopicIsMissingOrRefused() throws Exception {
    String url = urls.get(1);

    HttpResponse<String> missing =
        send(
            url + "/schedules",
            "POST",
            schedule("m-" + UUID.randomUUID(), name + "-none"),
            Caller.WRITER);
    HttpResponse<String> own =
        send(
            url + "/schedules",
            "POST",
            schedule("o-" + UUID.randomUUID(), name + "-dlq"),
            Caller.WRITER);

    assertThat(missing.statusCode()).as(missing.body()).isEqualTo(422);
    assertThat(missing.body()).contains("UNKNOWN_TOPIC");
    assertThat(own.statusCode()).as(own.body()).isEqualTo(422);
    assertThat(own.body()).contains("TARGET_NOT_ALLOWED");
  }

  @Test
  void shouldServeLivenessWhileAClientSendsItsHeadersAByteASecond() throws Exception {
    URI uri = URI.create(urls.get(0));
    try (Socket slow = new Socket(uri.getHost(), uri.getPort())) {
      // given: a request line begun, the rest to come a byte a second
      slow.getOutputStream().write("GET /schedules HTTP/1.1\r\nAuthorization: Bear".getBytes());
      slow.getOutputStream().flush();
      Thread dripping =
          new Thread(
              () -> {
                try {
                  for (byte b : "er x\r\nHost: x\r\n\r\n".getBytes()) {
                    Thread.sleep(1000); // the client under test is slow on purpose
                    slow.getOutputStream().write(b);
                    slow.getOutputStream().flush();
                  }
                } catch (IOException | InterruptedException e) {
                  // Closed: the test is over, or the server gave up on it.
                }
              });
      dripping.setDaemon(true);
      dripping.start();

      // when
      long started = System.nanoTime();
      HttpResponse<String> live = get(urls.get(0) + "/health/live", Caller.NONE);

      HttpResponse<String> read = get(urls.get(0) + "/schedules?limit=1", Caller.READER);

      // then: both served at once, not after the slow client's last byte
      assertThat(live.statusCode()).isEqualTo(200);
      assertThat(read.statusCode()).isEqualTo(200);
      assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
      dripping.interrupt();
    }
  }

  @Test
  void shouldListenOnLoopbackOnlyByDefault() throws Exception {
    Optional<InetAddress> external = externalAddress();
    org.junit.jupiter.api.Assumptions.assumeTrue(
        external.isPresent(), "this machine has no address but loopback");
    int port = URI.create(urls.get(0)).getPort();

    try (Socket socket = new Socket()) {
      assertThatThrownBy(() -> socket.connect(new InetSocketAddress(external.get(), port), 2000))
          .isInstanceOf(IOException.class);
    }
  }

  @Test
  void shouldRefuseToStartBeyondLoopbackWithoutTokensUnlessAuthIsExplicitlyOff() throws Exception {
    Map<String, Object> everywhere = Map.of(ServiceConfig.HTTP_BIND_ADDRESS_CONFIG, "0.0.0.0");
    DelayService refused = create("c", "kdelay-it-" + name + "-open", everywhere);

    assertThatThrownBy(() -> refused.start(Optional.of(START_TIMEOUT)))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("delay.http.bind.address=0.0.0.0")
        .hasMessageContaining("delay.http.auth.tokens.file")
        .hasMessageContaining("delay.http.auth.required");

    // An operator who says that something in front authenticates gets an open endpoint.
    Map<String, Object> explicitlyOpen = new HashMap<>(everywhere);
    explicitlyOpen.put(ServiceConfig.HTTP_AUTH_REQUIRED_CONFIG, false);
    explicitlyOpen.put(DelayConfig.REQUESTS_TOPIC_CONFIG, name + "-open-requests");
    explicitlyOpen.put(DelayConfig.DLQ_TOPIC_CONFIG, name + "-open-dlq");
    explicitlyOpen.put(ServiceConfig.HTTP_ADVERTISED_HOST_CONFIG, "127.0.0.1");
    DelayService open = create("d", "kdelay-it-" + name + "-open", explicitlyOpen);
    open.start(Optional.of(START_TIMEOUT));
    String url = "http://127.0.0.1:" + open.httpPort().orElseThrow();

    assertThat(
            await(() -> get(url + "/schedules?limit=1", Caller.NONE), r -> r.statusCode() == 200)
                .statusCode())
        .isEqualTo(200);
  }

  private String otherThan(String url) {
    return urls.get(0).equals(url) ? urls.get(1) : urls.get(0);
  }

  private String schedule(String id) {
    return schedule(id, target);
  }

  private static String schedule(String id, String topic) {
    return "{\"id\":\""
        + id
        + "\",\"targetTopic\":\""
        + topic
        + "\",\"after\":\"PT1H\",\"payload\":\"p\"}";
  }

  /** The keys of the request topic from its start up to the given one. */
  private Set<String> requestKeysUpTo(String last) throws Exception {
    Set<String> keys = new HashSet<>();
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(
            Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrapServers,
                ConsumerConfig.GROUP_ID_CONFIG,
                name + "-reader-" + UUID.randomUUID(),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                "earliest"),
            new StringDeserializer(),
            new StringDeserializer())) {
      consumer.subscribe(List.of(name + "-requests"));
      await(
          () -> {
            for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
              keys.add(record.key());
            }
            return keys.contains(last);
          },
          found -> found);
    }
    return Collections.unmodifiableSet(keys);
  }

  private static Optional<InetAddress> externalAddress() throws IOException {
    for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
      if (!nic.isUp() || nic.isLoopback()) {
        continue;
      }
      for (InetAddress address : Collections.list(nic.getInetAddresses())) {
        if (address instanceof Inet4Address && !address.isLoopbackAddress()) {
          return Optional.of(address);
        }
      }
    }
    return Optional.empty();
  }

  /** An instance on this class's topics, not started; closed after the class. */
  private DelayService create(String instance, String applicationId, Map<String, Object> more)
      throws IOException {
    // No advertised host: a loopback-bound instance advertises the address it is bound to.
    Map<String, Object> settings = more;
    return HttpInstances.create(
        bootstrapServers,
        name,
        PARTITIONS,
        applicationId,
        Files.createTempDirectory("kdelay-secure-it-" + instance),
        settings,
        resources);
  }

  private static HttpRequest.Builder request(String url, Caller caller) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(20));
    if (caller.authorization != null) {
      request.header("Authorization", caller.authorization);
    }
    return request;
  }

  private HttpResponse<String> get(String url, Caller caller)
      throws IOException, InterruptedException {
    return http.send(request(url, caller).GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  /** A change as the admin console sends it: JSON, also without a body. */
  private HttpResponse<String> send(String url, String method, String body, Caller caller)
      throws IOException, InterruptedException {
    return http.send(
        request(url, caller)
            .header("Content-Type", "application/json")
            .method(
                method,
                body.isEmpty()
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static <T> T await(HttpProbes.Probe<T> probe, Predicate<T> condition) throws Exception {
    return HttpProbes.await(TIMEOUT, probe, condition);
  }
}

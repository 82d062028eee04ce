package dev.kdelay.service;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kdelay.client.DelayClient;
import dev.kdelay.client.DelayedMessage;
import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.service.cli.CommandLine;
import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.topology.DelayConfig;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.function.Predicate;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * An operator's actions against a real broker and a running instance, through the admin API and the
 * CLI: dead letters read and replayed (a replay with a corrected target fires once, and replaying
 * the same dead letter again does not fire it twice), and trigger now and reschedule, which go
 * through the request topic like any change.
 */
@Tag("integration")
@ExtendWith(KafkaClusterExtension.class)
class OperationsIT {

  private static final Duration START_TIMEOUT = Duration.ofSeconds(90);
  private static final Duration TIMEOUT = Duration.ofSeconds(60);
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path stateDir;

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final List<AutoCloseable> resources = new ArrayList<>();
  private String bootstrapServers;
  private String name;
  private String target;
  private String url;

  @BeforeEach
  void start(KafkaTestCluster kafka) throws Exception {
    bootstrapServers = kafka.bootstrapServers();
    name = "dlq-" + UUID.randomUUID().toString().substring(0, 8);
    target = name + "-target";
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrapServers))) {
      admin.createTopics(List.of(new NewTopic(target, 1, (short) 1))).all().get();
    }
    Map<String, Object> props = new HashMap<>();
    props.put(DelayConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    props.put(DelayConfig.APPLICATION_ID_CONFIG, "kdelay-it-" + name);
    props.put(DelayConfig.STATE_DIR_CONFIG, stateDir.toString());
    props.put(DelayConfig.REQUESTS_TOPIC_CONFIG, name + "-requests");
    props.put(DelayConfig.DLQ_TOPIC_CONFIG, name + "-dlq");
    props.put(ServiceConfig.TOPIC_PARTITIONS_CONFIG, 2);
    props.put(ServiceConfig.TOPIC_REPLICATION_FACTOR_CONFIG, (short) 1);
    try (java.net.ServerSocket free = new java.net.ServerSocket(0)) {
      props.put(ServiceConfig.HTTP_PORT_CONFIG, free.getLocalPort()); // 0 would disable HTTP
    }
    DelayService service = new DelayService(new ServiceConfig(props));
    resources.add(service);
    service.start(Optional.of(START_TIMEOUT));
    url = "http://127.0.0.1:" + service.httpPort().orElseThrow();
  }

  @AfterEach
  void stop() throws Exception {
    for (int i = resources.size() - 1; i >= 0; i--) {
      resources.get(i).close();
    }
  }

  @Test
  void shouldListShowAndReplayADeadLetterWithACorrectedTargetThroughTheApiOnce() throws Exception {
    // given: a request for a topic that does not exist, dead-lettered with its payload
    String id = "order-" + UUID.randomUUID();
    send(id, name + "-missing", "{\"order\":42}");
    JsonNode letter =
        await(
                () -> getJson("/dead-letters?code=UNKNOWN_TOPIC&id=" + id),
                page -> page.path("deadLetters").size() == 1)
            .path("deadLetters")
            .get(0);
    assertThat(letter.path("id").asText()).isEqualTo(id);
    assertThat(letter.path("payload").path("text").asText()).isEqualTo("{\"order\":42}");
    assertThat(letter.path("headers").path(DelayHeaders.ERROR).path("text").asText())
        .isEqualTo("UNKNOWN_TOPIC");
    String position = letter.path("partition").asInt() + "/" + letter.path("offset").asLong();
    assertThat(getJson("/dead-letters/" + position).path("message").asText())
        .contains(name + "-missing");

    // when: replayed to the right topic, twice
    String correction = "{\"targetTopic\":\"" + target + "\",\"after\":\"PT0S\"}";
    HttpResponse<String> first = post("/dead-letters/" + position + "/replay", correction);
    HttpResponse<String> second = post("/dead-letters/" + position + "/replay", correction);

    // then: fired once, with the payload, under the schedule id
    assertThat(first.statusCode()).as(first.body()).isEqualTo(202);
    assertThat(second.statusCode()).as(second.body()).isEqualTo(202);
    try (TargetTopicReader fired = new TargetTopicReader(bootstrapServers, target)) {
      fired.pollUntil(records -> !records.isEmpty(), TIMEOUT);
      // The second replay is dead-lettered SUPERSEDED once the first has fired; by then a second
      // fire would have been written in the same or an earlier transaction.
      await(
          () -> getJson("/dead-letters?code=SUPERSEDED&id=" + id),
          page -> page.path("deadLetters").size() == 1);
      List<TargetTopicReader.Received> all = fired.drainCommitted(TIMEOUT);
      assertThat(all).hasSize(1);
      assertThat(all.get(0).record().value()).isEqualTo("{\"order\":42}");
      assertThat(all.get(0).record().key()).isEqualTo(id);
    }
  }

  @Test
  void shouldAnswer409ForADeadLetterThatCannotBeReplayedAnd404ForNone() throws Exception {
    // given: a cron schedule for a missing topic, dead-lettered
    String id = "nightly-" + UUID.randomUUID();
    try (DelayClient client =
        DelayClient.create(Map.of("bootstrap.servers", bootstrapServers), name + "-requests")) {
      client
          .schedule(
              DelayedMessage.builder(id, name + "-missing")
                  .cron(dev.kdelay.client.CronSchedule.of("0 0 2 * * ?"))
                  .payload("p")
                  .build())
          .get();
    }
    JsonNode letter =
        await(() -> getJson("/dead-letters?id=" + id), page -> page.path("deadLetters").size() == 1)
            .path("deadLetters")
            .get(0);
    String position = letter.path("partition").asInt() + "/" + letter.path("offset").asLong();

    // when: replayed with a due time, which a cron schedule cannot take
    HttpResponse<String> refused =
        post("/dead-letters/" + position + "/replay", "{\"fireAt\":\"2030-01-01T00:00:00Z\"}");

    // then
    assertThat(refused.statusCode()).isEqualTo(409);
    assertThat(JSON.readTree(refused.body()).path("error").asText()).isEqualTo("NOT_REPLAYABLE");
    assertThat(get("/dead-letters/0/999999").statusCode()).isEqualTo(404);
  }

  @Test
  void shouldListShowAndReplayThroughTheCli() throws Exception {
    // given
    String id = "cli-" + UUID.randomUUID();
    send(id, name + "-missing", "from the cli");
    await(() -> getJson("/dead-letters?id=" + id), page -> page.path("deadLetters").size() == 1);
    Map<String, String> environment =
        Map.of(
            "DELAY_BOOTSTRAP_SERVERS", bootstrapServers,
            "DELAY_REQUESTS_TOPIC", name + "-requests",
            "DELAY_DLQ_TOPIC", name + "-dlq");

    // when
    Cli list = cli(environment, "dlq", "list", "--id", id);
    String position = list.out.strip().split("\\s+")[0];
    Cli show = cli(environment, "dlq", "show", position);
    Cli replay = cli(environment, "dlq", "replay", position, "--target", target, "--after", "0s");

    // then
    assertThat(list.code).as(list.err).isEqualTo(CommandLine.OK);
    assertThat(list.out).contains("UNKNOWN_TOPIC", id);
    assertThat(show.out)
        .contains("payload      12 bytes: from the cli", "code         UNKNOWN_TOPIC");
    assertThat(replay.code).as(replay.err).isEqualTo(CommandLine.OK);
    assertThat(replay.out).contains("Replayed", id);
    try (TargetTopicReader fired = new TargetTopicReader(bootstrapServers, target)) {
      List<TargetTopicReader.Received> all =
          fired.pollUntil(records -> !records.isEmpty(), TIMEOUT);
      assertThat(all.get(0).record().value()).isEqualTo("from the cli");
    }
  }

  @Test
  void shouldFireAPendingScheduleTriggeredTwiceOnceWithItsUsualIdempotencyKey() throws Exception {
    // given: due in an hour
    String id = "trigger-" + UUID.randomUUID();
    send(id, target, "{\"order\":7}");
    await(() -> get("/schedules/" + id), r -> r.statusCode() == 200);
    long dueMs = getJson("/schedules/" + id).path("nextDueAtMs").asLong();

    // when: triggered, twice
    HttpResponse<String> first = post("/schedules/" + id + "/trigger", "{}");
    HttpResponse<String> second = post("/schedules/" + id + "/trigger", "{}");

    // then: fired once, now, as the occurrence due in an hour; the second trigger dead-lettered
    assertThat(first.statusCode()).as(first.body()).isEqualTo(202);
    assertThat(second.statusCode()).as(second.body()).isEqualTo(202);
    try (TargetTopicReader fired = new TargetTopicReader(bootstrapServers, target)) {
      fired.pollUntil(records -> !records.isEmpty(), TIMEOUT);
      await(
          () -> getJson("/dead-letters?code=NOT_APPLICABLE&id=" + id),
          page -> page.path("deadLetters").size() == 1);
      List<TargetTopicReader.Received> all = fired.drainCommitted(TIMEOUT);
      assertThat(all).hasSize(1);
      assertThat(all.get(0).record().value()).isEqualTo("{\"order\":7}");
      assertThat(header(all.get(0), DelayHeaders.IDEMPOTENCY_KEY)).isEqualTo(id + "@" + dueMs);
      assertThat(all.get(0).record().timestamp()).isLessThan(dueMs);
    }
    assertThat(getJson("/schedules/" + id).path("status").asText()).isEqualTo("fired");
  }

  @Test
  void shouldRescheduleAndTriggerThroughTheCli() throws Exception {
    // given: a one-shot due in five minutes, and a nightly cron schedule
    String later = "move-" + UUID.randomUUID();
    String nightly = "nightly-" + UUID.randomUUID();
    send(later, target, "moved");
    try (DelayClient client =
        DelayClient.create(Map.of("bootstrap.servers", bootstrapServers), name + "-requests")) {
      client
          .schedule(
              DelayedMessage.builder(nightly, target)
                  .cron(dev.kdelay.client.CronSchedule.of("0 0 2 * * ?"))
                  .payload("nightly")
                  .build())
          .get();
    }
    await(() -> get("/schedules/" + nightly), r -> r.statusCode() == 200);
    Map<String, String> environment =
        Map.of(
            "DELAY_BOOTSTRAP_SERVERS",
            bootstrapServers,
            "DELAY_REQUESTS_TOPIC",
            name + "-requests");

    // when
    Cli reschedule = cli(environment, "reschedule", "--id", later, "--after", "0s");
    Cli trigger = cli(environment, "trigger", "--id", nightly);

    // then: the one-shot fires with its payload; the nightly fires its next night now and goes on
    assertThat(reschedule.code).as(reschedule.err).isEqualTo(CommandLine.OK);
    assertThat(reschedule.out).contains("Sent reschedule for " + later);
    assertThat(trigger.code).as(trigger.err).isEqualTo(CommandLine.OK);
    try (TargetTopicReader fired = new TargetTopicReader(bootstrapServers, target)) {
      List<TargetTopicReader.Received> all =
          fired.pollUntil(records -> records.size() >= 2, TIMEOUT);
      assertThat(all)
          .extracting(r -> r.record().key() + "=" + r.record().value())
          .containsExactlyInAnyOrder(later + "=moved", nightly + "=nightly");
    }
    JsonNode after = getJson("/schedules/" + nightly);
    assertThat(after.path("status").asText()).isEqualTo("pending");
    assertThat(after.path("occurrence").asLong()).isEqualTo(2);
  }

  private static String header(TargetTopicReader.Received received, String name) {
    org.apache.kafka.common.header.Header header = received.record().headers().lastHeader(name);
    return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
  }

  private record Cli(int code, String out, String err) {}

  private static Cli cli(Map<String, String> environment, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code =
        new Main(
                environment,
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8))
            .execute(List.of(args));
    return new Cli(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  private void send(String id, String topic, String payload) throws Exception {
    try (DelayClient client =
        DelayClient.create(Map.of("bootstrap.servers", bootstrapServers), name + "-requests")) {
      client.scheduleAfter(id, topic, Duration.ofMinutes(5), payload.getBytes()).get();
    }
  }

  private HttpResponse<String> get(String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(url + path)).timeout(Duration.ofSeconds(30)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private JsonNode getJson(String path) throws Exception {
    HttpResponse<String> response = get(path);
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return JSON.readTree(response.body());
  }

  private HttpResponse<String> post(String path, String body) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(url + path))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static <T> T await(Callable<T> probe, Predicate<T> condition) throws Exception {
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    T last = probe.call();
    while (!condition.test(last)) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not reached within " + TIMEOUT + "; last seen: " + last);
      }
      Thread.sleep(100); // polling interval of a condition wait, not a fixed wait
      last = probe.call();
    }
    return last;
  }
}

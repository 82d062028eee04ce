package dev.kdelay.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kdelay.client.DelayClient;
import dev.kdelay.client.DelayedMessage;
import dev.kdelay.client.FiredTask;
import dev.kdelay.service.DelayService;
import dev.kdelay.service.DelayServiceException;
import dev.kdelay.service.KafkaClusterExtension;
import dev.kdelay.service.KafkaTestCluster;
import dev.kdelay.service.ServiceMetricsTest;
import dev.kdelay.service.TargetTopicReader;
import dev.kdelay.service.TargetTopicReader.Received;
import dev.kdelay.service.config.ServiceConfig;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The HTTP endpoints of two instances of one application against a real broker: health, metrics,
 * the admin API's reads (answered by whichever instance owns the id, from either instance) and its
 * writes (through the request topic).
 *
 * <p>Both instances run for the whole class; each test works on ids and due times of its own.
 */
@Tag("integration")
@ExtendWith(KafkaClusterExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AdminApiIT {

  private static final Duration START_TIMEOUT = Duration.ofSeconds(90);
  private static final Duration TIMEOUT = Duration.ofSeconds(60);
  private static final int PARTITIONS = 4;

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final List<AutoCloseable> resources = new ArrayList<>();
  private String bootstrapServers;
  private String name;
  private String target;
  private DelayService first;
  private DelayService second;
  private String firstUrl;
  private String secondUrl;

  @BeforeAll
  void startTwoInstances(KafkaTestCluster kafka) throws Exception {
    bootstrapServers = kafka.bootstrapServers();
    name = "admin-" + UUID.randomUUID().toString().substring(0, 8);
    target = name + "-target";
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrapServers))) {
      admin.createTopics(List.of(new NewTopic(target, 2, (short) 1))).all().get();
    }
    first = start("a");
    second = start("b");
    firstUrl = "http://127.0.0.1:" + first.httpPort().orElseThrow();
    secondUrl = "http://127.0.0.1:" + second.httpPort().orElseThrow();
    // Both ready, and every partition readable: the listing merges them all.
    for (String url : List.of(firstUrl, secondUrl)) {
      await(() -> get(url + "/health/ready"), r -> r.statusCode() == 200);
    }
    await(() -> get(firstUrl + "/schedules?limit=1"), r -> r.statusCode() == 200);
  }

  @AfterAll
  void stop() throws Exception {
    for (int i = resources.size() - 1; i >= 0; i--) {
      resources.get(i).close();
    }
  }

  @Test
  void shouldAnswerLiveReadyAndMetricsOnEachInstance() throws Exception {
    for (String url : List.of(firstUrl, secondUrl)) {
      HttpResponse<String> live = get(url + "/health/live");
      HttpResponse<String> ready = get(url + "/health/ready");
      HttpResponse<String> metrics = get(url + "/metrics");

      assertThat(live.statusCode()).isEqualTo(200);
      assertThat(json(ready).path("status").asText()).isEqualTo("UP");
      assertThat(json(ready).path("state").asText()).isEqualTo("RUNNING");
      assertThat(metrics.statusCode()).isEqualTo(200);
      assertThat(metrics.headers().firstValue("Content-Type"))
          .hasValueSatisfying(type -> assertThat(type).startsWith("text/plain"));
      assertThat(metrics.body())
          .contains(
              "kdelay_tasks_pending ",
              "kdelay_partitions_active ",
              "kdelay_oldest_overdue_task_age_seconds ",
              "jvm_memory_used_bytes",
              "kafka_consumer_");
    }
    // The four partitions are shared out between the two instances.
    assertThat(
            metric(firstUrl, "kdelay_partitions_active")
                + metric(secondUrl, "kdelay_partitions_active"))
        .isEqualTo(PARTITIONS);
  }

  @Test
  void shouldServeTheConsoleAndAnOverviewOfEveryInstanceFromEither() throws Exception {
    // when: the console's page, and the overview from each instance
    HttpResponse<String> page = get(firstUrl + "/");
    for (String url : List.of(firstUrl, secondUrl)) {
      JsonNode overview =
          json(
              await(
                  () -> get(url + "/overview"),
                  r -> r.statusCode() == 200 && r.body().contains("\"complete\":true")));

      // then: both instances, with their own figures, and every partition owned by one of them
      assertThat(overview.path("instances")).hasSize(2);
      Set<Integer> owned = new HashSet<>();
      for (JsonNode instance : overview.path("instances")) {
        assertThat(instance.has("unreachable")).as(instance.toString()).isFalse();
        assertThat(instance.path("pending").isNumber()).as(instance.toString()).isTrue();
        instance.path("partitions").forEach(partition -> owned.add(partition.asInt()));
      }
      assertThat(owned).hasSize(PARTITIONS);
      assertThat(overview.path("instance").asText()).isEqualTo(url.substring("http://".length()));
    }
    assertThat(page.statusCode()).isEqualTo(200);
    assertThat(page.headers().firstValue("Content-Type"))
        .hasValueSatisfying(type -> assertThat(type).startsWith("text/html"));
    assertThat(page.body()).contains("/console/console.js");
  }

  @Test
  void shouldReportAScheduleFromEitherInstanceWhenTheOtherOneHoldsIt() throws Exception {
    // given: schedules posted to the first instance, due in 30 days (after the listing test's
    // window, so that the order of the tests does not matter)
    Instant due =
        Instant.now().plus(Duration.ofDays(30)).truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      String id = "lookup/" + i; // a slash, to cross the path encoding
      ids.add(id);
      HttpResponse<String> posted =
          post(
              firstUrl + "/schedules",
              "{\"id\":\""
                  + id
                  + "\",\"targetTopic\":\""
                  + target
                  + "\",\"targetKey\":\"key-"
                  + i
                  + "\",\"fireAt\":\""
                  + due
                  + "\",\"payload\":\"p\"}");
      assertThat(posted.statusCode()).as(posted.body()).isEqualTo(202);
    }

    // when: each is looked up through both instances
    Set<String> owners = new HashSet<>();
    for (String id : ids) {
      String path = "/schedules/" + ScheduleQueries.pathSegment(id);
      JsonNode viaFirst = json(await(() -> get(firstUrl + path), r -> r.statusCode() == 200));
      JsonNode viaSecond = json(get(secondUrl + path));

      // then: the same answer, from the owner
      assertThat(viaFirst.path("id").asText()).isEqualTo(id);
      assertThat(viaFirst.path("status").asText()).isEqualTo("pending");
      assertThat(viaFirst.path("nextDueAtMs").asLong()).isEqualTo(due.toEpochMilli());
      assertThat(viaFirst.path("target").path("topic").asText()).isEqualTo(target);
      assertThat(viaFirst.path("target").path("key").asText()).startsWith("key-");
      assertThat(viaFirst.path("occurrence").asLong()).isEqualTo(1);
      assertThat(viaSecond).isEqualTo(viaFirst);
      owners.add(viaFirst.path("instance").asText());
    }
    // Eight ids over four partitions on two instances: both hold some, so half the lookups
    // through each instance were answered by the other one.
    assertThat(owners)
        .containsExactlyInAnyOrder(
            "127.0.0.1:" + first.httpPort().orElseThrow(),
            "127.0.0.1:" + second.httpPort().orElseThrow());
  }

  @Test
  void shouldListPendingTasksOfBothInstancesInDueOrderPageByPage() throws Exception {
    // given: twelve tasks in a window of their own, due out of order, written with the SDK
    Instant base =
        Instant.now().plus(Duration.ofDays(2)).truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
    int[] offsets = {9, 3, 11, 0, 7, 7, 5, 1, 10, 2, 8, 4};
    List<String> expected = new ArrayList<>();
    try (DelayClient client = client()) {
      for (int i = 0; i < offsets.length; i++) {
        client
            .schedule(
                DelayedMessage.builder("list-" + i, target)
                    .fireAt(base.plusSeconds(offsets[i]))
                    .payload("p")
                    .build())
            .get(10, TimeUnit.SECONDS);
      }
    }
    // Due order; the two due at +7 s in id order.
    for (int offset = 0; offset <= 11; offset++) {
      for (int i = 0; i < offsets.length; i++) {
        if (offsets[i] == offset) {
          expected.add("list-" + i);
        }
      }
    }
    String window = "/schedules?limit=5&dueBefore=" + base.plus(Duration.ofHours(1)).toEpochMilli();
    await(
        () -> get(firstUrl + window + "&limit=1000"),
        r -> inWindow(r, base).size() == offsets.length);

    // when: pages of five through the second instance
    List<String> listed = new ArrayList<>();
    List<Long> dues = new ArrayList<>();
    String next = null;
    int pages = 0;
    do {
      String url =
          secondUrl + window.replace("limit=5", "limit=5" + (next == null ? "" : "&after=" + next));
      JsonNode page = json(get(url));
      for (JsonNode task : page.path("tasks")) {
        if (task.path("dueAtMs").asLong() >= base.toEpochMilli()) {
          listed.add(task.path("id").asText());
          dues.add(task.path("dueAtMs").asLong());
        }
      }
      next = page.path("next").isNull() ? null : page.path("next").asText();
      pages++;
    } while (next != null && pages < 10);

    // then
    assertThat(listed).containsExactlyElementsOf(expected);
    assertThat(dues).isSorted();
    assertThat(pages).isEqualTo(3);
  }

  @Test
  void shouldPauseResumeAndCancelThroughTheRequestTopic() throws Exception {
    // given: an hourly schedule
    String id = "hourly-" + UUID.randomUUID();
    String path = "/schedules/" + id;
    HttpResponse<String> posted =
        post(
            secondUrl + "/schedules",
            "{\"id\":\""
                + id
                + "\",\"targetTopic\":\""
                + target
                + "\",\"cron\":\"0 0 * * * ?\",\"zone\":\"Europe/Berlin\","
                + "\"payload\":\"hour\"}");
    assertThat(posted.statusCode()).isEqualTo(202);
    JsonNode pending = json(await(() -> get(firstUrl + path), r -> r.statusCode() == 200));
    assertThat(pending.path("status").asText()).isEqualTo("pending");
    assertThat(pending.path("recurring").asBoolean()).isTrue();
    assertThat(pending.path("cron").path("zone").asText()).isEqualTo("Europe/Berlin");

    // when / then
    assertThat(post(firstUrl + path + "/pause", "").statusCode()).isEqualTo(202);
    await(() -> get(secondUrl + path), r -> status(r).equals("paused"));

    assertThat(post(secondUrl + path + "/resume", "").statusCode()).isEqualTo(202);
    await(() -> get(firstUrl + path), r -> status(r).equals("pending"));

    HttpResponse<String> cancelled = delete(firstUrl + path);
    assertThat(cancelled.statusCode()).isEqualTo(202);
    assertThat(json(cancelled).path("action").asText()).isEqualTo("cancel");
    JsonNode gone = json(await(() -> get(secondUrl + path), r -> status(r).equals("cancelled")));
    assertThat(gone.path("forgottenAtMs").asLong()).isGreaterThan(System.currentTimeMillis());
  }

  @Test
  void shouldFireAScheduleMadeFromJsonAndCountItInTheMetrics() throws Exception {
    // given
    double firedBefore = firedTotal();
    String id = "json-" + UUID.randomUUID();

    // when
    HttpResponse<String> posted =
        post(
            firstUrl + "/schedules",
            "{\"id\":\""
                + id
                + "\",\"targetTopic\":\""
                + target
                + "\",\"after\":\"500ms\",\"payload\":\"from json\","
                + "\"headers\":{\"traceparent\":\"00-trace\"}}");

    // then: fired once, with the carried header, and counted
    assertThat(posted.statusCode()).isEqualTo(202);
    List<Received> fired;
    try (TargetTopicReader reader = new TargetTopicReader(bootstrapServers, target)) {
      fired =
          reader.pollUntil(
              received ->
                  received.stream().anyMatch(r -> FiredTask.from(r.record()).id().equals(id)),
              TIMEOUT);
    }
    Received record =
        fired.stream().filter(r -> FiredTask.from(r.record()).id().equals(id)).findFirst().get();
    assertThat(record.record().value()).isEqualTo("from json");
    assertThat(
            new String(
                record.record().headers().lastHeader("traceparent").value(),
                StandardCharsets.UTF_8))
        .isEqualTo("00-trace");
    await(() -> firedTotal(), total -> total >= firedBefore + 1);
    // A fired one-shot is remembered as fired (for delay.fired.retention.ms), from either instance.
    for (String url : List.of(firstUrl, secondUrl)) {
      HttpResponse<String> after = get(url + "/schedules/" + id);
      assertThat(after.statusCode()).isEqualTo(200);
      assertThat(json(after).path("status").asText()).isEqualTo("fired");
      assertThat(json(after).path("forgottenAtMs").asLong())
          .isGreaterThan(System.currentTimeMillis());
    }
  }

  @Test
  void shouldNotBeReadyWhileKafkaStreamsIsNotRunning() throws Exception {
    // given: an instance whose Kafka Streams has no stream thread, so that it stays REBALANCING
    // for good (only a thread's assignment moves it to RUNNING); an application id of its own,
    // and no consumer at all, so the two instances above never see it
    DelayService idle =
        create(
            "idle",
            "kdelay-it-" + name + "-idle",
            Map.of(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 0));
    CompletableFuture<Void> starting =
        CompletableFuture.runAsync(() -> idle.start(Optional.of(START_TIMEOUT)));
    int port = await(idle::httpPort, OptionalInt::isPresent).getAsInt();
    String url = "http://127.0.0.1:" + port;

    // when
    HttpResponse<String> ready =
        await(() -> get(url + "/health/ready"), r -> state(r).equals("REBALANCING"));
    HttpResponse<String> live = get(url + "/health/live");

    // then: not ready, with the reason; alive (a rebalance is no reason to restart)
    assertThat(ready.statusCode()).isEqualTo(503);
    assertThat(json(ready).path("status").asText()).isEqualTo("DOWN");
    assertThat(json(ready).path("reason").asText())
        .isEqualTo("Kafka Streams is REBALANCING, not RUNNING");
    assertThat(live.statusCode()).isEqualTo(200);

    // and: closing it ends the start that was waiting for RUNNING
    idle.close();
    assertThat(starting)
        .failsWithin(TIMEOUT)
        .withThrowableOfType(ExecutionException.class)
        .withCauseInstanceOf(DelayServiceException.class);
  }

  @Test
  void shouldDeliverPayloadBase64BytesExactlyAndANullPayloadAsATombstone() throws Exception {
    // given: bytes that are not UTF-8 text, and JSON's own special characters
    byte[] bytes = {0, (byte) 0xff, (byte) 0xfe, (byte) 0x80, (byte) 0xc3, 0x28, '"', '\\', '\n'};
    String binary = "binary-" + UUID.randomUUID();
    String tombstone = "tombstone-" + UUID.randomUUID();

    // when
    HttpResponse<String> postedBinary =
        post(
            firstUrl + "/schedules",
            "{\"id\":\""
                + binary
                + "\",\"targetTopic\":\""
                + target
                + "\",\"after\":\"300ms\",\"payloadBase64\":\""
                + Base64.getEncoder().encodeToString(bytes)
                + "\"}");
    HttpResponse<String> postedTombstone =
        post(
            secondUrl + "/schedules",
            "{\"id\":\""
                + tombstone
                + "\",\"targetTopic\":\""
                + target
                + "\",\"targetKey\":\"compacted-key\",\"after\":\"300ms\",\"payload\":null}");

    // then: the payload byte for byte, and a record with a null value for the target key
    assertThat(postedBinary.statusCode()).as(postedBinary.body()).isEqualTo(202);
    assertThat(postedTombstone.statusCode()).as(postedTombstone.body()).isEqualTo(202);
    Map<String, ConsumerRecord<byte[], byte[]>> fired = firedRecords(Set.of(binary, tombstone));
    assertThat(fired.get(binary).value()).isEqualTo(bytes);
    assertThat(fired.get(tombstone).value()).isNull();
    assertThat(new String(fired.get(tombstone).key(), StandardCharsets.UTF_8))
        .isEqualTo("compacted-key");
  }

  @Test
  void shouldListOnlyTasksDueBeforeAnIso8601Instant() throws Exception {
    // given: three tasks a second apart, in a window of their own 40 days ahead
    Instant base = Instant.now().plus(Duration.ofDays(40)).truncatedTo(ChronoUnit.SECONDS);
    List<String> ids = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      String id = "before-" + i + "-" + UUID.randomUUID();
      ids.add(id);
      HttpResponse<String> posted =
          post(
              firstUrl + "/schedules",
              "{\"id\":\""
                  + id
                  + "\",\"targetTopic\":\""
                  + target
                  + "\",\"fireAt\":\""
                  + base.plusSeconds(i)
                  + "\",\"payload\":\"p\"}");
      assertThat(posted.statusCode()).as(posted.body()).isEqualTo(202);
    }
    String all = "/schedules?limit=1000&dueBefore=" + base.plus(Duration.ofHours(1)).toEpochMilli();
    await(() -> get(secondUrl + all), r -> inWindow(r, base).size() == 3);

    // when: the bound as an instant in UTC, and as a date-time with an offset ('+' encoded)
    String utc = base.plusSeconds(2).toString();
    String offset = base.plusSeconds(3).atOffset(ZoneOffset.ofHours(2)).toString();
    HttpResponse<String> beforeSecond = get(secondUrl + "/schedules?limit=1000&dueBefore=" + utc);
    HttpResponse<String> beforeThird =
        get(firstUrl + "/schedules?limit=1000&dueBefore=" + offset.replace("+", "%2B"));

    // then: exclusive bounds
    assertThat(offset).endsWith("+02:00");
    assertThat(inWindow(beforeSecond, base)).containsExactly(ids.get(0));
    assertThat(inWindow(beforeThird, base)).containsExactly(ids.get(0), ids.get(1));
  }

  @Test
  void shouldAnswerAForwardedRequestFromItsOwnStoresAndNeverForwardItAgain() throws Exception {
    // given: a schedule (due after every other test's window), and which instance owns it
    String id = "owned-" + UUID.randomUUID();
    HttpResponse<String> posted =
        post(
            firstUrl + "/schedules",
            "{\"id\":\""
                + id
                + "\",\"targetTopic\":\""
                + target
                + "\",\"after\":\"P50D\",\"payload\":\"p\"}");
    assertThat(posted.statusCode()).isEqualTo(202);
    String path = "/schedules/" + id;
    String owner =
        json(await(() -> get(firstUrl + path), r -> r.statusCode() == 200))
            .path("instance")
            .asText();
    String ownerUrl = "http://" + owner;
    String otherUrl = ownerUrl.equals(firstUrl) ? secondUrl : firstUrl;

    // when: asked as if another instance had forwarded the request
    HttpResponse<String> atOwner = getForwarded(ownerUrl + path);
    HttpResponse<String> atOther = getForwarded(otherUrl + path);
    HttpResponse<String> share = getForwarded(otherUrl + "/schedules?limit=1");

    // then: the owner answers; the other one does not pass it on, and says why
    assertThat(atOwner.statusCode()).isEqualTo(200);
    assertThat(json(atOwner).path("instance").asText()).isEqualTo(owner);
    assertThat(atOther.statusCode()).isEqualTo(503);
    assertThat(json(atOther).path("error").asText()).isEqualTo("UNAVAILABLE");
    assertThat(json(atOther).path("message").asText()).contains("while the request was forwarded");
    // A forwarded listing is the instance's own share: its partitions, not all four.
    assertThat(share.statusCode()).isEqualTo(200);
    assertThat(json(share).path("partitions").size()).isBetween(1, PARTITIONS - 1);
  }

  @Test
  void shouldAnswerBadRequestsWith4xxAndJson() throws Exception {
    HttpResponse<String> badJson = post(firstUrl + "/schedules", "{\"id\": ");
    HttpResponse<String> badTime =
        post(
            firstUrl + "/schedules",
            "{\"id\":\"x\",\"targetTopic\":\"t\",\"fireAt\":\"someday\",\"payload\":\"\"}");
    HttpResponse<String> badCursor = get(secondUrl + "/schedules?after=nonsense");
    HttpResponse<String> unknownRoute = get(secondUrl + "/admin");
    HttpResponse<String> wrongMethod = delete(firstUrl + "/schedules");

    assertThat(badJson.statusCode()).isEqualTo(400);
    assertThat(json(badJson).path("error").asText()).isEqualTo("BAD_REQUEST");
    assertThat(badTime.statusCode()).isEqualTo(400);
    assertThat(json(badTime).path("error").asText()).isEqualTo("BAD_TIME");
    assertThat(badCursor.statusCode()).isEqualTo(400);
    assertThat(json(badCursor).path("error").asText()).isEqualTo("BAD_CURSOR");
    assertThat(unknownRoute.statusCode()).isEqualTo(404);
    assertThat(json(unknownRoute).path("error").asText()).isEqualTo("NOT_FOUND");
    assertThat(wrongMethod.statusCode()).isEqualTo(405);
  }

  private DelayService start(String instance) throws IOException {
    DelayService service = create(instance, "kdelay-it-" + name, Map.of());
    service.start(Optional.of(START_TIMEOUT));
    return service;
  }

  /** An instance on this class's topics, not started; closed after the class. */
  private DelayService create(String instance, String applicationId, Map<String, Object> more)
      throws IOException {
    Map<String, Object> settings = new HashMap<>(more);
    settings.putIfAbsent(ServiceConfig.HTTP_ADVERTISED_HOST_CONFIG, "127.0.0.1");
    return HttpInstances.create(
        bootstrapServers,
        name,
        PARTITIONS,
        applicationId,
        Files.createTempDirectory("kdelay-admin-it-" + instance),
        settings,
        resources);
  }

  /**
   * The fired records of some ids, as a {@code read_committed} consumer of the target topic sees
   * them, bytes as they are.
   */
  private Map<String, ConsumerRecord<byte[], byte[]>> firedRecords(Set<String> ids) {
    Map<String, ConsumerRecord<byte[], byte[]>> fired = new HashMap<>();
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(
            Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrapServers,
                ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                "read_committed"),
            new ByteArrayDeserializer(),
            new ByteArrayDeserializer())) {
      List<TopicPartition> partitions =
          consumer.partitionsFor(target).stream()
              .map(info -> new TopicPartition(target, info.partition()))
              .toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      long deadline = System.nanoTime() + TIMEOUT.toNanos();
      while (!fired.keySet().containsAll(ids)) {
        assertThat(System.nanoTime())
            .as("fired within %s: %s; got %s", TIMEOUT, ids, fired.keySet())
            .isLessThan(deadline);
        for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(100))) {
          String id = FiredTask.from(record).id();
          if (ids.contains(id)) {
            fired.put(id, record);
          }
        }
      }
    }
    return fired;
  }

  /** The ids of a listing's tasks due at or after a time, in the listing's order. */
  private static List<String> inWindow(HttpResponse<String> listing, Instant from) {
    List<String> ids = new ArrayList<>();
    try {
      if (listing.statusCode() == 200) {
        for (JsonNode task : json(listing).path("tasks")) {
          if (task.path("dueAtMs").asLong() >= from.toEpochMilli()) {
            ids.add(task.path("id").asText());
          }
        }
      }
    } catch (IOException e) {
      // Not JSON: no ids.
    }
    return ids;
  }

  private DelayClient client() {
    return DelayClient.create(
        Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers), name + "-requests");
  }

  private double firedTotal() throws Exception {
    return metric(firstUrl, "kdelay_tasks_fired_total")
        + metric(secondUrl, "kdelay_tasks_fired_total");
  }

  private double metric(String url, String series) throws Exception {
    return ServiceMetricsTest.sample(get(url + "/metrics").body(), series).orElseThrow();
  }

  private static String status(HttpResponse<String> response) {
    return field(response, "status");
  }

  private static String state(HttpResponse<String> response) {
    return field(response, "state");
  }

  private static String field(HttpResponse<String> response, String name) {
    try {
      return json(response).path(name).asText();
    } catch (IOException e) {
      return "";
    }
  }

  private HttpResponse<String> get(String url) throws IOException, InterruptedException {
    return send(HttpRequest.newBuilder(URI.create(url)).GET());
  }

  /** A GET as one instance forwards it to another. */
  private HttpResponse<String> getForwarded(String url) throws IOException, InterruptedException {
    return send(
        HttpRequest.newBuilder(URI.create(url)).header(ApiRequest.FORWARDED_HEADER, "true").GET());
  }

  private HttpResponse<String> delete(String url) throws IOException, InterruptedException {
    // A change of state must say JSON, also without a body: no cross-site form can.
    return send(
        HttpRequest.newBuilder(URI.create(url))
            .header("Content-Type", "application/json")
            .DELETE());
  }

  private HttpResponse<String> post(String url, String body)
      throws IOException, InterruptedException {
    return send(
        HttpRequest.newBuilder(URI.create(url))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body)));
  }

  private HttpResponse<String> send(HttpRequest.Builder request)
      throws IOException, InterruptedException {
    return http.send(
        request.timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
  }

  private static JsonNode json(HttpResponse<String> response) throws IOException {
    return ApiResponse.MAPPER.readTree(response.body());
  }

  private static <T> T await(HttpProbes.Probe<T> probe, Predicate<T> condition) throws Exception {
    return HttpProbes.await(TIMEOUT, probe, condition);
  }
}

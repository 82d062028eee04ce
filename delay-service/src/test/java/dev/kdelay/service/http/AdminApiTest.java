package dev.kdelay.service.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kdelay.client.DelayClient;
import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.service.RestoreProgress;
import dev.kdelay.service.ServiceMetrics;
import dev.kdelay.topology.DelayConfig;
import dev.kdelay.topology.TargetTopic;
import dev.kdelay.topology.TargetTopics;
import dev.kdelay.topology.internals.delivery.TargetPolicy;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.KafkaStreams.State;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The routes that need no Kafka Streams: metrics, health, and writes through the client SDK. */
class AdminApiTest {

  private static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");

  private final MockProducer<byte[], byte[]> producer =
      new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer());
  private final ServiceMetrics metrics =
      new ServiceMetrics(Clock.fixed(NOW, ZoneOffset.UTC), () -> 0);
  private final AdminApi api =
      AdminApi.builder()
          .metrics(metrics)
          .health(new Health(() -> Optional.of(State.RUNNING), new RestoreProgress()))
          .requests(new DelayClient(producer, "delay-requests"))
          .limits(new ScheduleBody.ServiceLimits(16, 1024, Duration.ofDays(10).toMillis()))
          .clock(Clock.fixed(NOW, ZoneOffset.UTC))
          .sendTimeout(Duration.ofSeconds(5))
          .build();

  private final AdminApi checkingTargets =
      AdminApi.builder()
          .metrics(metrics)
          .health(new Health(() -> Optional.of(State.RUNNING), new RestoreProgress()))
          .requests(new DelayClient(producer, "delay-requests"))
          .limits(new ScheduleBody.ServiceLimits(16, 1024, Duration.ofDays(10).toMillis()))
          .clock(Clock.fixed(NOW, ZoneOffset.UTC))
          .sendTimeout(Duration.ofSeconds(5))
          .targets(
              new TargetTopicCheck(
                  (tenant, topic) ->
                      topic.startsWith("__")
                          ? Optional.of("'" + topic + "' is a Kafka-internal topic")
                          : Optional.empty(),
                  new TargetTopics() {
                    @Override
                    public TargetTopic lookUp(String topic) {
                      return topic.equals("missing") ? TargetTopic.ABSENT : TargetTopic.UNKNOWN;
                    }

                    @Override
                    public TargetTopic cached(String topic) {
                      return lookUp(topic);
                    }

                    @Override
                    public Optional<TargetTopic> known(String topic) {
                      return Optional.of(lookUp(topic));
                    }
                  }))
          .build();

  /** Two tenants; teamb's payloads are at most 4 bytes. */
  private static final DelayConfig TENANTS =
      new DelayConfig(
          java.util.Map.of(
              "delay.tenants", "teama,teamb", "delay.tenant.teamb.max.payload.bytes", "4"));

  private final AdminApi withTenants =
      AdminApi.builder()
          .metrics(metrics)
          .requests(new DelayClient(producer, "delay-requests"))
          .tenants(TENANTS.tenants(), topic -> new DelayClient(producer, topic))
          .limits(new ScheduleBody.ServiceLimits(16, 1024, Duration.ofDays(10).toMillis()))
          .clock(Clock.fixed(NOW, ZoneOffset.UTC))
          .sendTimeout(Duration.ofSeconds(5))
          .targets(new TargetTopicCheck(new TargetPolicy(TENANTS), TargetTopics.UNCHECKED))
          .build();

  @AfterEach
  void close() {
    metrics.close();
  }

  @Test
  void shouldAnswer422AndWriteNothingWhenTheTargetTopicIsMissingOrRefused() throws Exception {
    for (String[] topicAndCode :
        new String[][] {
          {"missing", "UNKNOWN_TOPIC"}, {"__consumer_offsets", "TARGET_NOT_ALLOWED"}
        }) {
      ApiResponse response =
          checkingTargets.handle(
              ApiRequest.of(
                  "POST",
                  URI.create("/schedules"),
                  ("{\"id\":\"a\",\"after\":\"1s\",\"targetTopic\":\""
                          + topicAndCode[0]
                          + "\",\"payload\":\"x\"}")
                      .getBytes(StandardCharsets.UTF_8),
                  false));

      assertThat(response.status()).isEqualTo(422);
      assertThat(ApiResponse.MAPPER.readTree(response.body()).path("error").asText())
          .isEqualTo(topicAndCode[1]);
    }
    assertThat(producer.history()).isEmpty();
  }

  @Test
  void shouldServeMetricsInPrometheusTextFormat() {
    ApiResponse response = call("GET", "/metrics", "");
    assertThat(response.status()).isEqualTo(200);
    assertThat(response.contentType()).startsWith("text/plain; version=0.0.4");
    assertThat(response.bodyText()).contains("# TYPE kdelay_tasks_fired_total counter");
  }

  @Test
  void shouldServeATenantsTokenItsOwnMetricsOnly() {
    metrics.tenants(List.of("teama", "teamb"));

    ApiResponse teamas = api.handle(request("GET", "/metrics", false).asTenant("teama"));

    assertThat(teamas.status()).isEqualTo(200);
    assertThat(teamas.bodyText())
        .contains("kdelay_tenant_tasks_fired_total{tenant=\"teama\"}")
        .doesNotContain("teamb")
        .doesNotContain("kdelay_tasks_fired_total");
  }

  @Test
  void shouldServeHealth() {
    assertThat(call("GET", "/health/live", "").status()).isEqualTo(200);
    assertThat(call("GET", "/health/ready", "").bodyText()).contains("\"UP\"");
  }

  @Test
  void shouldWriteAScheduleRequestWithTheSdkWhenPostedAsJson() throws Exception {
    // when
    ApiResponse response =
        call(
            "POST",
            "/schedules",
            "{\"id\":\"order-42\",\"targetTopic\":\"orders\",\"after\":\"PT15M\","
                + "\"payload\":\"expire\",\"headers\":{\"traceparent\":\"00-abc\"}}");

    // then
    assertThat(response.status()).isEqualTo(202);
    JsonNode body = json(response);
    assertThat(body.path("id").asText()).isEqualTo("order-42");
    assertThat(body.path("action").asText()).isEqualTo("schedule");
    assertThat(body.path("requestsTopic").asText()).isEqualTo("delay-requests");
    ProducerRecord<byte[], byte[]> request = producer.history().get(0);
    assertThat(text(request.key())).isEqualTo("order-42");
    assertThat(text(request.value())).isEqualTo("expire");
    assertThat(header(request, DelayHeaders.TARGET_TOPIC)).isEqualTo("orders");
    assertThat(header(request, DelayHeaders.AFTER)).isEqualTo("900000");
    assertThat(header(request, "traceparent")).isEqualTo("00-abc");
  }

  @Test
  void shouldAnswerABadScheduleWith400AndWriteNothing() throws Exception {
    ApiResponse response =
        call("POST", "/schedules", "{\"id\":\"a\",\"targetTopic\":\"t\",\"payload\":\"x\"}");
    assertThat(response.status()).isEqualTo(400);
    assertThat(response.contentType()).isEqualTo(ApiResponse.JSON);
    assertThat(json(response).path("error").asText()).isEqualTo("MISSING_TIME");
    assertThat(producer.history()).isEmpty();
  }

  @Test
  void shouldWriteCancelPauseAndResumeRequestsForTheIdInThePath() {
    // when
    int cancel = call("DELETE", "/schedules/" + ScheduleQueries.pathSegment("a/b"), "").status();
    int pause = call("POST", "/schedules/nightly/pause", "").status();
    int resume = call("POST", "/schedules/nightly/resume", "").status();

    // then
    assertThat(cancel).isEqualTo(202);
    assertThat(pause).isEqualTo(202);
    assertThat(resume).isEqualTo(202);
    assertThat(producer.history())
        .extracting(r -> text(r.key()) + ":" + header(r, DelayHeaders.ACTION))
        .containsExactly("a/b:cancel", "nightly:pause", "nightly:resume");
    assertThat(producer.history()).allSatisfy(r -> assertThat(r.value()).isNull());
  }

  @Test
  void shouldWriteTriggerAndRescheduleRequestsWithTheNewTimeAndNoPayload() {
    // when
    int trigger = call("POST", "/schedules/nightly/trigger", "{}").status();
    int at =
        call("POST", "/schedules/order-1/reschedule", "{\"fireAt\":\"2026-03-02T09:00:00Z\"}")
            .status();
    int cron =
        call(
                "POST",
                "/schedules/nightly/reschedule",
                "{\"cron\":\"0 0 9 * * ?\",\"zone\":\"Europe/Berlin\"}")
            .status();

    // then
    assertThat(List.of(trigger, at, cron)).containsOnly(202);
    assertThat(producer.history())
        .extracting(r -> text(r.key()) + ":" + header(r, DelayHeaders.ACTION))
        .containsExactly("nightly:trigger", "order-1:reschedule", "nightly:reschedule");
    assertThat(header(producer.history().get(1), DelayHeaders.FIRE_AT))
        .isEqualTo(Long.toString(Instant.parse("2026-03-02T09:00:00Z").toEpochMilli()));
    assertThat(header(producer.history().get(2), DelayHeaders.CRON)).isEqualTo("0 0 9 * * ?");
    assertThat(header(producer.history().get(2), DelayHeaders.ZONE)).isEqualTo("Europe/Berlin");
    assertThat(producer.history()).allSatisfy(r -> assertThat(r.value()).isNull());
  }

  @Test
  void shouldAnswerABadRescheduleWith400AndWriteNothing() throws Exception {
    ApiResponse none = call("POST", "/schedules/a/reschedule", "{}");
    ApiResponse two =
        call("POST", "/schedules/a/reschedule", "{\"after\":\"1s\",\"cron\":\"* * * * * ?\"}");
    ApiResponse target =
        call("POST", "/schedules/a/reschedule", "{\"after\":\"1s\",\"targetTopic\":\"t\"}");
    ApiResponse far = call("POST", "/schedules/a/reschedule", "{\"after\":\"P30D\"}");

    assertThat(json(none).path("error").asText()).isEqualTo("MISSING_TIME");
    assertThat(json(two).path("error").asText()).isEqualTo("CONFLICTING_TIMES");
    assertThat(json(target).path("error").asText()).isEqualTo("BAD_REQUEST");
    assertThat(json(target).path("message").asText()).contains("unknown field 'targetTopic'");
    assertThat(json(far).path("error").asText()).isEqualTo("TOO_FAR");
    assertThat(List.of(none, two, target, far)).extracting(ApiResponse::status).containsOnly(400);
    assertThat(producer.history()).isEmpty();
  }

  @Test
  void shouldWriteATenantsRequestToItsOwnTopicWithTheIdAsItSentIt() throws Exception {
    // An operator's token names the tenant; kdelay applies the request as the tenant's own.
    ApiResponse cancel = call(withTenants, "DELETE", "/schedules/job-1?tenant=teama", "");

    assertThat(cancel.status()).isEqualTo(202);
    assertThat(json(cancel).path("id").asText()).isEqualTo("job-1");
    assertThat(json(cancel).path("tenant").asText()).isEqualTo("teama");
    assertThat(json(cancel).path("requestsTopic").asText()).isEqualTo("delay-requests.teama");
    assertThat(producer.history())
        .extracting(ProducerRecord::topic, r -> text(r.key()))
        .containsExactly(org.assertj.core.groups.Tuple.tuple("delay-requests.teama", "job-1"));
  }

  @Test
  void shouldActForItsTokensTenantOnlyWhateverTheRequestNames() throws Exception {
    ApiResponse own =
        withTenants.handle(request("DELETE", "/schedules/job-1", false).asTenant("teama"));
    ApiResponse named =
        withTenants.handle(
            request("POST", "/schedules/job-1/pause?tenant=teama", false).asTenant("teama"));
    ApiResponse other =
        withTenants.handle(
            request("DELETE", "/schedules/job-1?tenant=teamb", false).asTenant("teama"));
    ApiResponse otherView =
        withTenants.handle(
            request("GET", "/schedules/job-1?tenant=teamb", false).asTenant("teama"));
    ApiResponse scheduled =
        withTenants.handle(
            new ApiRequest(
                "POST",
                List.of("schedules"),
                java.util.Map.of(),
                "{\"id\":\"job-2\",\"after\":\"1s\",\"targetTopic\":\"teama.out\",\"payload\":\"x\"}"
                    .getBytes(StandardCharsets.UTF_8),
                false,
                Optional.of("teama")));

    assertThat(List.of(own, named, scheduled)).extracting(ApiResponse::status).containsOnly(202);
    assertThat(other.status()).isEqualTo(403);
    assertThat(otherView.status()).isEqualTo(403);
    assertThat(json(other).path("message").asText()).contains("tenant teama only");
    assertThat(producer.history())
        .extracting(ProducerRecord::topic, r -> text(r.key()))
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("delay-requests.teama", "job-1"),
            org.assertj.core.groups.Tuple.tuple("delay-requests.teama", "job-1"),
            org.assertj.core.groups.Tuple.tuple("delay-requests.teama", "job-2"));
  }

  @Test
  void shouldAnswer400ForATenantTheDeploymentDoesNotHave() throws Exception {
    ApiResponse unknown = call(withTenants, "DELETE", "/schedules/job-1?tenant=teamc", "");
    ApiResponse malformed = call(withTenants, "DELETE", "/schedules/job-1?tenant=Team-A", "");
    ApiResponse noTenants = call(api, "DELETE", "/schedules/job-1?tenant=teama", "");

    assertThat(List.of(unknown, malformed, noTenants))
        .extracting(ApiResponse::status)
        .containsOnly(400);
    assertThat(json(unknown).path("error").asText()).isEqualTo("UNKNOWN_TENANT");
    assertThat(json(noTenants).path("message").asText()).contains("it has none");
    assertThat(producer.history()).isEmpty();
  }

  @Test
  void shouldHoldATenantsScheduleToItsOwnTargetsAndPayloadLimit() throws Exception {
    ApiResponse othersTopic =
        call(
            withTenants,
            "POST",
            "/schedules?tenant=teama",
            "{\"id\":\"a\",\"after\":\"1s\",\"targetTopic\":\"teamb.out\",\"payload\":\"x\"}");
    ApiResponse tooLarge =
        call(
            withTenants,
            "POST",
            "/schedules?tenant=teamb",
            "{\"id\":\"a\",\"after\":\"1s\",\"targetTopic\":\"teamb.out\",\"payload\":\"12345\"}");
    ApiResponse sharedLimit =
        call(
            withTenants,
            "POST",
            "/schedules?tenant=teama",
            "{\"id\":\"a\",\"after\":\"1s\",\"targetTopic\":\"teama.out\",\"payload\":\"12345\"}");

    assertThat(othersTopic.status()).isEqualTo(422);
    assertThat(json(othersTopic).path("message").asText()).contains("tenant teama's");
    assertThat(tooLarge.status()).isEqualTo(400);
    assertThat(json(tooLarge).path("error").asText()).isEqualTo("TOO_LARGE");
    assertThat(sharedLimit.status()).isEqualTo(202);
    assertThat(producer.history())
        .extracting(ProducerRecord::topic)
        .containsExactly("delay-requests.teama");
  }

  @Test
  void shouldAnswer400WhenThePathIdIsLongerThanTheLimit() throws Exception {
    ApiResponse response = call("DELETE", "/schedules/" + "x".repeat(17), "");
    assertThat(response.status()).isEqualTo(400);
    assertThat(json(response).path("error").asText()).isEqualTo("BAD_ID");
    assertThat(producer.history()).isEmpty();
  }

  @Test
  void shouldAnswer503WhenKafkaDoesNotAcknowledge() throws Exception {
    // given
    producer.sendException = new org.apache.kafka.common.errors.TimeoutException("no broker");

    // when
    ApiResponse response = call("DELETE", "/schedules/a", "");

    // then
    assertThat(response.status()).isEqualTo(503);
    assertThat(json(response).path("message").asText()).contains("no broker");
  }

  @Test
  void shouldAnswer404ForAnUnknownRouteAnd405ForAWrongMethod() throws Exception {
    ApiResponse unknown = call("GET", "/nothing/here", "");
    ApiResponse wrongMethod = call("PUT", "/schedules/a", "");

    assertThat(unknown.status()).isEqualTo(404);
    assertThat(json(unknown).path("error").asText()).isEqualTo("NOT_FOUND");
    assertThat(wrongMethod.status()).isEqualTo(405);
    assertThat(wrongMethod.headers().get("Allow")).contains("GET", "DELETE");
    assertThat(call("GET", "/schedules/a/pause", "").status()).isEqualTo(405);
  }

  @Test
  void shouldAskPeersOnlyForReadsOfSchedulesThatWereNotForwardedAlready() {
    assertThat(api.asksPeers(request("GET", "/schedules/a", false))).isTrue();
    assertThat(api.asksPeers(request("GET", "/schedules?limit=5", false))).isTrue();

    // A forwarded request is answered from this instance's stores: never forwarded again.
    assertThat(api.asksPeers(request("GET", "/schedules/a", true))).isFalse();
    assertThat(api.asksPeers(request("GET", "/schedules?limit=5", true))).isFalse();
    assertThat(api.asksPeers(request("POST", "/schedules", false))).isFalse();
    assertThat(api.asksPeers(request("DELETE", "/schedules/a", false))).isFalse();
    assertThat(api.asksPeers(request("GET", "/health/ready", false))).isFalse();
    assertThat(api.asksPeers(request("GET", "/", false))).isFalse();
  }

  @Test
  void shouldAnswerHealthAndMetricsAtOnceAndNothingElse() {
    assertThat(api.answersAtOnce(request("GET", "/health/live", false))).isTrue();
    assertThat(api.answersAtOnce(request("GET", "/health/ready", false))).isTrue();
    assertThat(api.answersAtOnce(request("GET", "/metrics", false))).isTrue();

    assertThat(api.answersAtOnce(request("POST", "/metrics", false))).isFalse();
    assertThat(api.answersAtOnce(request("GET", "/health", false))).isFalse();
    assertThat(api.answersAtOnce(request("GET", "/schedules/a", true))).isFalse();
    assertThat(api.answersAtOnce(request("DELETE", "/schedules/a", false))).isFalse();
  }

  @Test
  void shouldAnswerWhatNoRouteServesHereWithoutAskingPeers() {
    // A 404 or a 405 needs nobody's stores, under /schedules/ too.
    assertThat(api.asksPeers(request("GET", "/schedules/a/pause", false))).isFalse();
    assertThat(api.asksPeers(request("GET", "/schedules/a/b/c", false))).isFalse();
    assertThat(api.answersAtOnce(request("GET", "/schedules/a/pause", false))).isFalse();
  }

  @Test
  void shouldRefuseToBuildWithoutTheLimits() {
    AdminApi.Builder builder =
        AdminApi.builder().metrics(metrics).sendTimeout(Duration.ofSeconds(1));

    assertThatThrownBy(builder::build)
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("limits");
  }

  private static ApiRequest request(String method, String path, boolean forwarded) {
    return ApiRequest.of(method, URI.create(path), new byte[0], forwarded);
  }

  private ApiResponse call(String method, String path, String body) {
    return call(api, method, path, body);
  }

  private static ApiResponse call(AdminApi api, String method, String path, String body) {
    return api.handle(
        ApiRequest.of(method, URI.create(path), body.getBytes(StandardCharsets.UTF_8), false));
  }

  private static JsonNode json(ApiResponse response) throws Exception {
    return ApiResponse.MAPPER.readTree(response.body());
  }

  private static String header(ProducerRecord<byte[], byte[]> record, String name) {
    Header header = record.headers().lastHeader(name);
    return header == null ? null : text(header.value());
  }

  private static String text(byte[] bytes) {
    return new String(bytes, StandardCharsets.UTF_8);
  }
}

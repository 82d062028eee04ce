package dev.kdelay.service.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.service.http.HttpAccess.Headers;
import dev.kdelay.topology.DelayConfig;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Who may do what: the decisions, without a server. */
class HttpAccessTest {

  private static final String JSON_TYPE = "application/json";

  private static final List<String> SCHEDULES = List.of("schedules");
  private static final List<String> PAUSE = List.of("schedules", "a", "pause");

  private static final String R = "read-token-for-the-access-test";
  private static final String W = "write-token-for-the-access-test";
  private static final String P = "peer-token-for-the-access-test";

  private final HttpAccess withTokens =
      new HttpAccess(
          AccessTokens.parse(List.of("read " + R, "write " + W, "peer " + P), "tokens"),
          false,
          Set.of("https://console.example"));

  @Test
  void shouldBindLoopbackWhenNoAddressIsConfigured() throws Exception {
    ServiceConfig config = config(Map.of());

    assertThat(HttpAccess.bindAddress(config).isLoopbackAddress()).isTrue();
    assertThat(HttpAccess.from(config, HttpAccess.bindAddress(config)).peerToken()).isEmpty();
  }

  @Test
  void shouldRefuseToStartWhenBoundBeyondLoopbackWithoutTokens() {
    ServiceConfig config = config(Map.of(ServiceConfig.HTTP_BIND_ADDRESS_CONFIG, "0.0.0.0"));

    assertThatThrownBy(() -> HttpAccess.from(config, HttpAccess.bindAddress(config)))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("delay.http.bind.address=0.0.0.0")
        .hasMessageContaining("delay.http.auth.tokens.file")
        .hasMessageContaining("delay.http.auth.required=false");
  }

  @Test
  void shouldStartBeyondLoopbackWhenAuthIsExplicitlyNotRequiredOrTokensAreSet(@TempDir Path dir)
      throws Exception {
    Path tokens = Files.writeString(dir.resolve("tokens"), "write " + W + "\npeer " + P + "\n");
    ServiceConfig open =
        config(
            Map.of(
                ServiceConfig.HTTP_BIND_ADDRESS_CONFIG,
                "0.0.0.0",
                ServiceConfig.HTTP_AUTH_REQUIRED_CONFIG,
                "false"));
    ServiceConfig closed =
        config(
            Map.of(
                ServiceConfig.HTTP_BIND_ADDRESS_CONFIG,
                "0.0.0.0",
                ServiceConfig.HTTP_AUTH_TOKENS_FILE_CONFIG,
                tokens.toString()));

    assertThat(HttpAccess.from(open, InetAddress.getByName("0.0.0.0")).peerToken()).isEmpty();
    assertThat(HttpAccess.from(closed, InetAddress.getByName("0.0.0.0")).peerToken()).contains(P);
  }

  @Test
  void shouldAnswer401WithAChallengeWhenTheTokenIsMissingOrUnknown() {
    for (Headers headers : List.of(headers(), headers("Authorization", "Bearer nope"))) {
      ApiResponse refused = withTokens.refusal("GET", SCHEDULES, headers).orElseThrow();

      assertThat(refused.status()).isEqualTo(401);
      assertThat(refused.headers()).containsEntry("WWW-Authenticate", "Bearer realm=\"kdelay\"");
    }
  }

  @Test
  void shouldAnswer403WhenAReadTokenChangesState() {
    Headers read = headers("Authorization", "Bearer " + R, "Content-Type", "application/json");

    assertThat(withTokens.refusal("GET", SCHEDULES, read)).isEmpty();
    assertThat(withTokens.refusal("POST", SCHEDULES, read).orElseThrow().status()).isEqualTo(403);
    assertThat(withTokens.refusal("DELETE", List.of("schedules", "a"), read).orElseThrow().status())
        .isEqualTo(403);
  }

  @Test
  void shouldLeaveHealthAndMetricsOpenWhenTokensAreSetUnlessMetricsAreClosed() {
    HttpAccess metricsClosed =
        new HttpAccess(AccessTokens.parse(List.of("write " + W, "peer " + P), "t"), true, Set.of());

    assertThat(withTokens.refusal("GET", List.of("health", "live"), headers())).isEmpty();
    assertThat(withTokens.refusal("GET", List.of("metrics"), headers())).isEmpty();
    assertThat(metricsClosed.refusal("GET", List.of("health", "ready"), headers())).isEmpty();
    assertThat(metricsClosed.refusal("GET", List.of("metrics"), headers()).orElseThrow().status())
        .isEqualTo(401);
  }

  @Test
  void shouldServeTheConsolesFilesWithoutATokenButNoDataRoute() {
    for (List<String> file : List.of(List.<String>of(), List.of("console", "console.js"))) {
      assertThat(withTokens.refusal("GET", file, headers())).isEmpty();
      assertThat(withTokens.refusal("POST", file, headers("Content-Type", JSON_TYPE)))
          .hasValueSatisfying(refused -> assertThat(refused.status()).isEqualTo(401));
    }
    for (List<String> data :
        List.of(
            List.of("overview"),
            List.of("cron", "preview"),
            List.of("console"),
            List.of("console", "a", "b"),
            List.of("dead-letters"))) {
      assertThat(withTokens.refusal("GET", data, headers()))
          .as("%s", data)
          .hasValueSatisfying(refused -> assertThat(refused.status()).isEqualTo(401));
    }
    assertThat(
            withTokens.refusal("GET", List.of("overview"), headers("Authorization", "Bearer " + R)))
        .isEmpty();
  }

  @Test
  void shouldNameTheCallersRoleAndTokenFingerprintButNeverTheToken() {
    assertThat(HttpAccess.OPEN.caller(headers("Authorization", "Bearer " + W)))
        .isEqualTo("role=- token=-");
    assertThat(withTokens.caller(headers())).isEqualTo("role=- token=-");
    assertThat(withTokens.caller(headers("Authorization", "Bearer nope")))
        .isEqualTo("role=- token=unlisted");
    assertThat(withTokens.caller(headers("Authorization", "Bearer " + W)))
        .matches("role=write token=sha256:[0-9a-f]{8}");
    assertThat(withTokens.caller(headers("Authorization", "Bearer " + R)))
        .startsWith("role=read token=sha256:");
  }

  @Test
  void shouldAnswer415WhenAChangeIsNotJsonEvenWithoutABody() {
    for (HttpAccess access : List.of(HttpAccess.OPEN, withTokens)) {
      Headers plain = headers("Authorization", "Bearer " + W, "Content-Type", "text/plain");
      Headers none = headers("Authorization", "Bearer " + W);

      assertThat(access.refusal("POST", SCHEDULES, plain).orElseThrow().status()).isEqualTo(415);
      assertThat(access.refusal("POST", PAUSE, none).orElseThrow().status()).isEqualTo(415);
    }
    Headers json = headers("Content-Type", "Application/JSON; charset=utf-8");
    assertThat(HttpAccess.OPEN.refusal("POST", PAUSE, json)).isEmpty();
  }

  @Test
  void shouldTakeADeleteWithoutAContentTypeSinceNoBrowserSendsOneCrossSiteUnasked() {
    List<String> schedule = List.of("schedules", "a");
    for (HttpAccess access : List.of(HttpAccess.OPEN, withTokens)) {
      Headers plainCurl = headers("Authorization", "Bearer " + W, "Host", "localhost:8080");
      Headers fromElsewhere =
          headers(
              "Authorization", "Bearer " + W, "Host", "localhost:8080", "Origin", "https://evil");

      assertThat(access.refusal("DELETE", schedule, plainCurl)).isEmpty();
      assertThat(access.refusal("DELETE", schedule, fromElsewhere).orElseThrow().status())
          .isEqualTo(403);
    }
  }

  @Test
  void shouldAnswer403WhenAChangeComesFromAnOriginNotAllowed() {
    Headers evil =
        headers(
            "Authorization",
            "Bearer " + W,
            "Content-Type",
            "application/json",
            "Origin",
            "https://evil.example");
    Headers console =
        headers(
            "Authorization",
            "Bearer " + W,
            "Content-Type",
            "application/json",
            "Origin",
            "https://console.example");

    assertThat(HttpAccess.OPEN.refusal("POST", SCHEDULES, evil).orElseThrow().status())
        .isEqualTo(403);
    assertThat(withTokens.refusal("POST", SCHEDULES, evil).orElseThrow().bodyText())
        .contains("ORIGIN_NOT_ALLOWED");
    assertThat(withTokens.refusal("POST", SCHEDULES, console)).isEmpty();
    // A read from any origin is fine: it changes nothing.
    assertThat(HttpAccess.OPEN.refusal("GET", SCHEDULES, evil)).isEmpty();
  }

  @Test
  void shouldRefuseARequestAddressedToAForeignNameWhenNoTokensAreSet() {
    // given: the Host a browser sends after a site's DNS name was pointed at 127.0.0.1
    Headers rebound = headers("Host", "attacker.example:8080");
    HttpAccess named =
        new HttpAccess(AccessTokens.NONE, false, Set.of(), Set.of("kdelay.internal"), "http");

    // then: refused on every route but health, reads included
    ApiResponse refused = HttpAccess.OPEN.refusal("GET", SCHEDULES, rebound).orElseThrow();
    assertThat(refused.status()).isEqualTo(403);
    assertThat(refused.bodyText()).contains("HOST_NOT_ALLOWED", "attacker.example");
    assertThat(HttpAccess.OPEN.refusal("GET", List.of("metrics"), rebound)).isPresent();
    assertThat(HttpAccess.OPEN.refusal("GET", List.of("health", "live"), rebound)).isEmpty();
    // and: addresses, localhost and configured names are served
    for (String host :
        List.of("127.0.0.1:8080", "10.1.2.3", "[::1]:8080", "localhost:8080", "LOCALHOST")) {
      assertThat(HttpAccess.OPEN.refusal("GET", SCHEDULES, headers("Host", host)))
          .as(host)
          .isEmpty();
    }
    assertThat(named.refusal("GET", SCHEDULES, headers("Host", "KDELAY.internal:80"))).isEmpty();
    // and: with tokens a foreign page has no token to send, so the name does not matter
    assertThat(
            withTokens.refusal(
                "GET",
                SCHEDULES,
                headers("Host", "kdelay.example", "Authorization", "Bearer " + R)))
        .isEmpty();
  }

  @Test
  void shouldLetAPageOfTheEndpointsOwnOriginChangeState() {
    // given: the console, served by the instance itself, posting to it
    Headers own =
        headers(
            "Host", "127.0.0.1:8080", "Origin", "http://127.0.0.1:8080", "Content-Type", JSON_TYPE);
    Headers otherPort =
        headers(
            "Host", "127.0.0.1:8080", "Origin", "http://127.0.0.1:9999", "Content-Type", JSON_TYPE);
    HttpAccess https = new HttpAccess(AccessTokens.NONE, false, Set.of(), Set.of(), "https");

    assertThat(HttpAccess.OPEN.refusal("POST", SCHEDULES, own)).isEmpty();
    assertThat(HttpAccess.OPEN.refusal("POST", SCHEDULES, otherPort).orElseThrow().status())
        .isEqualTo(403);
    // an http page is not the origin of an https endpoint
    assertThat(https.refusal("POST", SCHEDULES, own).orElseThrow().status()).isEqualTo(403);
  }

  @Test
  void shouldIgnoreTheForwardedMarkerWhenTheCallerHasNoValidToken() {
    Headers anonymous = headers(ApiRequest.FORWARDED_HEADER, "true");
    Headers peer = headers(ApiRequest.FORWARDED_HEADER, "true", "Authorization", "Bearer " + P);

    assertThat(withTokens.forwarded(anonymous)).isFalse();
    assertThat(withTokens.forwarded(peer)).isTrue();
    assertThat(HttpAccess.OPEN.forwarded(anonymous)).isTrue();
    assertThat(HttpAccess.OPEN.forwarded(headers())).isFalse();
  }

  @Test
  void shouldBelieveTheForwardedMarkerOnlyFromThePeerToken() {
    Headers fromReader =
        headers(ApiRequest.FORWARDED_HEADER, "true", "Authorization", "Bearer " + R);
    Headers fromWriter =
        headers(ApiRequest.FORWARDED_HEADER, "true", "Authorization", "Bearer " + W);
    Headers fromPeer = headers(ApiRequest.FORWARDED_HEADER, "true", "Authorization", "Bearer " + P);

    assertThat(withTokens.forwarded(fromReader)).isFalse();
    assertThat(withTokens.forwarded(fromWriter)).isFalse();
    assertThat(withTokens.forwarded(fromPeer)).isTrue();
    assertThat(withTokens.peerToken()).contains(P);
  }

  @Test
  void shouldLetThePeerTokenReadButChangeNothing() {
    Headers peer = headers("Authorization", "Bearer " + P, "Content-Type", JSON_TYPE);

    assertThat(withTokens.refusal("GET", SCHEDULES, peer)).isEmpty();
    for (String method : List.of("POST", "DELETE")) {
      assertThat(withTokens.refusal(method, SCHEDULES, peer).orElseThrow().status())
          .as(method)
          .isEqualTo(403);
    }
  }

  @Test
  void shouldConfineATenantsTokenToItsTenantAndKeepTheWholeDeploymentFromIt() {
    String teama = "teama-token-for-the-access-test";
    HttpAccess access =
        new HttpAccess(
            AccessTokens.parse(
                List.of("write " + teama + " orders tenant=teama", "write " + W, "peer " + P),
                "tokens"),
            true,
            Set.of());
    Headers tenant = headers("Authorization", "Bearer " + teama, "Content-Type", JSON_TYPE);
    Headers operator = headers("Authorization", "Bearer " + W, "Content-Type", JSON_TYPE);

    assertThat(access.tenant(tenant)).contains("teama");
    assertThat(access.tenant(operator)).isEmpty();
    assertThat(access.tenant(headers("Authorization", "Bearer " + P))).isEmpty();
    assertThat(access.refusal("GET", SCHEDULES, tenant)).isEmpty();
    assertThat(access.refusal("POST", PAUSE, tenant)).isEmpty();
    assertThat(access.refusal("GET", List.of("overview"), tenant))
        .hasValueSatisfying(refused -> assertThat(refused.status()).isEqualTo(403));
    assertThat(access.refusal("GET", List.of("overview"), operator)).isEmpty();
    // the metrics answer a tenant's token with its own series (AdminApiTest)
    assertThat(access.refusal("GET", List.of("metrics"), tenant)).isEmpty();
    assertThat(access.caller(tenant)).isEqualTo("role=write token=orders tenant=teama");
  }

  @Test
  void shouldRefuseToStartWhenATokensTenantIsNotOneOfTheDeployments(@TempDir Path dir)
      throws Exception {
    Path tokens =
        Files.writeString(dir.resolve("tokens"), "write " + W + " tenant=teamc\npeer " + P + "\n");
    ServiceConfig config =
        config(
            Map.of(
                ServiceConfig.HTTP_AUTH_TOKENS_FILE_CONFIG,
                tokens.toString(),
                DelayConfig.TENANTS_CONFIG,
                "teama,teamb"));
    ServiceConfig known =
        config(
            Map.of(
                ServiceConfig.HTTP_AUTH_TOKENS_FILE_CONFIG,
                tokens.toString(),
                DelayConfig.TENANTS_CONFIG,
                "teama,teamc"));

    assertThatThrownBy(() -> HttpAccess.from(config, InetAddress.getLoopbackAddress()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("tenant 'teamc', which is not one of delay.tenants (teama,teamb)")
        .hasMessageNotContaining(W);
    assertThat(HttpAccess.from(known, InetAddress.getLoopbackAddress()).peerToken()).contains(P);
  }

  /** Headers as Jetty gives them: looked up by name whatever its case, the first value. */
  private static Headers headers(String... namesAndValues) {
    Map<String, String> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    for (int i = 0; i < namesAndValues.length; i += 2) {
      headers.putIfAbsent(namesAndValues[i], namesAndValues[i + 1]);
    }
    return headers::get;
  }

  private static ServiceConfig config(Map<String, Object> more) {
    Map<String, Object> props = new HashMap<>(more);
    props.putIfAbsent(DelayConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9092");
    return new ServiceConfig(props);
  }
}

package dev.kdelay.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.service.ServiceMetrics;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.streams.state.HostInfo;
import org.junit.jupiter.api.Test;

/** The console's files, served from the jar, and its place among the API's routes. */
class ConsoleRoutesTest {

  private final ServiceMetrics metrics = new ServiceMetrics(Clock.systemUTC(), () -> 0);
  private final ConsoleRoutes console =
      new ConsoleRoutes(
          metrics,
          new FireHistory(metrics::fireCounts, Clock.systemUTC()),
          ConsoleRoutes.instances(List::of, new HostInfo("127.0.0.1", 1), "requests"),
          new Peers(Duration.ofSeconds(1)));

  @Test
  void shouldServeThePageWithAPolicyThatLoadsNothingButItsOwnFiles() {
    ApiResponse page = console.index();

    assertThat(page.status()).isEqualTo(200);
    assertThat(page.contentType()).startsWith("text/html");
    assertThat(page.bodyText()).contains("/console/console.js", "/console/console.css");
    assertThat(page.headers().get("Content-Security-Policy"))
        .contains("default-src 'none'", "script-src 'self'", "frame-ancestors 'none'");
    assertThat(page.headers()).containsEntry("X-Content-Type-Options", "nosniff");
  }

  @Test
  void shouldServeTheScriptAndStyleSheetAndNothingElse() {
    assertThat(console.file("console.js").contentType()).startsWith("text/javascript");
    assertThat(console.file("console.css").contentType()).startsWith("text/css");
    for (String other : List.of("index.htm", "..", "../console.js", "ConsoleRoutes.class")) {
      assertThat(console.file(other).status()).as(other).isEqualTo(404);
    }
  }

  @Test
  void shouldRouteThePageAndFilesWithoutTakingAnApiPath() {
    AdminApi api =
        AdminApi.builder()
            .metrics(metrics)
            .limits(new ScheduleBody.ServiceLimits(1024, 1024, Long.MAX_VALUE))
            .clock(Clock.systemUTC())
            .sendTimeout(Duration.ofSeconds(1))
            .console(console)
            .build();

    ApiResponse page = api.handle(get("/"));
    ApiResponse script = api.handle(get("/console/console.js"));
    ApiResponse missing = api.handle(get("/console/nope.js"));
    ApiResponse posted = api.handle(ApiRequest.of("POST", "/", null, new byte[0], false));

    assertThat(page.status()).isEqualTo(200);
    assertThat(script.status()).isEqualTo(200);
    assertThat(missing.status()).isEqualTo(404);
    assertThat(posted.status()).isEqualTo(405);
    assertThat(api.answersAtOnce(get("/console/console.js"))).isTrue();
    assertThat(api.answersAtOnce(get("/overview"))).isFalse();
    assertThat(api.asksPeers(get("/overview"))).isTrue();
    assertThat(api.answersAtOnce(get("/"))).isTrue();
    assertThat(api.asksPeers(ApiRequest.of("GET", URI.create("/overview"), new byte[0], true)))
        .isFalse();
  }

  private static ApiRequest get(String path) {
    return ApiRequest.of("GET", path, null, new byte[0], false);
  }
}

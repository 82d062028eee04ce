package dev.kdelay.service.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import org.apache.kafka.streams.state.HostInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What an instance takes from a peer it forwarded a read to: JSON up to a size, served as kdelay's
 * own, whatever the host at the advertised address sends. A host that joined the group can
 * advertise any address; its answer must not become a page of another type, a flood, or headers of
 * its choosing in kdelay's name.
 */
class PeersTest {

  private final Peers peers = new Peers(Duration.ofSeconds(10));
  private HttpServer rogue;

  @AfterEach
  void close() {
    peers.close();
    if (rogue != null) {
      rogue.stop(0);
    }
  }

  @Test
  void shouldRefuseAnAnswerThatIsNotJson() throws Exception {
    HostInfo peer =
        serve("text/html", "<script>alert(1)</script>".getBytes(StandardCharsets.UTF_8));

    assertThatThrownBy(() -> peers.get(peer, "/schedules"))
        .isInstanceOfSatisfying(
            ApiException.class,
            e -> {
              assertThat(e.status()).isEqualTo(502);
              assertThat(e.getMessage()).contains("content type");
            });
  }

  @Test
  void shouldRefuseAnAnswerLargerThanTheBound() throws Exception {
    byte[] flood = new byte[Peers.MAX_ANSWER_BYTES + 1];
    Arrays.fill(flood, (byte) ' ');
    HostInfo peer = serve("application/json", flood);

    assertThatThrownBy(() -> peers.get(peer, "/schedules"))
        .isInstanceOfSatisfying(
            ApiException.class, e -> assertThat(e.getMessage()).contains("more than"));
  }

  @Test
  void shouldServeAJsonAnswerAsItsOwnWithNoneOfThePeersHeadersButRetryAfter() throws Exception {
    HostInfo peer = serve("Application/JSON; charset=utf-8", "{\"tasks\":[]}".getBytes());

    ApiResponse answer = peers.get(peer, "/schedules");

    assertThat(answer.status()).isEqualTo(200);
    assertThat(answer.contentType()).isEqualTo(ApiResponse.JSON);
    assertThat(answer.bodyText()).isEqualTo("{\"tasks\":[]}");
    assertThat(answer.headers()).containsOnlyKeys("Retry-After");
  }

  @Test
  void shouldSendNothingToAHostNotAmongThePeerHosts() throws Exception {
    HostInfo rogueHost = serve("application/json", "{}".getBytes(StandardCharsets.UTF_8));
    java.util.concurrent.atomic.AtomicInteger asked =
        new java.util.concurrent.atomic.AtomicInteger();
    rogue.createContext("/counted", exchange -> asked.incrementAndGet());
    try (Peers listed =
        new Peers(
            Duration.ofSeconds(10),
            java.util.Optional.of("peer-token-that-must-not-leave"),
            java.util.Optional.empty(),
            java.util.List.of("kdelay-1.internal", "LOCALHOST"))) {
      // when / then: 127.0.0.1 is not listed; localhost is, whatever its case
      assertThatThrownBy(() -> listed.get(rogueHost, "/counted"))
          .isInstanceOfSatisfying(
              ApiException.class,
              e -> {
                assertThat(e.status()).isEqualTo(503);
                assertThat(e.getMessage()).contains("delay.http.peer.hosts");
              });
      assertThat(asked).hasValue(0);
      assertThat(listed.get(new HostInfo("localhost", rogueHost.port()), "/").status())
          .isEqualTo(200);
    }
  }

  /** A server on loopback that answers every request with this type and body. */
  private HostInfo serve(String contentType, byte[] body) throws Exception {
    rogue = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    rogue.createContext(
        "/",
        exchange -> {
          exchange.getResponseHeaders().add("Content-Type", contentType);
          exchange.getResponseHeaders().add("Set-Cookie", "session=stolen");
          exchange.getResponseHeaders().add("Retry-After", "3");
          exchange.sendResponseHeaders(200, body.length);
          try (var out = exchange.getResponseBody()) {
            out.write(body);
          }
        });
    rogue.start();
    return new HostInfo("127.0.0.1", rogue.getAddress().getPort());
  }
}

package dev.kdelay.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.streams.state.HostInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The endpoint's two lanes, with one thread each, so that "full" is exact: a thread held on a latch
 * is busy, and the next request for a lane without a queue is turned away at once.
 */
class HttpEndpointTest {

  /**
   * The local lane may queue: the thread that handed a request to the peer lane takes the next one
   * when it is back, however late that is.
   */
  private static final HttpEndpoint.Capacity PEER_LANE_FULL_AT_ONE =
      new HttpEndpoint.Capacity(1, 4, 1, 0);

  private static final HttpEndpoint.Capacity LOCAL_LANE_FULL_AT_ONE =
      new HttpEndpoint.Capacity(1, 0, 1, 0);
  private static final long WAIT_SECONDS = 10;

  private final HttpClient client = HttpClient.newHttpClient();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final List<AutoCloseable> closeables = new ArrayList<>();
  private final CountDownLatch release = new CountDownLatch(1);

  @AfterEach
  void close() throws Exception {
    release.countDown();
    for (AutoCloseable closeable : closeables) {
      closeable.close();
    }
  }

  @Test
  void shouldAnswerOverloadedWithRetryAfterWhenThePeerLaneIsFull() throws Exception {
    // given: the one peer-lane thread waits on a "peer"
    Holding api = new Holding();
    String url = start(api, PEER_LANE_FULL_AT_ONE);
    CompletableFuture<HttpResponse<String>> waiting = sendAsync(url + "/peer/held", false);
    assertThat(api.entered.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();

    // when
    HttpResponse<String> turnedAway = send(url + "/peer/other", false);

    // then
    assertThat(turnedAway.statusCode()).isEqualTo(503);
    assertThat(json(turnedAway).path("error").asText()).isEqualTo("OVERLOADED");
    assertThat(turnedAway.headers().firstValue("Retry-After")).hasValue("1");
    assertThat(overloaded("peer")).isEqualTo(1);

    // and: the local lane still answers, and the held request completes once released
    assertThat(send(url + "/local", false).statusCode()).isEqualTo(200);
    release.countDown();
    assertThat(waiting.get(WAIT_SECONDS, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
  }

  @Test
  void shouldServeAForwardedRequestOnTheLocalLaneWhileThePeerLaneIsFull() throws Exception {
    // given
    Holding api = new Holding();
    String url = start(api, PEER_LANE_FULL_AT_ONE);
    sendAsync(url + "/peer/held", false);
    assertThat(api.entered.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();

    // when: the same route, forwarded by another instance
    HttpResponse<String> forwarded = send(url + "/peer/other", true);

    // then
    assertThat(forwarded.statusCode()).isEqualTo(200);
    assertThat(json(forwarded).path("thread").asText()).matches("kdelay-http-\\d+");
    assertThat(overloaded("peer")).isZero();
  }

  @Test
  void shouldAnswerOverloadedFromTheOverflowThreadWhenTheLocalLaneIsFull() throws Exception {
    // given: the one local-lane thread is held
    Holding api = new Holding();
    String url = start(api, LOCAL_LANE_FULL_AT_ONE);
    CompletableFuture<HttpResponse<String>> waiting = sendAsync(url + "/local/held", false);
    assertThat(api.entered.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();

    // when
    HttpResponse<String> turnedAway = send(url + "/local", false);

    // then
    assertThat(turnedAway.statusCode()).isEqualTo(503);
    assertThat(json(turnedAway).path("error").asText()).isEqualTo("OVERLOADED");
    assertThat(json(turnedAway).path("message").asText()).contains("local");
    assertThat(turnedAway.headers().firstValue("Retry-After")).hasValue("1");
    assertThat(overloaded("local")).isEqualTo(1);
    release.countDown();
    assertThat(waiting.get(WAIT_SECONDS, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
  }

  @Test
  void shouldStillAnswerHealthChecksWhenTheLocalLaneIsFull() throws Exception {
    // given
    Holding api = new Holding();
    String url = start(api, LOCAL_LANE_FULL_AT_ONE);
    sendAsync(url + "/local/held", false);
    assertThat(api.entered.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();

    // when
    HttpResponse<String> health = send(url + "/health/live", false);

    // then: answered by the overflow thread, which turns everything else away
    assertThat(health.statusCode()).isEqualTo(200);
    assertThat(json(health).path("thread").asText()).isEqualTo("kdelay-http-overflow");
    assertThat(overloaded("local")).isZero();
  }

  @Test
  void shouldAnswerTwoInstancesForwardingToEachOtherWhenEveryPeerThreadWaits() throws Exception {
    // given: two instances whose one peer-lane thread each forwards to the other instance, and
    // does so only once both are taken, so that each forwarded request finds the receiving
    // instance's peer lane busy; on one shared pool this would wait until the peer timeout
    CountDownLatch bothTaken = new CountDownLatch(2);
    Forwarding a = new Forwarding("a", bothTaken);
    Forwarding b = new Forwarding("b", bothTaken);
    String aUrl = start(a, PEER_LANE_FULL_AT_ONE);
    String bUrl = start(b, PEER_LANE_FULL_AT_ONE);
    a.other = new HostInfo("127.0.0.1", URI.create(bUrl).getPort());
    b.other = new HostInfo("127.0.0.1", URI.create(aUrl).getPort());

    // when
    CompletableFuture<HttpResponse<String>> viaA = sendAsync(aUrl + "/lookup", false);
    CompletableFuture<HttpResponse<String>> viaB = sendAsync(bUrl + "/lookup", false);

    // then: each answered by the other one, well within the peer timeout
    HttpResponse<String> answerA = viaA.get(WAIT_SECONDS, TimeUnit.SECONDS);
    HttpResponse<String> answerB = viaB.get(WAIT_SECONDS, TimeUnit.SECONDS);
    assertThat(answerA.statusCode()).as(answerA.body()).isEqualTo(200);
    assertThat(json(answerA).path("answeredBy").asText()).isEqualTo("b");
    assertThat(answerB.statusCode()).as(answerB.body()).isEqualTo(200);
    assertThat(json(answerB).path("answeredBy").asText()).isEqualTo("a");
  }

  /**
   * Paths under /peer ask peers unless forwarded, paths under /health answer at once, paths ending
   * in /held wait for release.
   */
  private final class Holding implements HttpEndpoint.Api {
    final CountDownLatch entered = new CountDownLatch(1);

    @Override
    public ApiResponse handle(ApiRequest request) {
      if (request.segments().get(request.segments().size() - 1).equals("held")) {
        entered.countDown();
        awaitUninterruptibly(release);
      }
      return ApiResponse.json(200, Map.of("thread", Thread.currentThread().getName()));
    }

    @Override
    public boolean asksPeers(ApiRequest request) {
      return !request.forwarded() && request.segments().get(0).equals("peer");
    }

    @Override
    public boolean answersAtOnce(ApiRequest request) {
      return request.segments().get(0).equals("health");
    }
  }

  /** Answers a forwarded request itself; forwards any other once both instances are waiting. */
  private final class Forwarding implements HttpEndpoint.Api {
    private final String name;
    private final CountDownLatch bothTaken;
    private final Peers peers = new Peers(Duration.ofSeconds(WAIT_SECONDS * 2));
    volatile HostInfo other;

    Forwarding(String name, CountDownLatch bothTaken) {
      this.name = name;
      this.bothTaken = bothTaken;
      closeables.add(peers);
    }

    @Override
    public ApiResponse handle(ApiRequest request) {
      if (request.forwarded()) {
        return ApiResponse.json(200, Map.of("answeredBy", name));
      }
      bothTaken.countDown();
      awaitUninterruptibly(bothTaken);
      return peers.get(other, "/lookup");
    }

    @Override
    public boolean asksPeers(ApiRequest request) {
      return !request.forwarded();
    }

    @Override
    public boolean answersAtOnce(ApiRequest request) {
      return false;
    }
  }

  @Test
  void shouldAnswer500WithAnIdButNoExceptionTextWhenTheApiFails() throws Exception {
    // given: an API whose failure names what a caller must not learn
    HttpEndpoint.Api failing =
        new HttpEndpoint.Api() {
          @Override
          public ApiResponse handle(ApiRequest request) {
            throw new IllegalStateException("broker secret-host.internal:9093 said no");
          }

          @Override
          public boolean asksPeers(ApiRequest request) {
            return false;
          }

          @Override
          public boolean answersAtOnce(ApiRequest request) {
            return false;
          }
        };
    String url = start(failing, HttpEndpoint.Capacity.DEFAULT);

    // when
    HttpResponse<String> response = send(url + "/anything", false);

    // then
    assertThat(response.statusCode()).isEqualTo(500);
    assertThat(response.body()).doesNotContain("secret-host", "IllegalStateException");
    assertThat(json(response).path("error").asText()).isEqualTo("INTERNAL");
    assertThat(json(response).path("id").asText()).hasSize(36);
  }

  @Test
  void shouldServeHealthWhileAClientSendsItsHeadersAByteASecond() throws Exception {
    // given: a client that has sent a few bytes of its request line and goes on, a byte a second
    String url = start(new Holding(), HttpEndpoint.Capacity.DEFAULT);
    URI uri = URI.create(url);
    try (java.net.Socket slow = new java.net.Socket(uri.getHost(), uri.getPort())) {
      java.io.OutputStream out = slow.getOutputStream();
      CompletableFuture<Void> dripping =
          CompletableFuture.runAsync(
              () -> {
                try {
                  for (byte b : "GET /health/live HTTP/1.1\r\nHost: x\r\n".getBytes()) {
                    out.write(b);
                    out.flush();
                    Thread.sleep(1000); // the client under test is slow on purpose
                  }
                } catch (Exception e) {
                  // The server closed the connection: what it should do, eventually.
                }
              });
      out.write('G');
      out.flush();

      // when
      long started = System.nanoTime();
      HttpResponse<String> live = send(url + "/health/live", false);

      // then: answered by another thread at once, not after the slow client's last byte
      assertThat(live.statusCode()).isEqualTo(200);
      assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
      dripping.cancel(true);
    }
    // The JDK's own limit, which frees a thread held so, is in place.
    assertThat(System.getProperty("sun.net.httpserver.maxReqTime")).isNotNull();
  }

  @Test
  void shouldListenOnLoopbackOnlyWhenNoAddressIsGiven() {
    HttpEndpoint endpoint = HttpEndpoint.bind(0, 1024);
    closeables.add(endpoint);

    assertThat(endpoint.address().isLoopbackAddress()).isTrue();
  }

  private String start(HttpEndpoint.Api api, HttpEndpoint.Capacity capacity) {
    HttpEndpoint endpoint = HttpEndpoint.bind(0, 1024, capacity);
    closeables.add(endpoint);
    endpoint.start(api, registry);
    return "http://127.0.0.1:" + endpoint.port();
  }

  private double overloaded(String lane) {
    return registry.get("kdelay.http.requests.overloaded").tag("lane", lane).counter().count();
  }

  private HttpResponse<String> send(String url, boolean forwarded) throws Exception {
    return sendAsync(url, forwarded).get(WAIT_SECONDS, TimeUnit.SECONDS);
  }

  private CompletableFuture<HttpResponse<String>> sendAsync(String url, boolean forwarded) {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).GET();
    if (forwarded) {
      request.header(ApiRequest.FORWARDED_HEADER, "true");
    }
    return client.sendAsync(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static JsonNode json(HttpResponse<String> response) throws Exception {
    return ApiResponse.MAPPER.readTree(response.body());
  }

  private static void awaitUninterruptibly(CountDownLatch latch) {
    try {
      if (!latch.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
        throw new IllegalStateException("latch not released within " + WAIT_SECONDS + " s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}

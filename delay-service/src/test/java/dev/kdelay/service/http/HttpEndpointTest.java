package dev.kdelay.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
  void shouldAnswerOverloadedWhenTheLocalLaneIsFull() throws Exception {
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

    // then: answered on the server's own thread, not in the full lane
    assertThat(health.statusCode()).isEqualTo(200);
    assertThat(json(health).path("thread").asText()).startsWith("kdelay-http-io");
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
      if (request.method().equals("DELETE")) {
        // as the admin API accepts a change: written to the request topic
        return ApiResponse.json(
            202,
            Map.of(
                "id",
                request.segments().get(request.segments().size() - 1),
                "action",
                "cancel",
                "status",
                "accepted",
                "partition",
                2,
                "offset",
                18));
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
            if (request.segments().contains("class-missing")) {
              throw new NoClassDefFoundError("dev/kdelay/secret-host/Missing");
            }
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

    // and: a class missing from the deployment is answered the same way, not left hanging
    HttpResponse<String> linkage = send(url + "/class-missing", false);
    assertThat(linkage.statusCode()).isEqualTo(500);
    assertThat(linkage.body()).doesNotContain("secret-host", "NoClassDefFoundError");
  }

  @Test
  void shouldServeOthersWhileManyClientsSendTheirHeadersAByteASecondAndCloseThemInTime()
      throws Exception {
    // given: more slow clients than the server and both lanes have threads, each having sent a
    // few bytes of its request line, and going on a byte a second
    Duration readTimeout = Duration.ofSeconds(2);
    HttpEndpoint endpoint =
        HttpEndpoint.bind(
            InetAddress.getLoopbackAddress(),
            0,
            Optional.empty(),
            new HttpEndpoint.Limits(1024, readTimeout, HttpEndpoint.Capacity.DEFAULT));
    closeables.add(endpoint);
    endpoint.start(new Holding(), registry);
    String url = "http://127.0.0.1:" + endpoint.port();
    List<SlowClient> slow = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      slow.add(new SlowClient(endpoint.port(), "GET /local HTTP/1.1\r\nHost: x\r\n"));
    }
    slow.forEach(client -> closeables.add(client));
    slow.forEach(SlowClient::start);

    // when
    HttpResponse<String> live = send(url + "/health/live", false);
    HttpResponse<String> other = send(url + "/local", false);

    // then: both served at once, not after the slow clients' last bytes
    assertThat(live.statusCode()).isEqualTo(200);
    assertThat(other.statusCode()).isEqualTo(200);
    // and: every slow client is cut off within the read timeout and one check, long before it
    // would have sent its whole request line and headers (34 s at a byte a second)
    for (SlowClient client : slow) {
      assertThat(client.closed.get(readTimeout.toSeconds() * 5, TimeUnit.SECONDS))
          .as("seconds until the server closed a slow client")
          .isLessThan(readTimeout.toSeconds() * 3);
    }
  }

  @Test
  void shouldAnswer408WhenABodyDoesNotArriveInTime() throws Exception {
    // given
    HttpEndpoint endpoint =
        HttpEndpoint.bind(
            InetAddress.getLoopbackAddress(),
            0,
            Optional.empty(),
            new HttpEndpoint.Limits(1024, Duration.ofSeconds(1), HttpEndpoint.Capacity.DEFAULT));
    closeables.add(endpoint);
    endpoint.start(new Holding(), registry);

    // when: a body announced as 10 bytes, of which 2 arrive
    try (Socket socket = new Socket("127.0.0.1", endpoint.port())) {
      socket.setSoTimeout((int) TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
      socket
          .getOutputStream()
          .write(
              ("POST /local HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                      + "Content-Length: 10\r\n\r\n{}")
                  .getBytes(StandardCharsets.US_ASCII));
      String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);

      // then
      assertThat(answer).startsWith("HTTP/1.1 408").contains("REQUEST_TIMEOUT");
    }
  }

  @Test
  void shouldRefuseAReadAddressedToAForeignNameAsAfterDnsRebinding() throws Exception {
    // given: an endpoint without tokens, and a request as a browser sends it to a site whose
    // name now resolves to 127.0.0.1
    String url = start(new Holding(), HttpEndpoint.Capacity.DEFAULT);
    int port = URI.create(url).getPort();

    // when
    String rebound = rawGet(port, "/local", "attacker.example:" + port);
    String direct = rawGet(port, "/local", "127.0.0.1:" + port);

    // then
    assertThat(rebound).startsWith("HTTP/1.1 403").contains("HOST_NOT_ALLOWED");
    assertThat(direct).startsWith("HTTP/1.1 200");
  }

  @Test
  void shouldCloseTheConnectionWhenRefusingARequestWhoseBodyIsStillComing() throws Exception {
    // given: a request refused on its head, whose announced body has not all arrived
    String url = start(new Holding(), HttpEndpoint.Capacity.DEFAULT);
    int port = URI.create(url).getPort();
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout((int) TimeUnit.SECONDS.toMillis(WAIT_SECONDS));

      // when
      socket
          .getOutputStream()
          .write(
              ("POST /local HTTP/1.1\r\nHost: attacker.example:"
                      + port
                      + "\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{}")
                  .getBytes(StandardCharsets.US_ASCII));
      // Read to the end: the server closes the connection after its answer, cleanly.
      String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);

      // then: the client is told not to send its next request on this connection, which the
      // server would drop with the rest of the unread body
      assertThat(answer).startsWith("HTTP/1.1 403").containsIgnoringCase("Connection: close");
    }
  }

  private static String rawGet(int port, String path, String host) throws IOException {
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout((int) TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
      socket
          .getOutputStream()
          .write(
              ("GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n")
                  .getBytes(StandardCharsets.US_ASCII));
      return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  @Test
  void shouldAnswer413ForABodyOverTheLimitWithoutReadingIt() throws Exception {
    // given
    String url = start(new Holding(), HttpEndpoint.Capacity.DEFAULT);

    // when
    HttpResponse<String> response =
        client.send(
            HttpRequest.newBuilder(URI.create(url + "/local"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("x".repeat(1025)))
                .build(),
            HttpResponse.BodyHandlers.ofString());

    // then
    assertThat(response.statusCode()).isEqualTo(413);
    assertThat(json(response).path("error").asText()).isEqualTo("TOO_LARGE");
  }

  @Test
  void shouldCountAndLogRefusedRequestsAndAuditEveryChangeWithoutPrintingAToken() throws Exception {
    // given: an endpoint with a read and a write token, its log lines captured
    String readToken = "read-token-of-the-audit-test";
    String writeToken = "write-token-of-the-audit-test";
    HttpAccess access =
        new HttpAccess(
            AccessTokens.parse(
                List.of("read " + readToken, "write " + writeToken, "peer " + "p".repeat(24)),
                "tokens"),
            false,
            java.util.Set.of());
    HttpEndpoint endpoint = HttpEndpoint.bind(0, 1024, HttpEndpoint.Capacity.DEFAULT);
    closeables.add(endpoint);
    endpoint.start(new Holding(), registry, access);
    String url = "http://127.0.0.1:" + endpoint.port() + "/schedules/order-42";
    List<String> lines = new java.util.concurrent.CopyOnWriteArrayList<>();
    org.apache.logging.log4j.core.Logger logger =
        (org.apache.logging.log4j.core.Logger)
            org.apache.logging.log4j.LogManager.getLogger(HttpEndpoint.class);
    org.apache.logging.log4j.core.Appender capture =
        new org.apache.logging.log4j.core.appender.AbstractAppender(
            "audit-capture", null, null, true, null) {
          @Override
          public void append(org.apache.logging.log4j.core.LogEvent event) {
            lines.add(event.getMessage().getFormattedMessage());
          }
        };
    capture.start();
    logger.addAppender(capture);
    try {
      // when: a DELETE without a token, one with the read token, one with the write token
      int unauthorized = delete(url, null).statusCode();
      int forbidden = delete(url, readToken).statusCode();
      int served = delete(url, writeToken).statusCode();

      // then
      assertThat(List.of(unauthorized, forbidden, served)).containsExactly(401, 403, 202);
      assertThat(refused("UNAUTHORIZED")).isEqualTo(1);
      assertThat(refused("FORBIDDEN")).isEqualTo(1);
      String fingerprint =
          "sha256:"
              + java.util.HexFormat.of()
                  .formatHex(
                      java.security.MessageDigest.getInstance("SHA-256")
                          .digest(writeToken.getBytes(StandardCharsets.UTF_8)),
                      0,
                      4);
      assertThat(lines)
          .filteredOn(line -> line.startsWith("event=http-refused"))
          .hasSize(2)
          .anySatisfy(
              line ->
                  assertThat(line)
                      .contains(
                          "status=401 code=UNAUTHORIZED method=DELETE path=/schedules/order-42")
                      .contains("remote=127.0.0.1:")
                      .contains("role=- token=-"))
          .anySatisfy(
              line -> assertThat(line).contains("status=403 code=FORBIDDEN", "role=read token="));
      assertThat(lines)
          .filteredOn(line -> line.startsWith("event=audit"))
          .singleElement()
          .asString()
          .startsWith(
              "event=audit action=cancel id=order-42 partition=2 offset=18 status=202 code=-"
                  + " method=DELETE path=/schedules/order-42")
          .contains("remote=127.0.0.1:")
          .contains("role=write token=" + fingerprint);
      assertThat(String.join("\n", lines)).doesNotContain(readToken, writeToken);
    } finally {
      logger.removeAppender(capture);
    }
  }

  private HttpResponse<String> delete(String url, String token) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).DELETE();
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private double refused(String code) {
    return registry.get("kdelay.http.requests.refused").tag("code", code).counter().count();
  }

  @Test
  void shouldKeepAnEncodedSlashInsideOneSegment() throws Exception {
    // given: an API that echoes the segments it was given
    HttpEndpoint.Api echo =
        new HttpEndpoint.Api() {
          @Override
          public ApiResponse handle(ApiRequest request) {
            return ApiResponse.json(200, Map.of("segments", request.segments()));
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
    String url = start(echo, HttpEndpoint.Capacity.DEFAULT);

    // when
    HttpResponse<String> response = send(url + "/schedules/order%2F42%20a", false);

    // then
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    assertThat(json(response).path("segments").toString())
        .isEqualTo("[\"schedules\",\"order/42 a\"]");
  }

  /** A client that sends a request a byte a second, and notes when the server closes on it. */
  private static final class SlowClient implements AutoCloseable {
    final CompletableFuture<Long> closed = new CompletableFuture<>();
    private final Socket socket;
    private final byte[] request;
    private final Thread thread;

    SlowClient(int port, String request) throws Exception {
      this.socket = new Socket("127.0.0.1", port);
      this.request = request.getBytes(StandardCharsets.US_ASCII);
      this.thread = new Thread(this::drip, "slow-client");
      thread.setDaemon(true);
    }

    void start() {
      thread.start();
    }

    private void drip() {
      long started = System.nanoTime();
      try {
        OutputStream out = socket.getOutputStream();
        InputStream in = socket.getInputStream();
        for (byte b : request) {
          out.write(b);
          out.flush();
          // A byte a second, on purpose; a closed connection ends the wait at once.
          socket.setSoTimeout(1_000);
          try {
            if (in.read() < 0) {
              break;
            }
          } catch (SocketTimeoutException stillOpen) {
            // Nothing from the server yet: the next byte.
          }
        }
      } catch (IOException e) {
        // Closed by the server while writing or reading: what the test waits for.
      }
      closed.complete(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started));
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
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

package dev.kdelay.service.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
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
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.streams.state.HostInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** HTTPS from PKCS12 files made with keytool, and peers that call each other over it. */
class HttpsKeysTest {

  private static final String PASSWORD = "keystore-secret-" + System.nanoTime();
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final List<AutoCloseable> closeables = new ArrayList<>();
  private Path dir;
  private Path keystore;

  @BeforeEach
  void createKeystore() throws Exception {
    dir = Files.createTempDirectory("kdelay-tls");
    keystore = TestKeystores.keystore(dir, "kdelay", PASSWORD);
  }

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable closeable : closeables) {
      closeable.close();
    }
    try (var files = Files.list(dir)) {
      for (Path file : files.toList()) {
        Files.delete(file);
      }
    }
    Files.delete(dir);
  }

  @Test
  void shouldServeHttpsToAClientThatTrustsTheCertificate() throws Exception {
    // given
    HttpsKeys keys = HttpsKeys.read(keystore, PASSWORD, Optional.empty(), "");
    HttpEndpoint endpoint = start(keys, new Answering("a"));

    // when
    HttpResponse<String> response =
        client(keys.clientContext())
            .send(
                HttpRequest.newBuilder(url(endpoint, "/local")).build(),
                HttpResponse.BodyHandlers.ofString());

    // then
    assertThat(endpoint.scheme()).isEqualTo("https");
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.uri().getScheme()).isEqualTo("https");
  }

  @Test
  void shouldKeepAnIdleHttpsConnectionPastTheReadTimeoutAndCloseOneWhoseHeadStalls()
      throws Exception {
    // given: a read timeout of 1 s, and two TLS connections: one that sent a whole request, one
    // that sent part of a head and stopped
    HttpsKeys keys = HttpsKeys.read(keystore, PASSWORD, Optional.empty(), "");
    Duration readTimeout = Duration.ofSeconds(1);
    HttpEndpoint endpoint = start(keys, new Answering("a"), readTimeout);
    String get = "GET /local HTTP/1.1\r\nHost: 127.0.0.1:" + endpoint.port() + "\r\n\r\n";
    try (Socket kept = tlsSocket(keys, endpoint);
        Socket stalled = tlsSocket(keys, endpoint)) {
      write(kept, get);
      assertThat(readAnswer(kept)).startsWith("HTTP/1.1 200");
      write(stalled, "GET /local HTTP/1.1\r\nHo");

      // when: the stalled head is closed (the idle timeout, 60 s, would not do it in time)
      long started = System.nanoTime();
      // (Jetty may answer what it has of the head before it closes: read to the end.)
      stalled.getInputStream().readAllBytes();
      Duration closedAfter = Duration.ofNanos(System.nanoTime() - started);

      // then: the connection idle between requests for as long is still served
      write(kept, get);
      assertThat(readAnswer(kept)).startsWith("HTTP/1.1 200");
      assertThat(closedAfter).isGreaterThanOrEqualTo(readTimeout.minusMillis(200));
      assertThat(closedAfter).isLessThan(readTimeout.multipliedBy(10));
    }
  }

  private static Socket tlsSocket(HttpsKeys keys, HttpEndpoint endpoint) throws IOException {
    Socket socket =
        keys.clientContext().getSocketFactory().createSocket("127.0.0.1", endpoint.port());
    socket.setSoTimeout((int) TIMEOUT.toMillis());
    return socket;
  }

  private static void write(Socket socket, String text) throws IOException {
    socket.getOutputStream().write(text.getBytes(StandardCharsets.US_ASCII));
    socket.getOutputStream().flush();
  }

  /** Reads one answer's head and its Content-Length bytes of body, leaving the connection open. */
  private static String readAnswer(Socket socket) throws IOException {
    InputStream in = socket.getInputStream();
    StringBuilder head = new StringBuilder();
    while (!head.toString().endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) {
        throw new IOException("the connection closed after: " + head);
      }
      head.append((char) b);
    }
    int length = 0;
    for (String line : head.toString().split("\r\n")) {
      if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
        length = Integer.parseInt(line.substring("content-length:".length()).strip());
      }
    }
    return head + new String(in.readNBytes(length), StandardCharsets.UTF_8);
  }

  @Test
  void shouldRefuseAClientThatDoesNotTrustTheCertificate() throws Exception {
    // given: the JDK's default trust, which knows no self-signed certificate
    HttpsKeys keys = HttpsKeys.read(keystore, PASSWORD, Optional.empty(), "");
    HttpEndpoint endpoint = start(keys, new Answering("a"));
    HttpClient stranger = client(SSLContext.getDefault());

    // when / then
    assertThatThrownBy(
            () ->
                stranger.send(
                    HttpRequest.newBuilder(url(endpoint, "/local")).build(),
                    HttpResponse.BodyHandlers.ofString()))
        .isInstanceOf(SSLHandshakeException.class);
  }

  @Test
  void shouldNotServePlainHttpOnAnHttpsPort() throws Exception {
    // given
    HttpsKeys keys = HttpsKeys.read(keystore, PASSWORD, Optional.empty(), "");
    HttpEndpoint endpoint = start(keys, new Answering("a"));
    URI plain = URI.create("http://127.0.0.1:" + endpoint.port() + "/local");

    // when: Jetty answers a plain request on a TLS port with 400, or closes the connection
    int status;
    try {
      status =
          client(SSLContext.getDefault())
              .send(HttpRequest.newBuilder(plain).build(), HttpResponse.BodyHandlers.ofString())
              .statusCode();
    } catch (IOException closed) {
      status = -1;
    }

    // then: never served
    assertThat(status).isNotEqualTo(200);
  }

  @Test
  void shouldForwardBetweenTwoInstancesOverHttpsWithTheKeystoresOwnCertificate() throws Exception {
    // given: two instances sharing one keystore; each asks the other over HTTPS
    HttpsKeys keys = HttpsKeys.read(keystore, PASSWORD, Optional.empty(), "");
    Forwarding a = new Forwarding("a", keys);
    Forwarding b = new Forwarding("b", keys);
    HttpEndpoint first = start(keys, a);
    HttpEndpoint second = start(keys, b);
    a.other = new HostInfo("127.0.0.1", second.port());
    b.other = new HostInfo("localhost", first.port());

    // when
    HttpResponse<String> viaA =
        client(keys.clientContext())
            .send(
                HttpRequest.newBuilder(url(first, "/lookup")).build(),
                HttpResponse.BodyHandlers.ofString());
    HttpResponse<String> viaB =
        client(keys.clientContext())
            .send(
                HttpRequest.newBuilder(url(second, "/lookup")).build(),
                HttpResponse.BodyHandlers.ofString());

    // then: each answered by the other
    assertThat(viaA.statusCode()).as(viaA.body()).isEqualTo(200);
    assertThat(json(viaA).path("answeredBy").asText()).isEqualTo("b");
    assertThat(viaB.statusCode()).as(viaB.body()).isEqualTo(200);
    assertThat(json(viaB).path("answeredBy").asText()).isEqualTo("a");
  }

  @Test
  void shouldTrustNoOtherCertificateOfItsOwnAuthorityWithoutATruststore() throws Exception {
    // given: two keystores whose certificates one authority signed (a public one, say), a server
    // with the other's, and callers with the first: one without a truststore, one trusting the
    // authority
    Path authority = TestKeystores.authority(dir, "shared-ca", PASSWORD);
    Path mine = TestKeystores.signedBy(dir, "mine", authority, PASSWORD);
    Path theirs = TestKeystores.signedBy(dir, "theirs", authority, PASSWORD);
    Path trustsAuthority =
        TestKeystores.truststoreOf(dir, authority, "ca", PASSWORD, "trust-secret");
    HttpEndpoint endpoint =
        start(HttpsKeys.read(theirs, PASSWORD, Optional.empty(), ""), new Answering("theirs"));
    HttpsKeys pinned = HttpsKeys.read(mine, PASSWORD, Optional.empty(), "");
    HttpsKeys trusting =
        HttpsKeys.read(mine, PASSWORD, Optional.of(trustsAuthority), "trust-secret");
    HttpsKeys sameKeystore = HttpsKeys.read(theirs, PASSWORD, Optional.empty(), "");

    // when / then: only its own certificate is trusted without a truststore
    assertThatThrownBy(
            () ->
                client(pinned.clientContext())
                    .send(
                        HttpRequest.newBuilder(url(endpoint, "/local")).build(),
                        HttpResponse.BodyHandlers.ofString()))
        .isInstanceOf(SSLHandshakeException.class);
    for (HttpsKeys caller : List.of(trusting, sameKeystore)) {
      HttpResponse<String> answer =
          client(caller.clientContext())
              .send(
                  HttpRequest.newBuilder(url(endpoint, "/local")).build(),
                  HttpResponse.BodyHandlers.ofString());
      assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
    }
  }

  @Test
  void shouldTrustOnlyTheTruststoreWhenOneIsGiven() throws Exception {
    // given: a server with its own key, and a client whose truststore holds another certificate
    Path other = TestKeystores.keystore(dir, "other", PASSWORD);
    Path trustsOther = TestKeystores.truststoreOf(dir, other, "other", PASSWORD, "trust-secret");
    HttpsKeys server = HttpsKeys.read(keystore, PASSWORD, Optional.empty(), "");
    HttpsKeys caller = HttpsKeys.read(keystore, PASSWORD, Optional.of(trustsOther), "trust-secret");
    HttpEndpoint endpoint = start(server, new Answering("a"));

    // when / then
    assertThatThrownBy(
            () ->
                client(caller.clientContext())
                    .send(
                        HttpRequest.newBuilder(url(endpoint, "/local")).build(),
                        HttpResponse.BodyHandlers.ofString()))
        .isInstanceOf(SSLHandshakeException.class);
  }

  @Test
  void shouldNameTheFileButNeverThePasswordWhenThePasswordIsWrong() {
    String wrong = "wrong-" + PASSWORD;

    assertThatThrownBy(() -> HttpsKeys.read(keystore, wrong, Optional.empty(), ""))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(keystore.toString())
        .hasMessageContaining("password is wrong")
        .hasMessageNotContaining(wrong)
        .hasMessageNotContaining(PASSWORD);
  }

  @Test
  void shouldSayWhenTheKeystoreIsMissingOrHoldsNoKey() throws Exception {
    Path missing = dir.resolve("missing.p12");
    Path certificateOnly =
        TestKeystores.truststoreOf(dir, keystore, "kdelay", PASSWORD, "trust-secret");

    assertThatThrownBy(() -> HttpsKeys.read(missing, PASSWORD, Optional.empty(), ""))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(missing + " does not exist");
    assertThatThrownBy(() -> HttpsKeys.read(certificateOnly, "trust-secret", Optional.empty(), ""))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("holds no private key");
  }

  private HttpEndpoint start(HttpsKeys keys, HttpEndpoint.Api api) {
    return start(keys, api, HttpEndpoint.Limits.DEFAULT_READ_TIMEOUT);
  }

  private HttpEndpoint start(HttpsKeys keys, HttpEndpoint.Api api, Duration readTimeout) {
    HttpEndpoint endpoint =
        HttpEndpoint.bind(
            InetAddress.getLoopbackAddress(),
            0,
            Optional.of(keys),
            new HttpEndpoint.Limits(1024, readTimeout, HttpEndpoint.Capacity.DEFAULT));
    closeables.add(endpoint);
    endpoint.start(api, registry);
    return endpoint;
  }

  private static URI url(HttpEndpoint endpoint, String path) {
    return URI.create(endpoint.scheme() + "://127.0.0.1:" + endpoint.port() + path);
  }

  private static HttpClient client(SSLContext tls) {
    return HttpClient.newBuilder().sslContext(tls).connectTimeout(TIMEOUT).build();
  }

  private static JsonNode json(HttpResponse<String> response) throws IOException {
    return ApiResponse.MAPPER.readTree(response.body());
  }

  /** Answers every request itself. */
  private record Answering(String name) implements HttpEndpoint.Api {
    @Override
    public ApiResponse handle(ApiRequest request) {
      return ApiResponse.json(200, Map.of("answeredBy", name));
    }

    @Override
    public boolean asksPeers(ApiRequest request) {
      return false;
    }

    @Override
    public boolean answersAtOnce(ApiRequest request) {
      return false;
    }
  }

  /** Answers a forwarded request itself, and asks the other instance for any other. */
  private final class Forwarding implements HttpEndpoint.Api {
    private final String name;
    private final Peers peers;
    volatile HostInfo other;

    Forwarding(String name, HttpsKeys keys) {
      this.name = name;
      this.peers =
          new Peers(TIMEOUT, Optional.empty(), Optional.of(keys.clientContext()), List.of());
      closeables.add(peers);
    }

    @Override
    public ApiResponse handle(ApiRequest request) {
      if (request.forwarded()) {
        return ApiResponse.json(200, Map.of("answeredBy", name));
      }
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
}

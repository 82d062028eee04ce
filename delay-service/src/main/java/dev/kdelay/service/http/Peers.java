package dev.kdelay.service.http;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.net.ssl.SSLContext;
import org.apache.kafka.common.utils.ThreadUtils;
import org.apache.kafka.streams.state.HostInfo;

/**
 * Asks other instances of the application, at the host and port each advertises as its {@code
 * application.server}, for what only they hold. A forwarded request carries {@link
 * ApiRequest#FORWARDED_HEADER}, so the peer answers from its own state and never forwards again:
 * two instances can never wait on each other. With tokens configured, it carries the instance's own
 * token too ({@link HttpAccess#peerToken}): a peer believes the marker only from a caller with one.
 * When the instances serve HTTPS, peers are asked over HTTPS, and a peer's certificate must be one
 * the instance trusts ({@link HttpsKeys}) and name the host the peer advertises.
 *
 * <p>Java 17's {@link HttpClient} has no {@code close()}: the client runs on an executor of ours,
 * which {@link #close()} shuts down, so that no thread of it outlives the service. (The client's
 * own selector thread ends once the client is unreachable.)
 */
public final class Peers implements AutoCloseable {

  /**
   * The largest answer taken from a peer: far above any the API serves (a page of at most 1,000
   * tasks, or one task with its whole payload), far below what could fill the heap.
   */
  static final int MAX_ANSWER_BYTES = 16 * 1024 * 1024;

  private final ExecutorService executor;
  private final HttpClient client;
  private final Duration timeout;
  private final Optional<String> token;
  private final String scheme;

  /** The hosts reads may be forwarded to, case-insensitive; empty for any. */
  private final Set<String> hosts;

  /** Peers asked over plain HTTP without a token: the instances check none. */
  Peers(Duration timeout) {
    this(timeout, Optional.empty(), Optional.empty(), List.of());
  }

  /**
   * Peers asked with a bearer token, over HTTPS if the instances serve it.
   *
   * @param timeout how long to wait for a peer
   * @param token the token sent as {@code Authorization: Bearer}; empty to send none
   * @param tls what to check a peer's certificate with, when the instances serve HTTPS ({@link
   *     HttpsKeys#clientContext}); empty for plain HTTP
   * @param hosts the hosts reads may be forwarded to ({@code delay.http.peer.hosts}); empty for any
   */
  public Peers(
      Duration timeout, Optional<String> token, Optional<SSLContext> tls, List<String> hosts) {
    this.timeout = timeout;
    this.token = token;
    this.hosts = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
    this.hosts.addAll(hosts);
    this.scheme = tls.isPresent() ? "https" : "http";
    // Cached, like the client's default: its tasks are short steps of the exchanges in flight,
    // whose number the HTTP endpoint's peer lane bounds.
    this.executor =
        Executors.newCachedThreadPool(ThreadUtils.createThreadFactory("kdelay-peers-%d", true));
    HttpClient.Builder client =
        HttpClient.newBuilder()
            .executor(executor)
            .connectTimeout(timeout)
            .version(HttpClient.Version.HTTP_1_1);
    // The client checks the peer's certificate and that it names the host the peer advertises.
    tls.ifPresent(client::sslContext);
    this.client = client.build();
  }

  /**
   * Sends a GET to a peer.
   *
   * @param peer the instance
   * @param pathAndQuery the raw path and query, already percent-encoded
   * @return the peer's answer, whatever its status
   * @throws ApiException 503 if the peer cannot be reached, does not answer in time, or is not
   *     among the hosts reads may be forwarded to; 502 if its answer is not JSON or too large
   */
  ApiResponse get(HostInfo peer, String pathAndQuery) {
    if (!hosts.isEmpty() && !hosts.contains(peer.host())) {
      // Nothing is sent: neither the caller's request nor the peer token.
      throw ApiException.unavailable(
          "instance "
              + peer
              + " advertises a host not in delay.http.peer.hosts; reads are not forwarded there");
    }
    URI uri = URI.create(scheme + "://" + peer.host() + ":" + peer.port() + pathAndQuery);
    HttpRequest.Builder builder =
        HttpRequest.newBuilder(uri).timeout(timeout).header(ApiRequest.FORWARDED_HEADER, "true");
    // With tokens on, a peer believes the forwarded marker only from a caller with a token.
    token.ifPresent(value -> builder.header("Authorization", "Bearer " + value));
    HttpRequest request = builder.GET().build();
    try {
      HttpResponse<InputStream> response =
          client.send(request, HttpResponse.BodyHandlers.ofInputStream());
      byte[] body;
      try (InputStream in = response.body()) {
        if (!HttpAccess.isJson(response.headers().firstValue("Content-Type").orElse(null))) {
          throw new ApiException(
              502,
              "BAD_GATEWAY",
              "instance " + peer + " answered with a content type kdelay does not serve");
        }
        body = in.readNBytes(MAX_ANSWER_BYTES + 1);
      }
      if (body.length > MAX_ANSWER_BYTES) {
        throw new ApiException(
            502,
            "BAD_GATEWAY",
            "instance " + peer + " answered with more than " + MAX_ANSWER_BYTES + " bytes");
      }
      // A peer's 503 OVERLOADED says when to retry; the caller should hear it too. Nothing else of
      // the peer's headers is passed on, and the answer is served as kdelay's own JSON.
      Map<String, String> headers =
          response
              .headers()
              .firstValue("Retry-After")
              .filter(seconds -> seconds.matches("\\d{1,6}"))
              .map(seconds -> Map.of("Retry-After", seconds))
              .orElse(Map.of());
      return new ApiResponse(response.statusCode(), ApiResponse.JSON, body, headers);
    } catch (HttpTimeoutException e) {
      throw ApiException.unavailable(
          "instance " + peer + " did not answer within " + timeout.toMillis() + " ms");
    } catch (IOException e) {
      throw ApiException.unavailable("instance " + peer + " cannot be reached: " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw ApiException.unavailable("interrupted while asking instance " + peer);
    }
  }

  /** Stops the client's threads; a call still in flight fails. */
  @Override
  public void close() {
    executor.shutdownNow();
  }
}

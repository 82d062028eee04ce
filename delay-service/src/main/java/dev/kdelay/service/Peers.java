package dev.kdelay.service;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.Map;
import org.apache.kafka.streams.state.HostInfo;

/**
 * Asks other instances of the application, at the host and port each advertises as its {@code
 * application.server}, for what only they hold. A forwarded request carries {@link
 * ApiRequest#FORWARDED_HEADER}, so the peer answers from its own state and never forwards again:
 * two instances can never wait on each other.
 */
final class Peers {

  private final HttpClient client;
  private final Duration timeout;

  Peers(Duration timeout) {
    this.timeout = timeout;
    this.client =
        HttpClient.newBuilder()
            .connectTimeout(timeout)
            .version(HttpClient.Version.HTTP_1_1)
            .build();
  }

  /**
   * Sends a GET to a peer.
   *
   * @param peer the instance
   * @param pathAndQuery the raw path and query, already percent-encoded
   * @return the peer's answer, whatever its status
   * @throws ApiException 503 if the peer cannot be reached or does not answer in time
   */
  ApiResponse get(HostInfo peer, String pathAndQuery) {
    URI uri = URI.create("http://" + peer.host() + ":" + peer.port() + pathAndQuery);
    HttpRequest request =
        HttpRequest.newBuilder(uri)
            .timeout(timeout)
            .header(ApiRequest.FORWARDED_HEADER, "true")
            .GET()
            .build();
    try {
      HttpResponse<byte[]> response = client.send(request, HttpResponse.BodyHandlers.ofByteArray());
      String type = response.headers().firstValue("Content-Type").orElse(ApiResponse.JSON);
      return new ApiResponse(response.statusCode(), type, response.body(), Map.of());
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
}

package dev.kdelay.service;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.kdelay.topology.LogValues;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The service's HTTP server, the JDK's own: binds its port when created (so that the port is known
 * before Kafka Streams is told its {@code application.server}), serves {@link AdminApi} once
 * started.
 */
final class HttpEndpoint implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(HttpEndpoint.class);

  private static final int THREADS = 8;

  private final HttpServer server;
  private final ExecutorService executor;
  private final int maxBodyBytes;
  private volatile boolean started;

  private HttpEndpoint(HttpServer server, int maxBodyBytes) {
    this.server = server;
    this.maxBodyBytes = maxBodyBytes;
    AtomicInteger threads = new AtomicInteger();
    this.executor =
        new ThreadPoolExecutor(
            THREADS,
            THREADS,
            30,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            runnable -> {
              Thread thread = new Thread(runnable, "kdelay-http-" + threads.incrementAndGet());
              thread.setDaemon(true);
              return thread;
            });
    ((ThreadPoolExecutor) executor).allowCoreThreadTimeOut(true);
  }

  /**
   * Binds a port on every interface.
   *
   * @param port the port; 0 picks a free one
   * @param maxBodyBytes the largest request body accepted
   * @throws DelayServiceException if the port cannot be bound
   */
  static HttpEndpoint bind(int port, int maxBodyBytes) {
    try {
      return new HttpEndpoint(HttpServer.create(new InetSocketAddress(port), 0), maxBodyBytes);
    } catch (BindException e) {
      throw new DelayServiceException(
          "HTTP port "
              + port
              + " is in use; set another with delay.http.port (DELAY_HTTP_PORT), or 0 to"
              + " disable the HTTP endpoints",
          e);
    } catch (IOException e) {
      throw new DelayServiceException("Cannot open HTTP port " + port + ": " + e, e);
    }
  }

  /** The bound port. */
  int port() {
    return server.getAddress().getPort();
  }

  /** Starts serving the API. */
  void start(AdminApi api) {
    server.createContext("/", exchange -> serve(exchange, api));
    server.setExecutor(executor);
    server.start();
    started = true;
    log.info("event=http-started port={}", port());
  }

  private void serve(HttpExchange exchange, AdminApi api) {
    try {
      ApiResponse response;
      try {
        ApiRequest request =
            ApiRequest.of(
                exchange.getRequestMethod(),
                exchange.getRequestURI(),
                body(exchange.getRequestBody()),
                exchange.getRequestHeaders().containsKey(ApiRequest.FORWARDED_HEADER));
        response = api.handle(request);
      } catch (ApiException e) {
        response = ApiResponse.of(e);
      } catch (RuntimeException e) {
        log.warn(
            "event=http-failed method={} path={}",
            LogValues.quote(exchange.getRequestMethod()),
            LogValues.quote(exchange.getRequestURI().getRawPath()),
            e);
        response = ApiResponse.error(500, "INTERNAL", e.toString());
      }
      write(exchange, response);
    } catch (IOException e) {
      log.debug("event=http-write-failed error={}", LogValues.quote(e));
    } finally {
      exchange.close();
    }
  }

  private byte[] body(InputStream in) throws IOException {
    byte[] body = in.readNBytes(maxBodyBytes + 1);
    if (body.length > maxBodyBytes) {
      throw new ApiException(
          413, "TOO_LARGE", "the request body exceeds " + maxBodyBytes + " bytes");
    }
    return body;
  }

  private static void write(HttpExchange exchange, ApiResponse response) throws IOException {
    exchange.getResponseHeaders().set("Content-Type", response.contentType());
    response.headers().forEach((name, value) -> exchange.getResponseHeaders().set(name, value));
    byte[] body = response.body();
    exchange.sendResponseHeaders(response.status(), body.length == 0 ? -1 : body.length);
    if (body.length > 0) {
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
  }

  /** Stops accepting requests, lets those in progress finish for up to a second. */
  @Override
  public void close() {
    server.stop(started ? 1 : 0);
    executor.shutdownNow();
  }
}

package dev.kdelay.service.http;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.utils.ThreadUtils;
import org.eclipse.jetty.http.HttpParser;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.server.internal.HttpConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes a connection whose client has begun a request and not finished its line and headers within
 * the read timeout: the one read Jetty does not bound by itself. (Its idle timeout bounds silence,
 * and a client sending a byte a second is never silent.)
 *
 * <p>A connection is sending a request's head while its HTTP parser has taken some of a head and
 * not all of it; the parser says so itself, so neither a body still arriving after its answer nor
 * the TLS layer's own bytes look like a head. The guard watches the HTTP/1.1 connections only
 * (under TLS, the one on the decrypted side): TLS handshakes are bounded by Jetty's idle timeout
 * and the TLS engine. Checked ten times per read timeout, at least every second, so a connection
 * may overstay by one check.
 */
final class SlowRequestGuard implements Connection.Listener, AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(SlowRequestGuard.class);

  private final long timeoutNanos;
  private final long checkMillis;
  private final Map<HttpConnection, Progress> open = new ConcurrentHashMap<>();
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          ThreadUtils.createThreadFactory("kdelay-http-guard", true));

  /** Since when a check has seen one head unfinished; touched only by the timer thread. */
  private static final class Progress {
    long requests;
    long headSinceNanos = -1;
  }

  SlowRequestGuard(Duration readTimeout) {
    this.timeoutNanos = readTimeout.toNanos();
    this.checkMillis = Math.max(10, Math.min(1_000, readTimeout.toMillis() / 10));
  }

  void start() {
    timer.scheduleWithFixedDelay(this::check, checkMillis, checkMillis, TimeUnit.MILLISECONDS);
  }

  @Override
  public void onOpened(Connection connection) {
    // Jetty's HTTP/1.1 connection is in an internal package but public; its parser's state is
    // volatile, so reading it from the timer thread is safe.
    if (connection instanceof HttpConnection http) {
      open.put(http, new Progress());
    }
  }

  @Override
  public void onClosed(Connection connection) {
    if (connection instanceof HttpConnection http) {
      open.remove(http);
    }
  }

  private void check() {
    long now = System.nanoTime();
    open.forEach((connection, progress) -> check(connection, progress, now));
  }

  private void check(HttpConnection connection, Progress progress, long now) {
    HttpParser parser = connection.getParser();
    if (!parser.inHeaderState() || parser.isStart()) {
      progress.headSinceNanos = -1; // between requests, or reading a body, or answering
      return;
    }
    long requests = connection.getMessagesIn();
    if (progress.headSinceNanos < 0 || requests != progress.requests) {
      progress.requests = requests; // a head begun since the last check
      progress.headSinceNanos = now;
    } else if (now - progress.headSinceNanos >= timeoutNanos) {
      log.info(
          "event=http-slow-request-closed remote={} ms={}",
          connection.getEndPoint().getRemoteSocketAddress(),
          (now - progress.headSinceNanos) / 1_000_000);
      open.remove(connection);
      connection.close();
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}

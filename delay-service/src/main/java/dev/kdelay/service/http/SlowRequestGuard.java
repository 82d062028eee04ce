package dev.kdelay.service.http;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.io.Connection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes a connection whose client has begun a request and not finished its line and headers within
 * the read timeout: the one read Jetty does not bound by itself. (Its idle timeout bounds silence,
 * and a client sending a byte a second is never silent.)
 *
 * <p>A connection counts as sending a request's head from the check that first sees bytes beyond
 * those of its last request, until Jetty counts a new request in. A connection that is silent
 * between requests, or answering one, is left alone: the idle timeout and the body's own deadline
 * cover those. Checked ten times per read timeout, at least every second, so a connection may
 * overstay by one check.
 */
final class SlowRequestGuard implements Connection.Listener, AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(SlowRequestGuard.class);

  private final long timeoutNanos;
  private final long checkMillis;
  private final Map<Connection, Progress> open = new ConcurrentHashMap<>();
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          runnable -> {
            Thread thread = new Thread(runnable, "kdelay-http-guard");
            thread.setDaemon(true);
            return thread;
          });

  /** What a check last saw of one connection; touched only by the timer thread after opening. */
  private static final class Progress {
    long requests;
    long bytes;
    long headSinceNanos = -1;

    Progress(long requests, long bytes) {
      this.requests = requests;
      this.bytes = bytes;
    }
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
    open.put(connection, new Progress(connection.getMessagesIn(), connection.getBytesIn()));
  }

  @Override
  public void onClosed(Connection connection) {
    open.remove(connection);
  }

  private void check() {
    long now = System.nanoTime();
    open.forEach((connection, progress) -> check(connection, progress, now));
  }

  private void check(Connection connection, Progress progress, long now) {
    long requests = connection.getMessagesIn();
    long bytes = connection.getBytesIn();
    if (requests != progress.requests || requests > connection.getMessagesOut()) {
      // A head came in, or a request is being read or answered: nothing trickles.
      progress.requests = requests;
      progress.bytes = bytes;
      progress.headSinceNanos = -1;
      return;
    }
    if (bytes == progress.bytes) {
      return; // silent between requests
    }
    if (progress.headSinceNanos < 0) {
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

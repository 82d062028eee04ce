package dev.kdelay.service.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.kdelay.service.DelayServiceException;
import dev.kdelay.topology.LogValues;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The service's HTTP server, the JDK's own: binds its port when created (so that the port is known
 * before Kafka Streams is told its {@code application.server}), serves an {@link Api} once started.
 *
 * <p>Requests are served on two lanes, each a fixed number of threads with a bounded queue:
 *
 * <ul>
 *   <li><b>local</b>: everything this instance answers by itself: health, metrics, writes to the
 *       request topic, and every request another instance forwarded here;
 *   <li><b>peer</b>: the reads that may wait on another instance ({@link Api#asksPeers}). A local
 *       thread reads such a request and hands it over.
 * </ul>
 *
 * <p>Why two: a request waiting on a peer holds a thread until the peer answers. On one shared
 * pool, two instances forwarding to each other under load could fill both pools with requests
 * waiting on each other, and the forwarded requests that would free them would wait behind, until
 * every call timed out. Here a forwarded request is served on the local lane, which never waits on
 * a peer, so it cannot queue behind a request that does.
 *
 * <p>A full lane answers at once rather than queueing without bound: {@code 503} with {@code
 * {"error":"OVERLOADED",...}} and {@code Retry-After}, counted in {@code
 * kdelay_http_requests_overloaded_total{lane}}. When the local lane is full, a single overflow
 * thread writes that answer, so that the server's dispatcher thread never blocks; when even the
 * overflow queue is full, the server closes the connection. The overflow thread answers the
 * requests that never wait ({@link Api#answersAtOnce}: health, metrics) itself, so that a busy
 * instance does not fail its liveness probe.
 */
public final class HttpEndpoint implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(HttpEndpoint.class);

  /** Seconds a client is asked to wait before retrying a request turned away as overloaded. */
  static final String RETRY_AFTER_SECONDS = "1";

  private static final int OVERFLOW_QUEUE = 64;

  /**
   * Seconds a connection may take from its first byte to the response's headers, and to send the
   * response: the JDK server's {@code sun.net.httpserver.maxReqTime} and {@code maxRspTime}, unset
   * (unbounded) by default. The JDK reads request line and headers on a thread of the local lane,
   * blocking, so a client sending a byte a second would hold that thread for as long as it likes;
   * past this limit the server's timer closes the connection, and the thread is free again.
   *
   * <p>The limit covers handling too, and a listing asks each peer in turn, each for up to 10 s:
   * hence a generous 60 s. An operator's own {@code -Dsun.net.httpserver.maxReqTime} wins. The JDK
   * reads these properties once, when its first server is created, so they are set here, before any
   * {@link HttpServer#create}.
   */
  static final String TIME_LIMIT_SECONDS = "60";

  static {
    System.getProperties().putIfAbsent("sun.net.httpserver.maxReqTime", TIME_LIMIT_SECONDS);
    System.getProperties().putIfAbsent("sun.net.httpserver.maxRspTime", TIME_LIMIT_SECONDS);
  }

  private static final byte[] EMPTY = new byte[0];

  /** What the endpoint serves: the admin API, or a stand-in in tests. */
  interface Api {

    /** Answers a request, on a thread of the lane {@link #asksPeers} chose. */
    ApiResponse handle(ApiRequest request);

    /**
     * Whether answering may wait on another instance: such a request is served on the peer lane.
     */
    boolean asksPeers(ApiRequest request);

    /** Whether answering never waits on anything: answered even when the local lane is full. */
    boolean answersAtOnce(ApiRequest request);
  }

  /**
   * How much the endpoint takes on at once.
   *
   * @param threads threads of the local lane
   * @param queue requests that may wait for one of them; 0: none
   * @param peerThreads threads of the peer lane
   * @param peerQueue requests that may wait for one of those; 0: none
   */
  public record Capacity(int threads, int queue, int peerThreads, int peerQueue) {

    /** Serves up to 8 + 8 requests at once, 64 + 16 more waiting. */
    public static final Capacity DEFAULT = new Capacity(8, 64, 8, 16);

    public Capacity {
      if (threads < 1 || peerThreads < 1 || queue < 0 || peerQueue < 0) {
        throw new IllegalArgumentException(
            "threads must be positive and queues not negative, got " + this);
      }
    }
  }

  /** The threads that only answer 503 for a full local lane; {@link #serve} tells them apart. */
  private static final class OverflowThread extends Thread {
    OverflowThread(Runnable runnable) {
      super(runnable, "kdelay-http-overflow");
      setDaemon(true);
    }
  }

  private final HttpServer server;
  private final int maxBodyBytes;
  private final Capacity capacity;
  private final ThreadPoolExecutor local;
  private final ThreadPoolExecutor peer;
  private final ThreadPoolExecutor overflow;
  private volatile boolean started;
  private HttpAccess access = HttpAccess.OPEN;
  private Counter localOverloaded;
  private Counter peerOverloaded;

  private HttpEndpoint(HttpServer server, int maxBodyBytes, Capacity capacity) {
    this.server = server;
    this.maxBodyBytes = maxBodyBytes;
    this.capacity = capacity;
    this.local = lane("kdelay-http-", capacity.threads(), capacity.queue());
    this.peer = lane("kdelay-http-peer-", capacity.peerThreads(), capacity.peerQueue());
    this.overflow =
        new ThreadPoolExecutor(
            1,
            1,
            0,
            TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(OVERFLOW_QUEUE),
            OverflowThread::new);
  }

  private static ThreadPoolExecutor lane(String prefix, int threads, int queue) {
    AtomicInteger count = new AtomicInteger();
    BlockingQueue<Runnable> waiting =
        queue == 0 ? new SynchronousQueue<>() : new ArrayBlockingQueue<>(queue);
    ThreadPoolExecutor lane =
        new ThreadPoolExecutor(
            threads,
            threads,
            30,
            TimeUnit.SECONDS,
            waiting,
            runnable -> {
              Thread thread = new Thread(runnable, prefix + count.incrementAndGet());
              thread.setDaemon(true);
              return thread;
            });
    lane.allowCoreThreadTimeOut(true);
    return lane;
  }

  /**
   * Binds a port on the loopback address, with {@link Capacity#DEFAULT}.
   *
   * @param port the port; 0 picks a free one
   * @param maxBodyBytes the largest request body accepted
   * @throws DelayServiceException if the port cannot be bound
   */
  static HttpEndpoint bind(int port, int maxBodyBytes) {
    return bind(InetAddress.getLoopbackAddress(), port, maxBodyBytes, Capacity.DEFAULT);
  }

  /** As {@link #bind(int, int)}, with the given capacity. */
  static HttpEndpoint bind(int port, int maxBodyBytes, Capacity capacity) {
    return bind(InetAddress.getLoopbackAddress(), port, maxBodyBytes, capacity);
  }

  /** As {@link #bind(int, int)}, on the given address and with the given capacity. */
  public static HttpEndpoint bind(
      InetAddress address, int port, int maxBodyBytes, Capacity capacity) {
    try {
      return new HttpEndpoint(
          HttpServer.create(new InetSocketAddress(address, port), 0), maxBodyBytes, capacity);
    } catch (BindException e) {
      throw new DelayServiceException(
          "HTTP port "
              + address.getHostAddress()
              + ":"
              + port
              + " is in use; set another with delay.http.port (DELAY_HTTP_PORT), or 0 to"
              + " disable the HTTP endpoints",
          e);
    } catch (IOException e) {
      throw new DelayServiceException(
          "Cannot open HTTP port " + address.getHostAddress() + ":" + port + ": " + e, e);
    }
  }

  /** The bound address. */
  InetAddress address() {
    return server.getAddress().getAddress();
  }

  /** The bound port. */
  public int port() {
    return server.getAddress().getPort();
  }

  /**
   * Starts serving.
   *
   * @param api what to serve
   * @param registry where the overload counters go
   */
  void start(Api api, MeterRegistry registry) {
    start(api, registry, HttpAccess.OPEN);
  }

  /**
   * Starts serving, turning away what the access rules refuse before the API sees it.
   *
   * @param api what to serve
   * @param registry where the overload counters go
   * @param access who may do what
   */
  public void start(Api api, MeterRegistry registry, HttpAccess access) {
    this.access = access;
    localOverloaded = overloadCounter(registry, "local");
    peerOverloaded = overloadCounter(registry, "peer");
    server.createContext("/", exchange -> serve(exchange, api));
    server.setExecutor(this::dispatch);
    server.start();
    started = true;
    log.info(
        "event=http-started address={} port={} threads={} queue={} peer_threads={} peer_queue={}",
        address().getHostAddress(),
        port(),
        capacity.threads(),
        capacity.queue(),
        capacity.peerThreads(),
        capacity.peerQueue());
  }

  private static Counter overloadCounter(MeterRegistry registry, String lane) {
    return Counter.builder("kdelay.http.requests.overloaded")
        .description("HTTP requests answered 503 OVERLOADED because their lane was full")
        .tag("lane", lane)
        .register(registry);
  }

  /** Runs on the server's dispatcher thread, which must never block. */
  private void dispatch(Runnable exchange) {
    try {
      local.execute(exchange);
    } catch (RejectedExecutionException full) {
      // Rejected here too, the exception reaches the server, which closes the connection.
      overflow.execute(exchange);
    }
  }

  private void serve(HttpExchange exchange, Api api) {
    boolean overflow = Thread.currentThread() instanceof OverflowThread;
    ApiRequest request;
    try {
      // Decided on the request line and headers: a request turned away is not read further.
      if (overflow && !api.answersAtOnce(request(exchange, EMPTY))) {
        localOverloaded.increment();
        answer(exchange, overloaded("local", capacity.threads(), capacity.queue()));
        return;
      }
      // Refused on the request line and headers too: a refused body is never read, nor written.
      Optional<ApiResponse> refusal =
          access.refusal(
              exchange.getRequestMethod(),
              request(exchange, EMPTY).segments(),
              exchange.getRequestHeaders());
      if (refusal.isPresent()) {
        answer(exchange, refusal.get());
        return;
      }
      request = request(exchange, body(exchange.getRequestBody()));
    } catch (ApiException e) {
      answer(exchange, ApiResponse.of(e));
      return;
    } catch (IOException e) {
      log.debug("event=http-read-failed error={}", LogValues.quote(e));
      exchange.close();
      return;
    }
    if (overflow || !api.asksPeers(request)) {
      answer(exchange, handle(api, request, exchange));
      return;
    }
    try {
      peer.execute(() -> answer(exchange, handle(api, request, exchange)));
    } catch (RejectedExecutionException full) {
      peerOverloaded.increment();
      answer(exchange, overloaded("peer", capacity.peerThreads(), capacity.peerQueue()));
    }
  }

  private ApiRequest request(HttpExchange exchange, byte[] body) {
    return ApiRequest.of(
        exchange.getRequestMethod(),
        exchange.getRequestURI(),
        body,
        access.forwarded(exchange.getRequestHeaders()));
  }

  private static ApiResponse handle(Api api, ApiRequest request, HttpExchange exchange) {
    try {
      return api.handle(request);
    } catch (ApiException e) {
      return ApiResponse.of(e);
    } catch (RuntimeException e) {
      // The caller gets an id to quote, never the exception: its text may name hosts, topics or
      // worse. The id is on the log line that has the exception.
      String id = UUID.randomUUID().toString();
      log.warn(
          "event=http-failed error_id={} method={} path={}",
          id,
          LogValues.quote(exchange.getRequestMethod()),
          LogValues.quote(exchange.getRequestURI().getRawPath()),
          e);
      return ApiResponse.error(
          500, "INTERNAL", "the request failed; the log has error_id " + id, Map.of("id", id));
    }
  }

  private static ApiResponse overloaded(String lane, int threads, int queue) {
    return ApiResponse.error(
            503,
            "OVERLOADED",
            "the instance is serving as many "
                + lane
                + " requests as it can ("
                + threads
                + " at once, "
                + queue
                + " waiting); retry after "
                + RETRY_AFTER_SECONDS
                + " s")
        .withHeader("Retry-After", RETRY_AFTER_SECONDS);
  }

  private byte[] body(InputStream in) throws IOException {
    byte[] body = in.readNBytes(maxBodyBytes + 1);
    if (body.length > maxBodyBytes) {
      throw new ApiException(
          413, "TOO_LARGE", "the request body exceeds " + maxBodyBytes + " bytes");
    }
    return body;
  }

  /** Writes the answer and ends the exchange, whichever thread it is on. */
  private static void answer(HttpExchange exchange, ApiResponse response) {
    try {
      exchange.getResponseHeaders().set("Content-Type", response.contentType());
      response.headers().forEach((name, value) -> exchange.getResponseHeaders().set(name, value));
      byte[] body = response.body();
      exchange.sendResponseHeaders(response.status(), body.length == 0 ? -1 : body.length);
      if (body.length > 0) {
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(body);
        }
      }
    } catch (IOException e) {
      log.debug("event=http-write-failed error={}", LogValues.quote(e));
    } finally {
      exchange.close();
    }
  }

  /**
   * Stops accepting requests, lets those in progress finish for up to a second, then interrupts
   * what is left (a request still waiting on a peer).
   */
  @Override
  public void close() {
    server.stop(started ? 1 : 0);
    local.shutdownNow();
    peer.shutdownNow();
    overflow.shutdownNow();
  }
}

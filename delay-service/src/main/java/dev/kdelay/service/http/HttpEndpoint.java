package dev.kdelay.service.http;

import dev.kdelay.schemas.LogValues;
import dev.kdelay.service.DelayServiceException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.common.utils.ThreadUtils;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.http.UriCompliance;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The service's HTTP endpoint, on Jetty's core server (no servlets): binds its port when created
 * (so that the port is known before Kafka Streams is told its {@code application.server}), serves
 * an {@link Api} once started, over HTTPS when given {@link HttpsKeys}.
 *
 * <p>Jetty reads a request's line, headers and body without holding a thread while the client is
 * slow, so a client that sends a byte a second costs a connection, not a worker. Each read is
 * bounded all the same ({@link Limits#readTimeout}): a connection that has not completed a
 * request's line and headers within it is closed ({@link SlowRequestGuard}), and a body not
 * complete within it is answered {@code 408}. A body larger than {@link Limits#maxBodyBytes} is
 * answered {@code 413}, as soon as its {@code Content-Length} says so.
 *
 * <p>Only a complete request is handed to a lane, each a fixed number of threads with a bounded
 * queue:
 *
 * <ul>
 *   <li><b>local</b>: everything this instance answers by itself: writes to the request topic,
 *       reads of its own state, and every request another instance forwarded here;
 *   <li><b>peer</b>: the reads that may wait on another instance ({@link Api#asksPeers}).
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
 * kdelay_http_requests_overloaded_total{lane}}. The requests that never wait ({@link
 * Api#answersAtOnce}: health, metrics) skip the lanes and are answered on the server's own thread,
 * so that a busy instance does not fail its liveness probe.
 */
public final class HttpEndpoint implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(HttpEndpoint.class);

  /** Seconds a client is asked to wait before retrying a request turned away as overloaded. */
  static final String RETRY_AFTER_SECONDS = "1";

  /**
   * How long a connection may stay open without a byte in either direction. Longer than any answer
   * takes (a listing asks each peer for up to 10 s), short enough that abandoned connections go.
   */
  static final Duration IDLE_TIMEOUT = Duration.ofSeconds(60);

  /** Paths may carry an id with {@code /} as {@code %2F}: the API decodes segments itself. */
  private static final UriCompliance URI_COMPLIANCE =
      UriCompliance.DEFAULT.with(
          "kdelay",
          UriCompliance.Violation.AMBIGUOUS_PATH_SEPARATOR,
          UriCompliance.Violation.AMBIGUOUS_PATH_ENCODING);

  /** What the endpoint serves: the admin API, or a stand-in in tests. */
  public interface Api {

    /** Answers a request, on a thread of the lane {@link #asksPeers} chose. */
    ApiResponse handle(ApiRequest request);

    /**
     * Whether answering may wait on another instance: such a request is served on the peer lane.
     */
    boolean asksPeers(ApiRequest request);

    /** Whether answering never waits on anything: answered at once, on the server's thread. */
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

  /**
   * What one request may cost.
   *
   * @param maxBodyBytes the largest request body accepted
   * @param readTimeout the longest a client may take to send a request's line and headers, and then
   *     its body
   * @param capacity the lanes
   */
  public record Limits(int maxBodyBytes, Duration readTimeout, Capacity capacity) {

    /** Ten seconds: a generous bound for a request line, headers, or a body of a few megabytes. */
    public static final Duration DEFAULT_READ_TIMEOUT = Duration.ofSeconds(10);

    public Limits {
      if (maxBodyBytes < 0 || readTimeout.isNegative() || readTimeout.isZero()) {
        throw new IllegalArgumentException(
            "the body limit must not be negative and the read timeout positive, got " + this);
      }
    }
  }

  static final int REFUSAL_LINES_PER_SECOND = 20;

  private final Server server;
  private final ServerConnector connector;
  private final boolean https;
  private final Limits limits;
  private final SlowRequestGuard guard;
  private final ThreadPoolExecutor local;
  private final ThreadPoolExecutor peer;
  private volatile boolean started;
  private HttpAccess access = HttpAccess.OPEN;
  private Counter localOverloaded;
  private Counter peerOverloaded;
  private MeterRegistry registry;

  /**
   * Refused requests are a caller's to send at any rate: at most {@link #REFUSAL_LINES_PER_SECOND}
   * of their lines a second are logged (the counter counts them all).
   */
  private final LogBudget refusalLines = new LogBudget(REFUSAL_LINES_PER_SECOND, System::nanoTime);

  private HttpEndpoint(
      Server server,
      ServerConnector connector,
      boolean https,
      Limits limits,
      SlowRequestGuard guard) {
    this.server = server;
    this.connector = connector;
    this.https = https;
    this.limits = limits;
    this.guard = guard;
    this.local = lane("kdelay-http-", limits.capacity().threads(), limits.capacity().queue());
    this.peer =
        lane("kdelay-http-peer-", limits.capacity().peerThreads(), limits.capacity().peerQueue());
  }

  private static ThreadPoolExecutor lane(String prefix, int threads, int queue) {
    BlockingQueue<Runnable> waiting =
        queue == 0 ? new SynchronousQueue<>() : new ArrayBlockingQueue<>(queue);
    ThreadPoolExecutor lane =
        new ThreadPoolExecutor(
            threads,
            threads,
            30,
            TimeUnit.SECONDS,
            waiting,
            ThreadUtils.createThreadFactory(prefix + "%d", true));
    lane.allowCoreThreadTimeOut(true);
    return lane;
  }

  /**
   * Binds a port on the loopback address, plain HTTP, with {@link Capacity#DEFAULT}.
   *
   * @param port the port; 0 picks a free one
   * @param maxBodyBytes the largest request body accepted
   * @throws DelayServiceException if the port cannot be bound
   */
  static HttpEndpoint bind(int port, int maxBodyBytes) {
    return bind(port, maxBodyBytes, Capacity.DEFAULT);
  }

  /** As {@link #bind(int, int)}, with the given capacity. */
  static HttpEndpoint bind(int port, int maxBodyBytes, Capacity capacity) {
    return bind(
        InetAddress.getLoopbackAddress(),
        port,
        Optional.empty(),
        new Limits(maxBodyBytes, Limits.DEFAULT_READ_TIMEOUT, capacity));
  }

  /**
   * Binds a port.
   *
   * @param address the address to listen on
   * @param port the port; 0 picks a free one
   * @param keys the key material to serve HTTPS with; empty for plain HTTP
   * @param limits what one request may cost
   * @throws DelayServiceException if the port cannot be bound
   */
  public static HttpEndpoint bind(
      InetAddress address, int port, Optional<HttpsKeys> keys, Limits limits) {
    QueuedThreadPool threads = new QueuedThreadPool(16, 2);
    threads.setName("kdelay-http-io");
    threads.setDaemon(true);
    Server server = new Server(threads);
    server.setStopTimeout(1_000);
    HttpConfiguration http = new HttpConfiguration();
    http.setSendServerVersion(false);
    http.setUriCompliance(URI_COMPLIANCE);
    HttpConnectionFactory plain = new HttpConnectionFactory(http);
    ServerConnector connector;
    if (keys.isPresent()) {
      SslContextFactory.Server tls = new SslContextFactory.Server();
      tls.setSslContext(keys.get().serverContext());
      connector =
          new ServerConnector(server, 1, 1, new SslConnectionFactory(tls, "http/1.1"), plain);
    } else {
      connector = new ServerConnector(server, 1, 1, plain);
    }
    connector.setHost(address.getHostAddress());
    connector.setPort(port);
    connector.setIdleTimeout(IDLE_TIMEOUT.toMillis());
    SlowRequestGuard guard = new SlowRequestGuard(limits.readTimeout());
    connector.addBean(guard);
    server.addConnector(connector);
    try {
      connector.open();
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
    return new HttpEndpoint(server, connector, keys.isPresent(), limits, guard);
  }

  /** The bound address. */
  InetAddress address() {
    try {
      return InetAddress.getByName(connector.getHost());
    } catch (IOException e) {
      throw new IllegalStateException("the bound address cannot be read", e);
    }
  }

  /** The bound port. */
  public int port() {
    return connector.getLocalPort();
  }

  /** {@code https} or {@code http}. */
  public String scheme() {
    return https ? "https" : "http";
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
    this.registry = registry;
    localOverloaded = overloadCounter(registry, "local");
    peerOverloaded = overloadCounter(registry, "peer");
    server.setHandler(
        new Handler.Abstract() {
          @Override
          public boolean handle(Request request, Response response, Callback callback) {
            serve(request, response, callback, api);
            return true;
          }
        });
    try {
      server.start();
    } catch (Exception e) {
      throw new DelayServiceException("Cannot start the HTTP endpoint: " + e, e);
    }
    guard.start();
    started = true;
    Capacity capacity = limits.capacity();
    log.info(
        "event=http-started scheme={} address={} port={} threads={} queue={} peer_threads={}"
            + " peer_queue={} read_timeout_ms={}",
        scheme(),
        address().getHostAddress(),
        port(),
        capacity.threads(),
        capacity.queue(),
        capacity.peerThreads(),
        capacity.peerQueue(),
        limits.readTimeout().toMillis());
  }

  private static Counter overloadCounter(MeterRegistry registry, String lane) {
    return Counter.builder("kdelay.http.requests.overloaded")
        .description("HTTP requests answered 503 OVERLOADED because their lane was full")
        .tag("lane", lane)
        .register(registry);
  }

  /** Runs on a server thread once the request line and headers are in; never blocks. */
  private void serve(Request request, Response response, Callback callback, Api api) {
    Exchange exchange = new Exchange(request, response, callback);
    ApiRequest head;
    try {
      head = exchange.request(new byte[0]);
      // Refused on the request line and headers: a refused body is never read.
      Optional<ApiResponse> refusal =
          access.refusal(request.getMethod(), head.segments(), exchange::header);
      if (refusal.isPresent()) {
        refused(exchange, head, refusal.get());
        exchange.answerUnread(refusal.get());
        return;
      }
    } catch (ApiException e) {
      exchange.answerUnread(ApiResponse.of(e));
      return;
    }
    if (api.answersAtOnce(head)) {
      exchange.answerUnread(audited(exchange, head, handle(api, head)));
      return;
    }
    long length = request.getLength();
    if (length > limits.maxBodyBytes()) {
      exchange.answer(tooLarge());
      return;
    }
    readBody(request)
        .whenComplete(
            (body, failure) -> {
              if (failure != null) {
                exchange.answer(unreadBody(failure));
                return;
              }
              ApiRequest complete;
              try {
                complete = exchange.request(body);
              } catch (ApiException e) {
                exchange.answer(ApiResponse.of(e));
                return;
              }
              dispatch(exchange, complete, api);
            });
  }

  private CompletableFuture<byte[]> readBody(Request request) {
    return Content.Source.asByteBufferAsync(request, limits.maxBodyBytes())
        .thenApply(
            buffer -> {
              byte[] bytes = new byte[buffer.remaining()];
              buffer.get(bytes);
              return bytes;
            })
        .orTimeout(limits.readTimeout().toMillis(), TimeUnit.MILLISECONDS);
  }

  private ApiResponse unreadBody(Throwable failure) {
    Throwable cause =
        failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
            ? failure.getCause()
            : failure;
    if (cause instanceof TimeoutException) {
      return ApiResponse.error(
              408,
              "REQUEST_TIMEOUT",
              "the request body did not arrive within " + limits.readTimeout().toMillis() + " ms")
          .withHeader("Connection", "close");
    }
    if (cause instanceof IllegalArgumentException) {
      // What Jetty's bounded read throws once a body without Content-Length grows past the limit.
      return tooLarge();
    }
    log.debug("event=http-read-failed error={}", LogValues.quote(cause));
    return ApiResponse.error(400, "BAD_REQUEST", "the request body could not be read")
        .withHeader("Connection", "close");
  }

  private ApiResponse tooLarge() {
    return ApiResponse.error(
            413, "TOO_LARGE", "the request body exceeds " + limits.maxBodyBytes() + " bytes")
        .withHeader("Connection", "close");
  }

  private void dispatch(Exchange exchange, ApiRequest request, Api api) {
    boolean toPeers = api.asksPeers(request);
    try {
      (toPeers ? peer : local)
          .execute(() -> exchange.answer(audited(exchange, request, handle(api, request))));
    } catch (RejectedExecutionException full) {
      Capacity capacity = limits.capacity();
      if (toPeers) {
        peerOverloaded.increment();
        exchange.answer(overloaded("peer", capacity.peerThreads(), capacity.peerQueue()));
      } else {
        localOverloaded.increment();
        exchange.answer(overloaded("local", capacity.threads(), capacity.queue()));
      }
    }
  }

  /**
   * Counts and logs a request turned away before its body was read (401, 403, 415): who knocked,
   * from where, and why, so that a token that stopped working or a page that tries its luck shows.
   */
  private void refused(Exchange exchange, ApiRequest request, ApiResponse refusal) {
    String code = refusal.errorCode();
    Counter.builder("kdelay.http.requests.refused")
        .description("HTTP requests refused before they were served, by the answer's error code")
        .tag("code", code)
        .register(registry)
        .increment();
    OptionalLong skipped = refusalLines.admit();
    if (skipped.isPresent()) {
      log.info(
          "event=http-refused status={} code={} method={} path={} remote={} {}{}",
          refusal.status(),
          code,
          LogValues.quote(request.method()),
          LogValues.quote(path(request)),
          exchange.remote(),
          access.caller(exchange::header),
          skipped.getAsLong() > 0 ? " skipped_before=" + skipped.getAsLong() : "");
    }
  }

  /**
   * Logs a request that asked for a change, whatever its answer: the audit trail of who changed
   * what (the action, the id, and where the request was written when it was accepted), from where,
   * and with which token (its name or fingerprint, never the token). One line per change.
   */
  private ApiResponse audited(Exchange exchange, ApiRequest request, ApiResponse answer) {
    if (HttpAccess.changesState(request.method())) {
      log.info(
          "event=audit {} method={} path={} remote={} {}",
          answer.changeFields(),
          LogValues.quote(request.method()),
          LogValues.quote(path(request)),
          exchange.remote(),
          access.caller(exchange::header));
    }
    return answer;
  }

  private static String path(ApiRequest request) {
    return "/" + String.join("/", request.segments());
  }

  private static ApiResponse handle(Api api, ApiRequest request) {
    try {
      return api.handle(request);
    } catch (ApiException e) {
      return ApiResponse.of(e);
    } catch (RuntimeException | LinkageError | StackOverflowError e) {
      // The caller gets an id to quote, never the exception: its text may name hosts, topics or
      // worse. The id is on the log line that has the exception. A class missing from a broken
      // deployment (LinkageError) is answered too: unanswered, the client would wait for the idle
      // timeout, and the lane would lose its thread.
      String id = UUID.randomUUID().toString();
      log.warn(
          "event=http-failed error_id={} method={} path={}",
          id,
          LogValues.quote(request.method()),
          LogValues.quote("/" + String.join("/", request.segments())),
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

  /** One request and the means to answer it, from whichever thread has the answer. */
  private final class Exchange {
    private final Request request;
    private final Response response;
    private final Callback callback;

    Exchange(Request request, Response response, Callback callback) {
      this.request = request;
      this.response = response;
      this.callback = callback;
    }

    String header(String name) {
      return request.getHeaders().get(name);
    }

    /** The caller's address and port, as the connection has them (a proxy's, behind one). */
    String remote() {
      return Request.getRemoteAddr(request) + ":" + Request.getRemotePort(request);
    }

    ApiRequest request(byte[] body) {
      HttpURI uri = request.getHttpURI();
      return ApiRequest.of(
          request.getMethod(),
          uri.getPath(),
          uri.getQuery(),
          body,
          access.forwarded(this::header),
          access.tenant(this::header));
    }

    /**
     * Answers without reading the request's body. A body the client is still sending cannot stay on
     * the connection: Jetty would fail the exchange and drop the connection after the answer, and a
     * client that pooled it would see its next request on it end without a byte. So such an answer
     * says {@code Connection: close}, and the client opens a new connection.
     */
    void answerUnread(ApiResponse answer) {
      boolean mayHaveBody =
          request.getLength() > 0 || request.getHeaders().contains(HttpHeader.TRANSFER_ENCODING);
      answer(mayHaveBody ? answer.withHeader("Connection", "close") : answer);
    }

    /** Writes the answer and completes the exchange; Jetty writes it without blocking. */
    void answer(ApiResponse answer) {
      response.setStatus(answer.status());
      response.getHeaders().put(HttpHeader.CONTENT_TYPE, answer.contentType());
      // Served as the type it says, whoever wrote the bytes (a peer, for a forwarded read).
      response.getHeaders().put("X-Content-Type-Options", "nosniff");
      answer.headers().forEach((name, value) -> response.getHeaders().put(name, value));
      response.write(true, ByteBuffer.wrap(answer.body()), callback);
    }
  }

  /**
   * Stops accepting requests, lets those in progress finish for up to a second, then interrupts
   * what is left (a request still waiting on a peer).
   */
  @Override
  public void close() {
    guard.close();
    try {
      if (started) {
        server.stop();
      } else {
        connector.close();
      }
    } catch (Exception e) {
      log.debug("event=http-stop-failed error={}", LogValues.quote(e));
    }
    local.shutdownNow();
    peer.shutdownNow();
  }
}

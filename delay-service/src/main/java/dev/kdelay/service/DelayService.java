package dev.kdelay.service;

import static java.util.Objects.requireNonNull;

import dev.kdelay.client.DelayClient;
import dev.kdelay.schemas.LogValues;
import dev.kdelay.service.broker.EmbeddedKafka;
import dev.kdelay.service.config.ClientProperties;
import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.service.deadletters.DeadLetterPages;
import dev.kdelay.service.failover.OrphanedTransactions;
import dev.kdelay.service.failover.PeerEviction;
import dev.kdelay.service.http.AdminApi;
import dev.kdelay.service.http.ConsoleRoutes;
import dev.kdelay.service.http.DeadLetterRoutes;
import dev.kdelay.service.http.FireHistory;
import dev.kdelay.service.http.Health;
import dev.kdelay.service.http.HttpAccess;
import dev.kdelay.service.http.HttpEndpoint;
import dev.kdelay.service.http.HttpsKeys;
import dev.kdelay.service.http.Peers;
import dev.kdelay.service.http.ScheduleBody;
import dev.kdelay.service.http.ScheduleQueries;
import dev.kdelay.service.http.TargetTopicCheck;
import dev.kdelay.service.limits.FireRateLimitsFeed;
import dev.kdelay.service.topics.AdminTargetTopics;
import dev.kdelay.service.topics.PartitionCountGuard;
import dev.kdelay.service.topics.RequiredTopics;
import dev.kdelay.service.warmup.FirePathWarmup;
import dev.kdelay.service.warmup.WarmingClientSupplier;
import dev.kdelay.topology.DelayConfig;
import dev.kdelay.topology.DelayTopology;
import dev.kdelay.topology.FireRateLimits;
import dev.kdelay.topology.StreamsTuning;
import dev.kdelay.topology.Tenants;
import dev.kdelay.topology.internals.delivery.DeliveryFailureHandler;
import dev.kdelay.topology.internals.delivery.DeliveryQuarantine;
import dev.kdelay.topology.internals.delivery.TargetPolicy;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.StreamsMetadata;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.state.HostInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One kdelay instance: the embedded broker when no bootstrap servers are configured, kdelay's
 * topics, the Kafka Streams application that stores and fires tasks, and the HTTP endpoints
 * (metrics, health, admin API) on {@code delay.http.port} unless that is 0.
 *
 * <p>{@link #close()} may be called from another thread at any time, also while {@link #start()} is
 * still waiting, which is what a shutdown hook does on SIGTERM.
 *
 * <pre>{@code
 * DelayService service = new DelayService(config);
 * Runtime.getRuntime().addShutdownHook(new Thread(service::close));
 * service.start();
 * service.awaitTermination(); // until closed, or until Kafka Streams fails for good
 * }</pre>
 */
public final class DelayService implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(DelayService.class);

  /** How long {@link #close()} lets Kafka Streams commit and close before giving up. */
  public static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(30);

  private static final Duration PROGRESS_INTERVAL = Duration.ofSeconds(30);

  /** How long closing an admin client waits for its pending calls. */
  private static final Duration ADMIN_CLOSE_TIMEOUT = Duration.ofSeconds(5);

  /** How long a start waits to read the limits topic before it starts with what it has. */
  private static final Duration LIMITS_READ_TIMEOUT = Duration.ofSeconds(10);

  /** How long the admin API waits for another instance, or for Kafka to acknowledge a request. */
  private static final Duration HTTP_CALL_TIMEOUT = Duration.ofSeconds(10);

  /** Whether this JVM's fire path was warmed: compiled code is the JVM's, not an instance's. */
  private static final AtomicBoolean jvmWarmed = new AtomicBoolean();

  private final ServiceConfig configured;
  private final EmbeddedKafka.Listeners listeners;
  private final RestoreProgress restoreProgress = new RestoreProgress();
  private final ServiceMetrics metrics =
      new ServiceMetrics(Clock.systemUTC(), restoreProgress::count);
  private final CompletableFuture<Void> running = new CompletableFuture<>();

  /** Until the warm-up ended, the instance is not ready. */
  private volatile boolean warming;

  private final CompletableFuture<KafkaStreams.State> terminated = new CompletableFuture<>();

  /** Why the instance stopped itself, logged when it did: it ends as failed. */
  private volatile Optional<String> failure = Optional.empty();

  // Guarded by this: what start() has created so far, and whether close() has begun.
  private boolean closed;
  private EmbeddedKafka broker;
  private KafkaStreams streams;
  private Admin targetAdmin;
  // Read by the state listener, which takes no lock of ours.
  private volatile Optional<OrphanedTransactions> orphans = Optional.empty();
  private volatile Optional<PartitionCountGuard> partitionCount = Optional.empty();
  private Optional<PeerEviction> peerEviction = Optional.empty();
  private AdminTargetTopics targetTopics;
  private WarmingClientSupplier clients;
  private FireRateLimitsFeed limits;
  private HttpEndpoint http;
  private Peers peers;
  private FireHistory fireHistory;
  private HttpAccess httpAccess = HttpAccess.OPEN;
  private Optional<HttpsKeys> httpsKeys = Optional.empty();
  private DelayClient requestClient;
  private ServiceConfig config;

  /**
   * Creates an instance; {@link #start()} starts it.
   *
   * @param config the configuration; an empty {@code delay.bootstrap.servers} means an embedded
   *     broker on {@code 127.0.0.1:9092} with its data under {@code delay.embedded.data.dir}
   */
  public DelayService(ServiceConfig config) {
    this(config, EmbeddedKafka.Listeners.DEFAULT);
  }

  DelayService(ServiceConfig config, EmbeddedKafka.Listeners listeners) {
    this.configured = requireNonNull(config, "config cannot be null");
    this.listeners = requireNonNull(listeners, "listeners cannot be null");
    this.config = config;
  }

  /**
   * Starts the embedded broker if needed, creates the missing topics, starts Kafka Streams and
   * waits until it is RUNNING, however long restoring the task stores takes.
   *
   * @throws DelayServiceException if the broker, the topics or Kafka Streams cannot be started, or
   *     the instance was closed meanwhile
   */
  public void start() {
    start(Optional.empty());
  }

  /** As {@link #start()}, failing if Kafka Streams is not RUNNING within the timeout. */
  public void start(Optional<Duration> timeout) {
    try {
      checkHttpAccess();
      startBroker();
      // Outside the lock: a close() meanwhile must not wait for an unreachable Kafka.
      ServiceConfig ready = withRequestsPartitions(currentConfig());
      warming = ready.warmupTasks() > 0 && !jvmWarmed.get();
      startStreams(ready);
      warmUp(ready);
      awaitRunning(timeout);
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  /** The bootstrap servers the instance uses: the configured ones, or the embedded broker's. */
  public synchronized String bootstrapServers() {
    return config.delay().bootstrapServers();
  }

  /**
   * The port the HTTP endpoints listen on, once {@link #start()} has opened it.
   *
   * @return the port, or empty if {@code delay.http.port} is 0 or the instance is not started
   */
  public synchronized OptionalInt httpPort() {
    return http == null ? OptionalInt.empty() : OptionalInt.of(http.port());
  }

  /** The state of the instance's Kafka Streams application, or empty before it exists. */
  public synchronized Optional<KafkaStreams.State> state() {
    return Optional.ofNullable(streams).map(KafkaStreams::state);
  }

  /**
   * The fire-rate limits in effect on this instance: {@code delay.fire.rate.limits} overlaid by
   * what its limits topic holds ({@code kdelay limits set}); the configuration's before it started.
   */
  public synchronized FireRateLimits fireRateLimits() {
    return limits == null ? configured.delay().fireRateLimits() : limits.inEffect().get();
  }

  /** Why the instance stopped itself for good, if it did (a cause no restart cures). */
  public Optional<String> failure() {
    return failure;
  }

  /**
   * Blocks until the instance stops: it was closed, or Kafka Streams failed for good.
   *
   * @return the final Kafka Streams state: {@code ERROR} after a failure
   * @throws InterruptedException if interrupted while waiting
   */
  public KafkaStreams.State awaitTermination() throws InterruptedException {
    try {
      return terminated.get();
    } catch (ExecutionException e) {
      throw new IllegalStateException("unreachable: never completed exceptionally", e);
    }
  }

  /**
   * Stops the instance: Kafka Streams commits what it has processed, leaves the group so that its
   * partitions move to the other instances at once rather than after the session timeout, and
   * closes within {@link #CLOSE_TIMEOUT}; then the embedded broker, if any, stops. Pending tasks
   * stay in the changelogs. Idempotent, and safe from any thread.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    long started = System.nanoTime();
    log.info("event=stopping application={}", configured.delay().applicationId());
    running.completeExceptionally(new DelayServiceException("kdelay was stopped while starting"));
    KafkaStreams.State finalState = KafkaStreams.State.NOT_RUNNING;
    if (http != null) {
      http.close();
    }
    if (peers != null) {
      peers.close();
    }
    if (fireHistory != null) {
      fireHistory.close();
    }
    orphans.ifPresent(OrphanedTransactions::close);
    partitionCount.ifPresent(PartitionCountGuard::close);
    peerEviction.ifPresent(PeerEviction::close);
    if (streams != null) {
      boolean clean =
          streams.close(
              CloseOptions.timeout(CLOSE_TIMEOUT)
                  .withGroupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP));
      if (!clean) {
        log.warn("event=close-timeout seconds={}", CLOSE_TIMEOUT.toSeconds());
      }
      finalState = streams.state();
    }
    if (requestClient != null) {
      requestClient.close();
    }
    if (limits != null) {
      try {
        limits.close();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    if (targetTopics != null) {
      targetTopics.close();
      targetAdmin.close(ADMIN_CLOSE_TIMEOUT);
      clients.close();
    }
    metrics.close();
    if (broker != null) {
      broker.close();
    }
    terminated.complete(failure.isPresent() ? KafkaStreams.State.ERROR : finalState);
    log.info(
        "event=stopped application={} ms={}",
        configured.delay().applicationId(),
        (System.nanoTime() - started) / 1_000_000);
  }

  /** Before anything starts: an endpoint that would serve the network unchecked refuses. */
  private synchronized void checkHttpAccess() {
    if (configured.httpPort() != 0) {
      httpAccess = HttpAccess.from(configured, HttpAccess.bindAddress(configured));
      httpsKeys = HttpsKeys.of(configured);
    }
  }

  private synchronized void startBroker() {
    ensureOpen();
    if (configured.delay().bootstrapServers().isBlank()) {
      broker = EmbeddedKafka.start(Path.of(configured.embeddedDataDir()), listeners);
      config = configured.with(DelayConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
    }
  }

  private synchronized ServiceConfig currentConfig() {
    return config;
  }

  private static ServiceConfig withRequestsPartitions(ServiceConfig service) {
    DelayConfig config = service.delay();
    Admin admin =
        Admin.create(
            ClientProperties.of(config, config.bootstrapServers(), ClientProperties.Kind.ADMIN));
    try {
      // Kafka Streams' changelogs get the durability of kdelay's own topics.
      return new RequiredTopics(admin, service).ensure().applyTo(service);
    } finally {
      // Bounded: after a start that timed out (Kafka unreachable, or a PLAINTEXT client at a SASL
      // listener), a call still pending would hold an unbounded close() for default.api.timeout.ms.
      admin.close(ADMIN_CLOSE_TIMEOUT);
    }
  }

  private synchronized void startStreams(ServiceConfig service) {
    ensureOpen();
    config = service;
    DelayConfig ready = service.delay();
    targetAdmin =
        Admin.create(
            ClientProperties.of(ready, ready.bootstrapServers(), ClientProperties.Kind.ADMIN));
    // Target topics seen at intake are warmed into the stream threads' producers, so that no
    // first fire to a topic waits for its metadata on the stream thread.
    // Every record the producers fail to send is reported to the quarantine, with the record.
    DeliveryQuarantine quarantine = new DeliveryQuarantine(ready, metrics);
    clients = new WarmingClientSupplier(quarantine);
    targetTopics = AdminTargetTopics.create(targetAdmin, ready, clients);
    Properties properties = StreamsTuning.streamsProperties(ready);
    DeliveryFailureHandler.install(properties, quarantine);
    HostInfo self = null;
    if (service.httpPort() != 0) {
      // Bound before Kafka Streams exists: its application.server must name the real port.
      http =
          HttpEndpoint.bind(
              HttpAccess.bindAddress(service),
              service.httpPort(),
              httpsKeys,
              new HttpEndpoint.Limits(
                  ready.maxPayloadBytes() * 2 + 64 * 1024,
                  service.httpReadTimeout(),
                  HttpEndpoint.Capacity.DEFAULT));
      self = new HostInfo(advertisedHost(service), http.port());
      properties.put(StreamsConfig.APPLICATION_SERVER_CONFIG, self.host() + ":" + self.port());
    }
    Optional<Duration> peerCheck = peerCheck(service, self, properties);
    // The limits set at run time are read before Kafka Streams starts (below), and followed after.
    limits =
        new FireRateLimitsFeed(
            ready.fireRateLimits(),
            ready.fireRateLimitsTopic(),
            ClientProperties.of(ready, ready.bootstrapServers(), ClientProperties.Kind.CONSUMER));
    limits.start();
    streams =
        new KafkaStreams(
            DelayTopology.build(ready, targetTopics, metrics, quarantine, limits.inEffect()),
            properties,
            clients);
    ReplaceThreadHandler replace =
        new ReplaceThreadHandler(10, Duration.ofMinutes(1), Clock.systemUTC(), quarantine);
    streams.setUncaughtExceptionHandler(
        exception -> {
          // A thread that failed at a rebalance may have met a requests topic grown by hand.
          partitionCount.ifPresent(PartitionCountGuard::checkSoon);
          return replace.handle(exception);
        });
    if (StreamsConfig.EXACTLY_ONCE_V2.equals(
        properties.getProperty(StreamsConfig.PROCESSING_GUARANTEE_CONFIG))) {
      KafkaStreams app = streams;
      WarmingClientSupplier producers = clients;
      orphans =
          Optional.of(
              new OrphanedTransactions(
                  targetAdmin,
                  ready.applicationId(),
                  () -> ownedPartitions(app),
                  producers::transactionalIds,
                  () -> app.state() == KafkaStreams.State.REBALANCING,
                  HTTP_CALL_TIMEOUT));
    }
    partitionCount =
        Optional.of(
            new PartitionCountGuard(
                targetAdmin,
                requestsTopics(ready),
                ready.requestsPartitions(),
                this::stopFor,
                HTTP_CALL_TIMEOUT));
    if (peerCheck.isPresent()) {
      KafkaStreams app = streams;
      peerEviction =
          Optional.of(
              new PeerEviction(
                  targetAdmin,
                  ready.applicationId(),
                  self,
                  () ->
                      app.metadataForAllStreamsClients().stream()
                          .map(StreamsMetadata::hostInfo)
                          .toList(),
                  PeerEviction.tcp(peerCheck.get()),
                  HTTP_CALL_TIMEOUT));
    }
    streams.setStateListener(this::onStateChange);
    streams.setGlobalStateRestoreListener(restoreProgress);
    metrics.bind(streams);
    metrics.tenants(ready.tenants().all().stream().map(Tenants.Tenant::name).toList());
    if (http != null) {
      startHttp(ready, self);
    }
    log.info(
        "event=starting application={} bootstrap={} requests={} partitions={} dlq={} reroute={}",
        ready.applicationId(),
        ready.bootstrapServers(),
        ready.requestsTopic(),
        ready.requestsPartitions(),
        ready.dlqTopic(),
        ready.rerouteTopic());
    try {
      limits.awaitRead(LIMITS_READ_TIMEOUT);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new DelayServiceException("interrupted while reading the fire-rate limits");
    }
    streams.start();
    peerEviction.ifPresent(eviction -> eviction.start(peerCheck.get()));
  }

  /**
   * Whether to remove gone peers from the group ({@link PeerEviction}); if so, gives this instance
   * the static membership that needs.
   */
  private static Optional<Duration> peerCheck(
      ServiceConfig service, HostInfo self, Properties properties) {
    Optional<Duration> interval = service.failoverPeerCheck();
    if (interval.isEmpty() || self == null) {
      return Optional.empty();
    }
    if ("streams".equalsIgnoreCase(properties.getProperty(StreamsConfig.GROUP_PROTOCOL_CONFIG))) {
      log.info(
          "event=peer-eviction-off reason=\"group.protocol=streams does not allow static"
              + " membership\"");
      return Optional.empty();
    }
    for (String key :
        List.of(
            ConsumerConfig.GROUP_INSTANCE_ID_CONFIG,
            StreamsConfig.consumerPrefix(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG),
            StreamsConfig.mainConsumerPrefix(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG))) {
      if (properties.containsKey(key)) {
        log.info(
            "event=peer-eviction-off reason=\"group.instance.id is passed through; other instances"
                + " cannot tell this one's members\"");
        return Optional.empty();
      }
    }
    String nonce = UUID.randomUUID().toString().substring(0, 8);
    Optional<String> id = PeerEviction.groupInstanceId(self, nonce);
    if (id.isEmpty()) {
      log.info("event=peer-eviction-off reason=\"the advertised host name is too long\"");
      return Optional.empty();
    }
    properties.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, id.get());
    return interval;
  }

  /**
   * The partitions of the tasks this instance owns now: those it runs, and those it is restoring
   * (Kafka Streams' thread metadata names a thread's tasks only once they all run).
   */
  private Set<Integer> ownedPartitions(KafkaStreams app) {
    Set<Integer> owned = new HashSet<>();
    restoreProgress.restoring().forEach(restoring -> owned.add(restoring.partition()));
    try {
      app.metadataForLocalThreads().stream()
          .flatMap(thread -> thread.activeTasks().stream())
          .forEach(task -> owned.add(task.taskId().partition()));
    } catch (IllegalStateException | StreamsException e) {
      // Not running or rebalancing: starting, or closing.
    }
    return owned;
  }

  /** Serves the HTTP API; the admin API writes requests with a client of its own. */
  /** The request topics: the shared one, then each tenant's. */
  private static List<String> requestsTopics(DelayConfig ready) {
    List<String> topics = new ArrayList<>();
    topics.add(ready.requestsTopic());
    topics.addAll(ready.tenants().requestsTopics());
    return topics;
  }

  private void startHttp(DelayConfig ready, HostInfo self) {
    Map<String, Object> producer =
        ClientProperties.of(ready, ready.bootstrapServers(), ClientProperties.Kind.PRODUCER);
    // An HTTP caller waits at most this long, also when Kafka is unreachable.
    producer.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, (int) HTTP_CALL_TIMEOUT.toMillis());
    requestClient = DelayClient.create(producer, ready.requestsTopic());
    KafkaStreams app = streams;
    Health health = new Health(() -> Optional.of(app.state()), restoreProgress, () -> warming);
    peers =
        new Peers(
            HTTP_CALL_TIMEOUT,
            httpAccess.peerToken(),
            httpsKeys.map(HttpsKeys::clientContext),
            config.httpPeerHosts());
    ScheduleQueries queries = new ScheduleQueries(streams, self, ready.requestsPartitions(), peers);
    TargetTopicCheck targets = new TargetTopicCheck(new TargetPolicy(ready), targetTopics);
    http.start(
        AdminApi.builder()
            .metrics(metrics)
            .health(health)
            .queries(queries)
            .requests(requestClient)
            .tenants(ready.tenants(), requestClient::onTopic)
            .limits(
                new ScheduleBody.ServiceLimits(
                    ready.maxIdBytes(), ready.maxPayloadBytes(), ready.horizonMs()))
            .clock(Clock.systemUTC())
            .sendTimeout(HTTP_CALL_TIMEOUT)
            .targets(targets)
            .deadLetters(
                new DeadLetterRoutes(
                    new DeadLetterPages(
                        DeadLetterPages.consumers(
                            ClientProperties.of(
                                ready, ready.bootstrapServers(), ClientProperties.Kind.CONSUMER)),
                        ready.dlqTopic(),
                        HTTP_CALL_TIMEOUT,
                        Clock.systemUTC()),
                    targets,
                    HTTP_CALL_TIMEOUT))
            .console(console(ready, self))
            .build(),
        metrics.registry(),
        httpAccess);
    log.info("event=http-advertised application.server={}:{}", self.host(), self.port());
  }

  /** The web console, with a fire history sampled from now on. */
  private ConsoleRoutes console(DelayConfig ready, HostInfo self) {
    fireHistory = new FireHistory(metrics::fireCounts, Clock.systemUTC());
    fireHistory.start();
    KafkaStreams app = streams;
    return new ConsoleRoutes(
        metrics,
        fireHistory,
        ConsoleRoutes.instances(app::metadataForAllStreamsClients, self, ready.requestsTopic()),
        peers);
  }

  /**
   * The configured advertised host; else the loopback address bound, the only one a peer can reach
   * (this machine's name may resolve to another loopback address, 127.0.1.1 on Debian); else this
   * machine's name as other machines know it.
   */
  private static String advertisedHost(ServiceConfig config) {
    if (!config.httpAdvertisedHost().isBlank()) {
      return config.httpAdvertisedHost();
    }
    InetAddress bound = HttpAccess.bindAddress(config);
    if (bound.isLoopbackAddress()) {
      return bound.getHostAddress();
    }
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      log.warn(
          "event=host-name-unknown error={} advertised=localhost hint=\"set"
              + " delay.http.advertised.host\"",
          LogValues.quote(e));
      return "localhost";
    }
  }

  /**
   * Runs synthetic tasks through the fire path ({@link FirePathWarmup}), once per JVM, while Kafka
   * Streams joins the group and restores. A warm-up that fails costs speed only: it is logged.
   */
  private void warmUp(ServiceConfig ready) {
    try {
      if (warming && jvmWarmed.compareAndSet(false, true)) {
        FirePathWarmup.Warmed warmed = FirePathWarmup.warm(ready.delay(), ready.warmupTasks());
        log.info(
            "event=warmed-up tasks={} produced={} took_ms={} compilers_waited_ms={}",
            warmed.fired(),
            warmed.produced(),
            warmed.took().toMillis(),
            warmed.waited().toMillis());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // a close while warming: the start ends there
    } catch (RuntimeException | LinkageError e) {
      log.warn("event=warm-up-failed error={}", LogValues.quote(e));
    } finally {
      warming = false;
    }
  }

  private void awaitRunning(Optional<Duration> timeout) {
    long started = System.nanoTime();
    long deadline = started + timeout.map(Duration::toNanos).orElse(Long.MAX_VALUE / 2);
    while (true) {
      try {
        running.get(PROGRESS_INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
        break;
      } catch (TimeoutException e) {
        if (System.nanoTime() - deadline >= 0) {
          throw new DelayServiceException(
              "Kafka Streams did not reach RUNNING within " + timeout.get().toSeconds() + " s", e);
        }
        log.info("event=waiting-for-running state={}", state().orElse(null));
      } catch (ExecutionException e) {
        throw e.getCause() instanceof DelayServiceException cause
            ? cause
            : new DelayServiceException("Kafka Streams failed to start: " + e.getCause(), e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new DelayServiceException("Interrupted while starting Kafka Streams", e);
      }
    }
    log.info(
        "event=running application={} startup_ms={}",
        configured.delay().applicationId(),
        (System.nanoTime() - started) / 1_000_000);
  }

  /**
   * Stops the instance for a reason that no restart cures, logged here; it ends as failed ({@link
   * #awaitTermination} answers {@code ERROR}). Closes on a thread of its own: the caller may be one
   * that closing stops.
   */
  private void stopFor(String reason) {
    log.error("event=stopping-for-good reason={}", LogValues.quote(reason));
    failure = Optional.of(reason);
    Thread stopper = new Thread(this::close, "kdelay-stop");
    stopper.start();
  }

  private void ensureOpen() {
    if (closed) {
      throw new DelayServiceException("kdelay was stopped while starting");
    }
  }

  /** Runs on whichever Kafka Streams thread changes the state; takes no lock of ours. */
  private void onStateChange(KafkaStreams.State newState, KafkaStreams.State oldState) {
    log.info("event=streams-state from={} to={}", oldState, newState);
    if (newState == KafkaStreams.State.REBALANCING || newState == KafkaStreams.State.RUNNING) {
      // Tasks may come from an instance that died in a transaction, which must not hold their
      // partitions until the broker's timeout: looked for until the tasks run, and once more.
      orphans.ifPresent(OrphanedTransactions::checkSoon);
    }
    if (newState == KafkaStreams.State.REBALANCING) {
      // Partitions added to the requests topic by hand start a rebalance that cannot succeed.
      partitionCount.ifPresent(PartitionCountGuard::checkSoon);
    }
    if (newState == KafkaStreams.State.RUNNING) {
      running.complete(null);
    } else if (newState == KafkaStreams.State.ERROR) {
      running.completeExceptionally(
          new DelayServiceException("Kafka Streams went to ERROR; see the log above"));
      terminated.complete(newState);
    }
    // NOT_RUNNING comes from close(), which completes termination once the broker is down too.
  }
}

package dev.kdelay.service.http;

import static dev.kdelay.service.http.Route.ID;
import static java.util.Objects.requireNonNull;

import dev.kdelay.client.DelayClient;
import dev.kdelay.client.DelayedMessage;
import dev.kdelay.schemas.Action;
import dev.kdelay.service.ServiceMetrics;
import dev.kdelay.service.http.Route.Reach;
import dev.kdelay.topology.Tenants;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * The routes of the service's HTTP API:
 *
 * <pre>
 * GET    /                           the web console, and its files under /console/: see {@link
 *        ConsoleRoutes}, with GET /overview
 * GET    /metrics                    Prometheus text format
 * GET    /health/live                200 UP / 503 DOWN, JSON
 * GET    /health/ready
 * GET    /schedules?dueBefore=&amp;limit=&amp;after=   pending tasks in due order, paged, all instances;
 *        also dueAfter=, idPrefix=, topic= to search (see {@link PageRequest})
 * POST   /schedules                  schedule from a JSON body
 * GET    /schedules/{id}             status of one schedule, from the instance that owns it
 * DELETE /schedules/{id}             cancel
 * POST   /schedules/{id}/pause       pause a recurring schedule
 * POST   /schedules/{id}/resume      resume it
 * POST   /schedules/{id}/trigger     fire its next occurrence now
 * POST   /schedules/{id}/reschedule  move it to a new time: {"fireAt"|"after"|"cron", ...}
 * GET    /cron/preview?cron=&amp;cronType=&amp;zone=&amp;count=   next occurrences: see {@link CronPreview}
 * GET    /dead-letters, /dead-letters/{partition}/{offset}, POST .../replay: see {@link
 *        DeadLetterRoutes}
 * </pre>
 *
 * <p>With tenants, the schedule and dead-letter routes act on one tenant's schedules, or the shared
 * namespace's: the one the caller's token acts for, or the one {@code ?tenant=} names ({@link
 * Namespaces}).
 *
 * <p>Changes are never applied here: they are written to the request topic with the client SDK,
 * like any client's, and answered 202 once Kafka has acknowledged them. The log stays the one
 * source of truth; {@code GET /schedules/{id}} shows when a change has been applied.
 *
 * <p>Errors are JSON, {@code {"error": CODE, "message": ...}}: 400 for a bad request (with the
 * request topic's rejection codes where one applies), 422 {@code UNKNOWN_TOPIC} or {@code
 * TARGET_NOT_ALLOWED} for a schedule whose target topic would certainly dead-letter it, 404 for an
 * unknown route, 405 for a wrong method, 500 {@code UNREADABLE_TASK} for stored bytes that cannot
 * be decoded, 503 when the answer cannot be had now ({@code UNAVAILABLE}, or {@code OVERLOADED}
 * from {@link HttpEndpoint}).
 *
 * <p>Each route declares, with each method, where its answer comes from (its reach), and so the
 * thread {@link HttpEndpoint} answers it on: health, metrics and the console's files from this
 * instance's memory, at once; reads of schedules from whichever instance owns the partition; the
 * rest here. Only reads of schedules and the console's overview (every instance's figures) ask
 * other instances, and never for a request another instance forwarded here: that one is answered
 * from this instance's own stores, so a request crosses at most one hop and two instances never
 * wait on each other.
 *
 * <pre>{@code
 * AdminApi api =
 *     AdminApi.builder()
 *         .metrics(metrics)
 *         .health(health)
 *         .queries(queries)
 *         .requests(delayClient)
 *         .limits(limits)
 *         .sendTimeout(Duration.ofSeconds(10))
 *         .targets(targetTopicCheck)
 *         .deadLetters(deadLetterRoutes)
 *         .console(consoleRoutes)
 *         .build();
 * }</pre>
 */
public final class AdminApi implements HttpEndpoint.Api {

  private final ServiceMetrics metrics;
  private final Health health;
  private final ScheduleQueries queries;
  private final Namespaces namespaces;
  private final ScheduleBody.ServiceLimits limits;
  private final Clock clock;
  private final Duration sendTimeout;
  private final TargetTopicCheck targets;
  private final List<Route> routes;

  private AdminApi(Builder builder) {
    this.metrics = builder.metrics;
    this.health = builder.health;
    this.queries = builder.queries;
    this.namespaces = new Namespaces(builder.tenants, builder.requests, builder.tenantClients);
    this.limits = builder.limits;
    this.clock = builder.clock;
    this.sendTimeout = builder.sendTimeout;
    this.targets = builder.targets;
    List<Route> routes = new ArrayList<>(serviceRoutes());
    builder.deadLetters.ifPresent(letters -> routes.addAll(letters.routes(namespaces)));
    builder.console.ifPresent(pages -> routes.addAll(pages.routes()));
    this.routes = List.copyOf(routes);
  }

  /** A builder of the API; the dead-letter routes and the console are served only if given. */
  public static Builder builder() {
    return new Builder();
  }

  /** Health, metrics, schedules and the cron preview: the routes always served. */
  private List<Route> serviceRoutes() {
    return List.of(
        Route.of("metrics").get(Reach.MEMORY, (r, v) -> metrics(r.tenant())),
        Route.of("health", "live").get(Reach.MEMORY, (r, v) -> health.live()),
        Route.of("health", "ready").get(Reach.MEMORY, (r, v) -> health.ready()),
        Route.of("schedules").get(Reach.PEERS, this::pending).post(Reach.LOCAL, this::schedule),
        Route.of("schedules", ID).get(Reach.PEERS, this::view).delete(Reach.LOCAL, this::cancel),
        Route.of("schedules", ID, "pause").post(Reach.LOCAL, this::pause),
        Route.of("schedules", ID, "resume").post(Reach.LOCAL, this::resume),
        Route.of("schedules", ID, "trigger").post(Reach.LOCAL, this::trigger),
        Route.of("schedules", ID, "reschedule").post(Reach.LOCAL, this::reschedule),
        Route.of("cron", "preview")
            .get(
                Reach.LOCAL,
                (r, v) -> CronPreview.answer(r.query(), clock.millis(), limits.horizonMs())));
  }

  /**
   * Answers a request. A bad or impossible request is answered (4xx, 503); anything else
   * propagates, and the endpoint answers 500.
   */
  @Override
  public ApiResponse handle(ApiRequest request) {
    try {
      Optional<Route.Match> matched = match(request);
      if (matched.isEmpty()) {
        return ApiResponse.error(
            404,
            "NOT_FOUND",
            "no route " + request.method() + " /" + String.join("/", request.segments()));
      }
      Optional<Route.Handler> handler = matched.get().handler(request.method());
      if (handler.isEmpty()) {
        Set<String> allowed = matched.get().route().byMethod().keySet();
        return ApiResponse.error(
                405,
                "METHOD_NOT_ALLOWED",
                request.method() + " is not allowed here; allowed: " + allowed)
            .withHeader("Allow", String.join(", ", allowed));
      }
      return handler.get().answer().answer(request, matched.get().variables());
    } catch (ApiException e) {
      return ApiResponse.of(e);
    }
  }

  /** A route whose answer may come from another instance, unless forwarded here already. */
  @Override
  public boolean asksPeers(ApiRequest request) {
    return !request.forwarded() && reach(request) == Reach.PEERS;
  }

  /** A route answered from this instance's memory only: health, metrics, the console's files. */
  @Override
  public boolean answersAtOnce(ApiRequest request) {
    return reach(request) == Reach.MEMORY;
  }

  /** Where the request's answer comes from; a 404 or 405 is answered here, from nothing. */
  private Reach reach(ApiRequest request) {
    return match(request)
        .flatMap(matched -> matched.handler(request.method()))
        .map(Route.Handler::reach)
        .orElse(Reach.LOCAL);
  }

  /** The first route whose pattern the request's path matches. */
  private Optional<Route.Match> match(ApiRequest request) {
    for (Route route : routes) {
      Optional<Route.Match> match = route.match(request.segments());
      if (match.isPresent()) {
        return match;
      }
    }
    return Optional.empty();
  }

  /** The scrape; for a tenant's token, that tenant's own series only. */
  private ApiResponse metrics(Optional<String> tenant) {
    String scrape = metrics.scrape();
    return ApiResponse.text(
        200,
        ServiceMetrics.CONTENT_TYPE,
        tenant.map(t -> ServiceMetrics.ofTenant(scrape, t)).orElse(scrape));
  }

  /**
   * A page of pending tasks: a tenant's caller sees its tenant's only; a caller of the whole
   * deployment every tenant's, or one tenant's with {@code ?tenant=}.
   */
  private ApiResponse pending(ApiRequest request, List<String> variables) {
    Optional<Tenants.Tenant> tenant = namespaces.of(request);
    PageRequest page =
        PageRequest.from(request.query()).ofTenant(tenant.map(Tenants.Tenant::name).orElse(null));
    return queries.pending(page, request.forwarded());
  }

  private ApiResponse view(ApiRequest request, List<String> variables) {
    Optional<Tenants.Tenant> tenant = namespaces.of(request);
    return queries.view(Namespaces.kept(tenant, id(variables)), request.forwarded());
  }

  private ApiResponse schedule(ApiRequest request, List<String> variables) {
    Optional<Tenants.Tenant> tenant = namespaces.of(request);
    DelayedMessage message = ScheduleBody.parse(request.body(), limitsOf(tenant), clock.millis());
    targets.check(tenant, message.targetTopic());
    return sent(tenant, message.id(), Action.SCHEDULE, r -> r.schedule(message));
  }

  private ApiResponse cancel(ApiRequest request, List<String> variables) {
    String id = id(variables);
    return sent(namespaces.of(request), id, Action.CANCEL, r -> r.cancel(id));
  }

  private ApiResponse pause(ApiRequest request, List<String> variables) {
    String id = id(variables);
    return sent(namespaces.of(request), id, Action.PAUSE, r -> r.pause(id));
  }

  private ApiResponse resume(ApiRequest request, List<String> variables) {
    String id = id(variables);
    return sent(namespaces.of(request), id, Action.RESUME, r -> r.resume(id));
  }

  private ApiResponse trigger(ApiRequest request, List<String> variables) {
    String id = id(variables);
    return sent(namespaces.of(request), id, Action.TRIGGER, r -> r.trigger(id));
  }

  private ApiResponse reschedule(ApiRequest request, List<String> variables) {
    String id = id(variables);
    Optional<Tenants.Tenant> tenant = namespaces.of(request);
    ScheduleBody.NewTime time = ScheduleBody.parseTime(request.body(), limits, clock.millis());
    return sent(tenant, id, Action.RESCHEDULE, r -> time.send(r, id));
  }

  /** The limits a namespace's schedules meet: a tenant's payload limit is its own. */
  private ScheduleBody.ServiceLimits limitsOf(Optional<Tenants.Tenant> tenant) {
    return tenant
        .map(
            t ->
                new ScheduleBody.ServiceLimits(
                    limits.maxIdBytes(),
                    Math.min(limits.maxPayloadBytes(), t.maxPayloadBytes()),
                    limits.horizonMs()))
        .orElse(limits);
  }

  /** The id a route names, as its namespace's caller sent it. */
  private String id(List<String> variables) {
    String id = variables.get(0);
    int bytes = id.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > limits.maxIdBytes()) {
      throw ApiException.badRequest(
          "BAD_ID", "the id is " + bytes + " UTF-8 bytes; the limit is " + limits.maxIdBytes());
    }
    return id;
  }

  /**
   * Writes a request with the SDK, to the request topic of the namespace it acts on, and answers
   * 202 once Kafka acknowledged it.
   */
  private ApiResponse sent(
      Optional<Tenants.Tenant> tenant,
      String id,
      Action action,
      Function<DelayClient, CompletableFuture<RecordMetadata>> send) {
    RecordMetadata written;
    try {
      written =
          send.apply(namespaces.requests(tenant))
              .get(sendTimeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (IllegalArgumentException e) {
      throw ApiException.badRequest("BAD_ID", e.getMessage());
    } catch (ExecutionException e) {
      throw ApiException.unavailable("the request could not be written: " + e.getCause());
    } catch (TimeoutException e) {
      throw ApiException.unavailable(
          "Kafka did not acknowledge the request within " + sendTimeout.toMillis() + " ms");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw ApiException.unavailable("interrupted while writing the request");
    }
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("id", id);
    tenant.ifPresent(t -> body.put("tenant", t.name()));
    body.put("action", action.wireName());
    body.put("status", "accepted");
    body.put("requestsTopic", written.topic());
    body.put("partition", written.partition());
    body.put("offset", written.offset());
    body.put("timestamp", written.timestamp());
    return ApiResponse.json(202, body);
  }

  /**
   * Builds an {@link AdminApi}. The metrics, the service's limits and the send timeout are
   * required; the clock is the system's unless set; target topics are not checked unless a {@link
   * TargetTopicCheck} is set. An API built without health, queries or a request client (a test's)
   * answers 500 on their routes.
   */
  public static final class Builder {

    private ServiceMetrics metrics;
    private Health health;
    private ScheduleQueries queries;
    private DelayClient requests;
    private Tenants tenants = Tenants.NONE;
    private Function<String, DelayClient> tenantClients = topic -> null; // asked per tenant
    private ScheduleBody.ServiceLimits limits;
    private Clock clock = Clock.systemUTC();
    private Duration sendTimeout;
    private TargetTopicCheck targets = TargetTopicCheck.NONE;
    private Optional<DeadLetterRoutes> deadLetters = Optional.empty();
    private Optional<ConsoleRoutes> console = Optional.empty();

    private Builder() {}

    /** The metrics {@code GET /metrics} scrapes. */
    public Builder metrics(ServiceMetrics metrics) {
      this.metrics = requireNonNull(metrics, "metrics cannot be null");
      return this;
    }

    /** What {@code GET /health/live} and {@code /health/ready} answer. */
    public Builder health(Health health) {
      this.health = requireNonNull(health, "health cannot be null");
      return this;
    }

    /** The reads of schedules, from this instance's stores or the owner's. */
    public Builder queries(ScheduleQueries queries) {
      this.queries = requireNonNull(queries, "queries cannot be null");
      return this;
    }

    /** The client that writes changes to the request topic. */
    public Builder requests(DelayClient requests) {
      this.requests = requireNonNull(requests, "requests cannot be null");
      return this;
    }

    /**
     * The deployment's tenants, and a client that writes to a tenant's request topic, given the
     * topic. Without tenants every request acts on the shared namespace, written with {@link
     * #requests}.
     */
    public Builder tenants(Tenants tenants, Function<String, DelayClient> clientOf) {
      this.tenants = requireNonNull(tenants, "tenants cannot be null");
      this.tenantClients = requireNonNull(clientOf, "clientOf cannot be null");
      return this;
    }

    /** The service's limits on ids, payloads and how far ahead a schedule may be. */
    public Builder limits(ScheduleBody.ServiceLimits limits) {
      this.limits = requireNonNull(limits, "limits cannot be null");
      return this;
    }

    /** The clock a schedule's relative time and the cron preview start from. */
    public Builder clock(Clock clock) {
      this.clock = requireNonNull(clock, "clock cannot be null");
      return this;
    }

    /** How long a change waits for Kafka's acknowledgement before the answer is 503. */
    public Builder sendTimeout(Duration sendTimeout) {
      this.sendTimeout = requireNonNull(sendTimeout, "sendTimeout cannot be null");
      return this;
    }

    /** The check of a new schedule's target topic: 422 for one that would be dead-lettered. */
    public Builder targets(TargetTopicCheck targets) {
      this.targets = requireNonNull(targets, "targets cannot be null");
      return this;
    }

    /** Serves the dead-letter routes. */
    public Builder deadLetters(DeadLetterRoutes deadLetters) {
      this.deadLetters = Optional.of(requireNonNull(deadLetters, "deadLetters cannot be null"));
      return this;
    }

    /** Serves the web console: its page, its files and {@code GET /overview}. */
    public Builder console(ConsoleRoutes console) {
      this.console = Optional.of(requireNonNull(console, "console cannot be null"));
      return this;
    }

    /**
     * The API.
     *
     * @throws NullPointerException if the metrics, the limits or the send timeout were not set
     */
    public AdminApi build() {
      requireNonNull(metrics, "metrics must be set");
      requireNonNull(limits, "limits must be set");
      requireNonNull(sendTimeout, "sendTimeout must be set");
      return new AdminApi(this);
    }
  }
}

package dev.kdelay.service.http;

import dev.kdelay.client.DelayClient;
import dev.kdelay.client.DelayedMessage;
import dev.kdelay.schemas.Action;
import dev.kdelay.service.ServiceMetrics;
import dev.kdelay.topology.LogValues;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * <p>Only reads of schedules ask other instances ({@link #asksPeers}), and never for a request
 * another instance forwarded here: that one is answered from this instance's own stores, so a
 * request crosses at most one hop and two instances never wait on each other.
 */
public final class AdminApi implements HttpEndpoint.Api {

  private static final Logger log = LoggerFactory.getLogger(AdminApi.class);

  private static final String ID = "{id}";

  /** Answers a request whose path matched a route, given the path's variable segments. */
  @FunctionalInterface
  private interface Handler {
    ApiResponse handle(ApiRequest request, List<String> variables);
  }

  private record Route(List<String> pattern, Map<String, Handler> byMethod) {

    /** The variable segments if the path matches. */
    Optional<List<String>> match(List<String> segments) {
      if (segments.size() != pattern.size()) {
        return Optional.empty();
      }
      List<String> variables = new ArrayList<>();
      for (int i = 0; i < pattern.size(); i++) {
        if (pattern.get(i).equals(ID)) {
          variables.add(segments.get(i));
        } else if (!pattern.get(i).equals(segments.get(i))) {
          return Optional.empty();
        }
      }
      return Optional.of(variables);
    }
  }

  private final ServiceMetrics metrics;
  private final Health health;
  private final ScheduleQueries queries;
  private final DelayClient requests;
  private final ScheduleBody.ServiceLimits limits;
  private final Clock clock;
  private final Duration sendTimeout;
  private final TargetTopicCheck targets;
  private final List<Route> routes;

  public AdminApi(
      ServiceMetrics metrics,
      Health health,
      ScheduleQueries queries,
      DelayClient requests,
      ScheduleBody.ServiceLimits limits,
      Clock clock,
      Duration sendTimeout) {
    this(metrics, health, queries, requests, limits, clock, sendTimeout, TargetTopicCheck.NONE);
  }

  public AdminApi(
      ServiceMetrics metrics,
      Health health,
      ScheduleQueries queries,
      DelayClient requests,
      ScheduleBody.ServiceLimits limits,
      Clock clock,
      Duration sendTimeout,
      TargetTopicCheck targets) {
    this(
        metrics,
        health,
        queries,
        requests,
        limits,
        clock,
        sendTimeout,
        targets,
        Optional.empty(),
        Optional.empty());
  }

  /**
   * The API with every route and the web console.
   *
   * @param deadLetters the dead-letter routes; empty to serve none
   * @param console the console's page and routes; empty to serve none
   */
  public AdminApi(
      ServiceMetrics metrics,
      Health health,
      ScheduleQueries queries,
      DelayClient requests,
      ScheduleBody.ServiceLimits limits,
      Clock clock,
      Duration sendTimeout,
      TargetTopicCheck targets,
      Optional<DeadLetterRoutes> deadLetters,
      Optional<ConsoleRoutes> console) {
    this.targets = targets;
    this.metrics = metrics;
    this.health = health;
    this.queries = queries;
    this.requests = requests;
    this.limits = limits;
    this.clock = clock;
    this.sendTimeout = sendTimeout;
    List<Route> routes =
        new ArrayList<>(
            List.of(
                new Route(List.of("metrics"), Map.of("GET", (r, v) -> metrics())),
                new Route(List.of("health", "live"), Map.of("GET", (r, v) -> health.live())),
                new Route(List.of("health", "ready"), Map.of("GET", (r, v) -> health.ready())),
                new Route(
                    List.of("schedules"), Map.of("GET", this::pending, "POST", this::schedule)),
                new Route(
                    List.of("schedules", ID), Map.of("GET", this::view, "DELETE", this::cancel)),
                new Route(List.of("schedules", ID, "pause"), Map.of("POST", this::pause)),
                new Route(List.of("schedules", ID, "resume"), Map.of("POST", this::resume)),
                new Route(List.of("schedules", ID, "trigger"), Map.of("POST", this::trigger)),
                new Route(List.of("schedules", ID, "reschedule"), Map.of("POST", this::reschedule)),
                new Route(
                    List.of("cron", "preview"),
                    Map.of(
                        "GET",
                        (r, v) ->
                            CronPreview.answer(r.query(), clock.millis(), limits.horizonMs())))));
    deadLetters.ifPresent(
        letters -> {
          routes.add(new Route(List.of("dead-letters"), Map.of("GET", (r, v) -> letters.list(r))));
          routes.add(
              new Route(List.of("dead-letters", ID, ID), Map.of("GET", (r, v) -> letters.show(v))));
          routes.add(
              new Route(
                  List.of("dead-letters", ID, ID, "replay"), Map.of("POST", letters::replay)));
        });
    console.ifPresent(
        pages -> {
          routes.add(new Route(List.of(), Map.of("GET", (r, v) -> pages.index())));
          routes.add(
              new Route(List.of("console", ID), Map.of("GET", (r, v) -> pages.file(v.get(0)))));
          routes.add(
              new Route(
                  List.of("overview"), Map.of("GET", (r, v) -> pages.overview(r.forwarded()))));
        });
    this.routes = List.copyOf(routes);
  }

  /**
   * Answers a request. A bad or impossible request is answered (4xx, 503); anything else
   * propagates, and the endpoint answers 500.
   */
  @Override
  public ApiResponse handle(ApiRequest request) {
    try {
      for (Route route : routes) {
        Optional<List<String>> variables = route.match(request.segments());
        if (variables.isPresent()) {
          Handler handler = route.byMethod().get(request.method());
          if (handler == null) {
            return ApiResponse.error(
                    405,
                    "METHOD_NOT_ALLOWED",
                    request.method()
                        + " is not allowed here; allowed: "
                        + route.byMethod().keySet())
                .withHeader("Allow", String.join(", ", route.byMethod().keySet()));
          }
          return handler.handle(request, variables.get());
        }
      }
      return ApiResponse.error(
          404,
          "NOT_FOUND",
          "no route " + request.method() + " /" + String.join("/", request.segments()));
    } catch (ApiException e) {
      return ApiResponse.of(e);
    }
  }

  /**
   * {@code GET /schedules}, {@code GET /schedules/{id}} and {@code GET /overview}, unless forwarded
   * here already.
   */
  @Override
  public boolean asksPeers(ApiRequest request) {
    return !request.forwarded()
        && request.method().equals("GET")
        && !request.segments().isEmpty()
        && (request.segments().get(0).equals("schedules")
            || request.segments().equals(List.of("overview")));
  }

  /** Health, metrics and the console's files: they read this instance's memory only. */
  @Override
  public boolean answersAtOnce(ApiRequest request) {
    List<String> path = request.segments();
    return request.method().equals("GET")
        && (path.equals(List.of("metrics"))
            || path.equals(List.of("health", "live"))
            || path.equals(List.of("health", "ready"))
            || ConsoleRoutes.isFile(path));
  }

  private ApiResponse metrics() {
    return ApiResponse.text(200, ServiceMetrics.CONTENT_TYPE, metrics.scrape());
  }

  private ApiResponse pending(ApiRequest request, List<String> variables) {
    return queries.pending(PageRequest.from(request.query()), request.forwarded());
  }

  private ApiResponse view(ApiRequest request, List<String> variables) {
    return queries.view(id(variables), request.forwarded());
  }

  private ApiResponse schedule(ApiRequest request, List<String> variables) {
    DelayedMessage message = ScheduleBody.parse(request.body(), limits, clock.millis());
    targets.check(message.targetTopic());
    return sent(message.id(), Action.SCHEDULE, requests::schedule, message);
  }

  private ApiResponse cancel(ApiRequest request, List<String> variables) {
    return sent(id(variables), Action.CANCEL, requests::cancel, id(variables));
  }

  private ApiResponse pause(ApiRequest request, List<String> variables) {
    return sent(id(variables), Action.PAUSE, requests::pause, id(variables));
  }

  private ApiResponse resume(ApiRequest request, List<String> variables) {
    return sent(id(variables), Action.RESUME, requests::resume, id(variables));
  }

  private ApiResponse trigger(ApiRequest request, List<String> variables) {
    return sent(id(variables), Action.TRIGGER, requests::trigger, id(variables));
  }

  private ApiResponse reschedule(ApiRequest request, List<String> variables) {
    String id = id(variables);
    ScheduleBody.NewTime time = ScheduleBody.parseTime(request.body(), limits, clock.millis());
    return sent(id, Action.RESCHEDULE, t -> t.send(requests, id), time);
  }

  private String id(List<String> variables) {
    String id = variables.get(0);
    int bytes = id.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > limits.maxIdBytes()) {
      throw ApiException.badRequest(
          "BAD_ID", "the id is " + bytes + " UTF-8 bytes; the limit is " + limits.maxIdBytes());
    }
    return id;
  }

  /** Writes a request with the SDK and answers 202 once Kafka acknowledged it. */
  private <T> ApiResponse sent(
      String id, Action action, Function<T, CompletableFuture<RecordMetadata>> send, T argument) {
    RecordMetadata written;
    try {
      written = send.apply(argument).get(sendTimeout.toMillis(), TimeUnit.MILLISECONDS);
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
    log.info(
        "event=admin-request action={} id={} partition={} offset={}",
        action.wireName(),
        LogValues.quote(id),
        written.partition(),
        written.offset());
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("id", id);
    body.put("action", action.wireName());
    body.put("status", "accepted");
    body.put("requestsTopic", written.topic());
    body.put("partition", written.partition());
    body.put("offset", written.offset());
    body.put("timestamp", written.timestamp());
    return ApiResponse.json(202, body);
  }
}

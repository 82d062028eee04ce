package dev.kdelay.service.http;

import static java.util.Objects.requireNonNull;

import dev.kdelay.service.ServiceMetrics;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.StreamsMetadata;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.state.HostInfo;

/**
 * The web console's routes:
 *
 * <pre>
 * GET /                  the console's page
 * GET /console/{file}    its script and style sheet
 * GET /overview          every instance's figures and partitions, and this one's fire history
 * </pre>
 *
 * <p>The page and its files hold no data, so {@link HttpAccess} serves them without a token; the
 * page asks the API for everything it shows, with the token the user typed in. They are read from
 * the jar once, and served with a policy that lets the page load nothing but its own files: no
 * inline script, no other origin, no framing.
 *
 * <p>The overview merges each instance's own figures, as {@code GET /metrics} reports them, with
 * the partitions Kafka Streams says it owns; another instance's figures are asked for with a
 * forwarded {@code GET /overview}, which answers from that instance alone.
 */
public final class ConsoleRoutes {

  /** Where the files are in the jar. */
  static final String RESOURCES = "/console/";

  static final String INDEX = "index.html";

  private static final Map<String, String> TYPES =
      Map.of(
          INDEX,
          "text/html; charset=utf-8",
          "console.js",
          "text/javascript; charset=utf-8",
          "console.css",
          "text/css; charset=utf-8");

  static final String CONTENT_SECURITY_POLICY =
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
          + " connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

  /** What the overview needs of the instance it runs on. */
  public interface Instances {

    /** Every instance of the application, as Kafka Streams knows them. */
    Collection<StreamsMetadata> all();

    /** This instance. */
    HostInfo self();

    /** The request topic, whose partitions decide which instance holds a schedule. */
    String requestsTopic();
  }

  private final Map<String, ApiResponse> files;
  private final ServiceMetrics metrics;
  private final FireHistory history;
  private final Instances instances;
  private final Peers peers;

  /**
   * The console.
   *
   * @param metrics this instance's figures
   * @param history this instance's fire history
   * @param instances the application's instances
   * @param peers asks other instances for theirs
   * @throws UncheckedIOException if the console's files are missing from the class path
   */
  public ConsoleRoutes(
      ServiceMetrics metrics, FireHistory history, Instances instances, Peers peers) {
    this.metrics = requireNonNull(metrics, "metrics cannot be null");
    this.history = requireNonNull(history, "history cannot be null");
    this.instances = requireNonNull(instances, "instances cannot be null");
    this.peers = requireNonNull(peers, "peers cannot be null");
    this.files = files();
  }

  private static Map<String, ApiResponse> files() {
    Map<String, ApiResponse> files = new TreeMap<>();
    TYPES.forEach(
        (name, type) ->
            files.put(
                name,
                new ApiResponse(200, type, read(name), Map.of())
                    .withHeader("Cache-Control", "no-cache")
                    .withHeader("X-Content-Type-Options", "nosniff")
                    .withHeader("Referrer-Policy", "no-referrer")
                    .withHeader("Content-Security-Policy", CONTENT_SECURITY_POLICY)));
    return Map.copyOf(files);
  }

  private static byte[] read(String name) {
    try (InputStream in = ConsoleRoutes.class.getResourceAsStream(RESOURCES + name)) {
      if (in == null) {
        throw new UncheckedIOException(
            new IOException("the console's " + name + " is missing from the class path"));
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Its routes: the page and its files from memory, at once; the overview from every instance. */
  List<Route> routes() {
    return List.of(
        Route.of().get(Route.Reach.MEMORY, (r, v) -> index()),
        Route.of("console", Route.ID).get(Route.Reach.MEMORY, (r, v) -> file(v.get(0))),
        Route.of("overview").get(Route.Reach.PEERS, (r, v) -> overview(r.forwarded())));
  }

  /** Whether a path is one of the console's files: {@code /} or {@code /console/{file}}. */
  static boolean isFile(List<String> segments) {
    return segments.isEmpty() || (segments.size() == 2 && segments.get(0).equals("console"));
  }

  /** {@code GET /}. */
  ApiResponse index() {
    return files.get(INDEX);
  }

  /** {@code GET /console/{file}}: 404 for any name but the console's own files. */
  ApiResponse file(String name) {
    ApiResponse file = files.get(name);
    if (file == null) {
      return ApiResponse.error(404, "NOT_FOUND", "the console has no file '" + name + "'");
    }
    return file;
  }

  /** {@code GET /overview}; forwarded, this instance's figures only. */
  ApiResponse overview(boolean forwarded) {
    if (forwarded) {
      return ApiResponse.json(200, local());
    }
    HostInfo self = instances.self();
    List<Object> listed = new ArrayList<>();
    Map<String, Object> totals = new LinkedHashMap<>();
    Totals sum = new Totals();
    Collection<StreamsMetadata> all;
    try {
      all = instances.all();
    } catch (IllegalStateException | StreamsException e) {
      throw ApiException.unavailable("Kafka Streams is not running: " + e.getMessage());
    }
    for (StreamsMetadata instance : sorted(all)) {
      Map<String, Object> json = new LinkedHashMap<>();
      HostInfo host = instance.hostInfo();
      json.put("instance", host.host() + ":" + host.port());
      json.put("self", host.equals(self));
      json.put("partitions", partitions(instance.topicPartitions()));
      json.put("standbyPartitions", partitions(instance.standbyTopicPartitions()));
      Map<String, Object> figures = host.equals(self) ? local() : remote(host);
      json.putAll(figures);
      sum.add(figures);
      listed.add(json);
    }
    sum.into(totals);
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("instance", self.host() + ":" + self.port());
    body.put("totals", totals);
    body.put("instances", listed);
    body.put("history", history.points());
    body.put("historyIntervalSeconds", FireHistory.INTERVAL.toSeconds());
    return ApiResponse.json(200, body);
  }

  private static List<StreamsMetadata> sorted(Collection<StreamsMetadata> all) {
    List<StreamsMetadata> sorted = new ArrayList<>(all);
    sorted.sort(
        (a, b) ->
            (a.hostInfo().host() + ":" + a.hostInfo().port())
                .compareTo(b.hostInfo().host() + ":" + b.hostInfo().port()));
    return sorted;
  }

  private Set<Integer> partitions(Set<TopicPartition> owned) {
    Set<Integer> partitions = new TreeSet<>();
    for (TopicPartition partition : owned) {
      if (partition.topic().equals(instances.requestsTopic())) {
        partitions.add(partition.partition());
      }
    }
    return partitions;
  }

  /** This instance's figures; a count still being made is null. */
  private Map<String, Object> local() {
    ServiceMetrics.Summary summary = metrics.summary();
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("pending", count(summary.pendingTasks()));
    json.put("paused", count(summary.pausedSchedules()));
    if (summary.nextDueMs() >= 0) {
      json.put("nextDueAt", Instant.ofEpochMilli(summary.nextDueMs()).toString());
      json.put("nextDueAtMs", summary.nextDueMs());
    } else {
      json.put("nextDueAt", null);
      json.put("nextDueAtMs", null);
    }
    json.put("oldestOverdueSeconds", summary.oldestOverdueSeconds());
    json.put("rejections", summary.rejections());
    return json;
  }

  private static Long count(double value) {
    return Double.isNaN(value) ? null : (long) value;
  }

  private Map<String, Object> remote(HostInfo host) {
    try {
      ApiResponse response = peers.get(host, "/overview");
      if (response.status() == 200) {
        @SuppressWarnings("unchecked")
        Map<String, Object> figures = ApiResponse.MAPPER.readValue(response.body(), Map.class);
        return figures;
      }
      return Map.of("unreachable", "answered " + response.status());
    } catch (ApiException e) {
      return Map.of("unreachable", e.getMessage());
    } catch (IOException e) {
      return Map.of("unreachable", "answered with bad JSON");
    }
  }

  /** The application's figures: sums, the earliest next due, the oldest overdue. */
  private static final class Totals {
    long pending;
    long paused;
    boolean counting;
    Long nextDueMs;
    double oldestOverdueSeconds;
    final Map<String, Long> rejections = new TreeMap<>();

    void add(Map<String, Object> figures) {
      if (figures.containsKey("unreachable")) {
        counting = true;
        return;
      }
      if (figures.get("pending") instanceof Number number) {
        pending += number.longValue();
      } else {
        counting = true;
      }
      if (figures.get("paused") instanceof Number number) {
        paused += number.longValue();
      }
      if (figures.get("nextDueAtMs") instanceof Number number
          && (nextDueMs == null || number.longValue() < nextDueMs)) {
        nextDueMs = number.longValue();
      }
      if (figures.get("oldestOverdueSeconds") instanceof Number number) {
        oldestOverdueSeconds = Math.max(oldestOverdueSeconds, number.doubleValue());
      }
      if (figures.get("rejections") instanceof Map<?, ?> byCode) {
        byCode.forEach(
            (code, count) -> {
              if (count instanceof Number number) {
                rejections.merge(String.valueOf(code), number.longValue(), Long::sum);
              }
            });
      }
    }

    void into(Map<String, Object> json) {
      json.put("pending", pending);
      json.put("paused", paused);
      json.put("complete", !counting);
      json.put("nextDueAt", nextDueMs == null ? null : Instant.ofEpochMilli(nextDueMs).toString());
      json.put("nextDueAtMs", nextDueMs);
      json.put("oldestOverdueSeconds", oldestOverdueSeconds);
      json.put("rejections", rejections);
    }
  }

  /** {@code Supplier} of the instances, for wiring with a Kafka Streams that may not run yet. */
  public static Instances instances(
      Supplier<Collection<StreamsMetadata>> all, HostInfo self, String requestsTopic) {
    return new Instances() {
      @Override
      public Collection<StreamsMetadata> all() {
        return all.get();
      }

      @Override
      public HostInfo self() {
        return self;
      }

      @Override
      public String requestsTopic() {
        return requestsTopic;
      }
    };
  }
}

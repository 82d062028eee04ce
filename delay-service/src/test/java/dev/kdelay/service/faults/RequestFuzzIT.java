package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.Action;
import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.schemas.generators.Choices;
import dev.kdelay.schemas.generators.GeneratedRequest;
import dev.kdelay.schemas.generators.GeneratedRequest.Intent;
import dev.kdelay.schemas.generators.GeneratedRequest.Timing;
import dev.kdelay.schemas.generators.ParseOracle;
import dev.kdelay.schemas.generators.RequestGenerators;
import dev.kdelay.schemas.generators.RequestSpec;
import dev.kdelay.service.KafkaClusterExtension;
import dev.kdelay.service.KafkaTestCluster;
import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.service.faults.CommittedRecords.Received;
import dev.kdelay.topology.DelayConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.InvalidTimestampException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Requests drawn from the generators the topology's property tests use ({@link RequestGenerators}:
 * odd values of every header, one fault at a time, any combination at all, and well-formed ones),
 * through one service in this JVM on a real broker. Each case has an id of its own, so what becomes
 * of it is known from the request alone: a dead letter with a code the contract allows ({@link
 * ParseOracle}, then the target and the id's empty state), or applied: a one-shot due within the
 * window fires exactly once, byte for byte, at its due time or later; one due later fires at most
 * once, and surely if it was due before the last request of its partition fired; a cron schedule
 * fires only as its occurrences, each once, never early. The service stays RUNNING with its first
 * stream thread throughout.
 *
 * <p>Requests a Java producer cannot send (no timestamp) or a broker refuses (stamped more than an
 * hour ahead) are left out; the topology's properties cover them. {@code -Dkdelay.fuzz.seed=N}
 * replays a seed; the seed is printed either way.
 */
@FaultSeed(value = 20_240_408L, property = "kdelay.fuzz.seed")
@ExtendWith({KafkaClusterExtension.class, FaultExtension.class})
class RequestFuzzIT {

  private static final int MAX_PAYLOAD_BYTES = 256 * 1024;
  private static final int PARTITIONS = 3;
  private static final int TARGET_PARTITIONS = 2;
  private static final String CASE_HEADER = "fuzz-case";
  private static final List<String> POOL = List.of("a", "b", "c");
  private static final Pattern OTHERS_INTERNAL =
      Pattern.compile("_.*|connect-(configs|offsets|status)|.+-(changelog|repartition)");

  /** A one-shot due within this of being sent is awaited: it must fire. */
  private static final long WINDOW_MS = 15_000;

  @TempDir Path stateDir;

  @Test
  @Tag("integration")
  void shouldAnswerEveryGeneratedRequestAsTheContractSaysWithoutStopping(
      KafkaTestCluster kafka, FaultRun run) throws Exception {
    fuzz(kafka, run.seed(), "fuzz", 400);
  }

  @Test
  @Tag("fault-long")
  void shouldAnswerTenThousandGeneratedRequests(KafkaTestCluster kafka, FaultRun run)
      throws Exception {
    fuzz(kafka, run.seed(), "fuzz-long", 10_000);
  }

  /** One request sent, and what may become of it. */
  record Case(int number, RequestSpec spec, GeneratedRequest request, Expected expected) {
    @Override
    public String toString() {
      return "case " + number + " " + spec + " expecting " + expected;
    }
  }

  /**
   * What may become of a request.
   *
   * @param codes the codes its dead letter may carry
   * @param mayApply whether it may be applied (no dead letter)
   * @param dueMs the due time of a one-shot, or -1
   * @param readTime whether the request counts as stamped when read, not by its timestamp (it is
   *     stamped too far ahead): then its due time is later by how long it took to be read
   * @param recurring whether it is a cron schedule, which may fire as its occurrences
   */
  record Expected(
      Set<String> codes, boolean mayApply, long dueMs, boolean readTime, boolean recurring) {

    /** Whether it must have fired once the requests sent after it have. */
    boolean awaited(long sentAtMs) {
      return !mayApply || (dueMs >= 0 && dueMs - sentAtMs <= WINDOW_MS);
    }
  }

  private void fuzz(KafkaTestCluster kafka, long seed, String name, int count) throws Exception {
    String bootstrap = kafka.bootstrapServers();
    String requests = name + "-requests";
    String dlq = name + "-dlq";
    String target = name + "-target";
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
      FaultScenario.createTopics(
          admin,
          Map.of(
              target,
              TARGET_PARTITIONS,
              requests,
              PARTITIONS,
              requests + "-rerouted",
              PARTITIONS,
              dlq,
              PARTITIONS));
    }
    ServiceConfig config = config(bootstrap, name, requests, dlq);
    DelayConfig delay = config.delay();
    // Every request carries one header more than was drawn, the case number.
    ParseOracle.Limits limits =
        new ParseOracle.Limits(
            delay.maxIdBytes(),
            delay.maxPayloadBytes(),
            delay.maxHeaders() - 1,
            delay.horizonMs(),
            delay.maxClockSkewMs());
    RequestGenerators generators =
        new RequestGenerators(
            POOL,
            List.of(target),
            List.of(
                name + "-absent",
                "bad topic",
                "__consumer_offsets",
                requests,
                dlq,
                "faults-" + name + "-store-changelog",
                "customers-changelog",
                "_schemas"),
            delay.maxIdBytes(),
            MAX_PAYLOAD_BYTES);
    SplittableRandom seeds = new SplittableRandom(seed);
    List<Case> cases = new ArrayList<>();
    Map<String, Integer> leftOut = new TreeMap<>();
    try (InProcessService service = InProcessService.start(config, Duration.ofSeconds(90));
        CommittedRecords out = new CommittedRecords(bootstrap, List.of(target, dlq), CASE_HEADER)) {
      try (KafkaProducer<byte[], byte[]> producer = producer(bootstrap)) {
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        for (int n = 0; n < count; n++) {
          Choices choices = Choices.random(seeds.split());
          RequestSpec spec =
              switch (choices.weighted(5, 3, 2)) {
                case 0 -> generators.odd(choices);
                case 1 -> generators.wellFormed(choices);
                default -> generators.chaos(choices);
              };
          spec = spec.withIdPrefix("f" + n, delay.maxIdBytes());
          long now = System.currentTimeMillis();
          GeneratedRequest request = spec.render(now, limits);
          if (request.timestamp() < 0) {
            leftOut.merge("no timestamp", 1, Integer::sum);
            continue;
          }
          if (request.timestamp() - now > 50 * 60_000L) {
            leftOut.merge("stamped an hour ahead", 1, Integer::sum);
            continue;
          }
          Case sentCase =
              new Case(n, spec, request, expected(request, target, requests, dlq, name));
          cases.add(sentCase);
          sent.add(producer.send(record(requests, sentCase)));
        }
        producer.flush();
        for (Future<RecordMetadata> future : sent) {
          try {
            future.get(30, TimeUnit.SECONDS);
          } catch (ExecutionException e) {
            if (!(e.getCause() instanceof InvalidTimestampException)) {
              throw e;
            }
          }
        }
        // Then one valid request per partition, due after all the rest: once they have fired,
        // every case has been dealt with.
        for (int p = 0; p < PARTITIONS; p++) {
          producer.send(last(requests, target, p, count + p)).get(30, TimeUnit.SECONDS);
        }
      }
      Set<String> awaited = new HashSet<>();
      for (Case c : cases) {
        if (c.expected().awaited(c.request().sentAtMs())) {
          awaited.add(Integer.toString(c.number()));
        }
      }
      for (int p = 0; p < PARTITIONS; p++) {
        awaited.add(Integer.toString(count + p));
      }
      try {
        Await.until(
            "every fuzz case to fire or be dead-lettered",
            Duration.ofMinutes(4),
            () -> out.containsAll(awaited));
      } catch (AssertionError e) {
        // Say which cases are missing, and on which partitions, before failing.
        Set<String> missing = out.missing(awaited);
        String described =
            cases.stream()
                .filter(c -> missing.contains(Integer.toString(c.number())))
                .limit(20)
                .map(c -> c + " (sent " + c.request().sentAtMs() + ")")
                .collect(Collectors.joining("\n  "));
        throw new AssertionError(
            e.getMessage()
                + "; "
                + missing.size()
                + " missing of "
                + awaited.size()
                + " (the last requests of the partitions are cases "
                + count
                + ".."
                + (count + PARTITIONS - 1)
                + "):\n  "
                + described
                + "\n  missing: "
                + missing,
            e);
      }
      long cutoffMs = System.currentTimeMillis();
      List<Received> received = out.finish(Duration.ofSeconds(30));

      List<String> wrong = check(cases, received, target, count, cutoffMs);
      Map<String, Long> byOutcome =
          received.stream()
              .collect(
                  Collectors.groupingBy(
                      r ->
                          r.record().topic().equals(target)
                              ? "fired"
                              : "dead-lettered " + r.header(DelayHeaders.ERROR),
                      TreeMap::new,
                      Collectors.counting()));
      System.out.printf(
          "FAULTS %s: seed %d, %d requests sent (left out %s); outcomes %s; %d wrong; state"
              + " changes away from RUNNING: %s; replacement threads: %s%n",
          name,
          seed,
          cases.size(),
          leftOut,
          byOutcome,
          wrong.size(),
          service.departuresFromRunning(),
          service.replacementThreads());
      assertThat(wrong).as("cases kdelay got wrong (seed " + seed + ")").isEmpty();
      assertThat(service.departuresFromRunning()).as("Kafka Streams left RUNNING").isEmpty();
      assertThat(service.replacementThreads()).as("stream threads that died").isEmpty();
    }
  }

  /** What the contract allows for a request whose id nothing else touched. */
  private static Expected expected(
      GeneratedRequest request, String target, String requests, String dlq, String name) {
    GeneratedRequest.Expectation expectation = request.expectation();
    Set<String> codes = new HashSet<>();
    expectation.codes().forEach(code -> codes.add(code.name()));
    Optional<Intent> accepted = expectation.accepted();
    if (accepted.isEmpty()) {
      return new Expected(codes, false, -1, false, false);
    }
    Intent intent = accepted.get();
    if (intent.action() == Action.CANCEL) {
      return new Expected(codes, true, -1, false, false);
    }
    if (intent.action() != Action.SCHEDULE) {
      codes.add(RejectionReason.NOT_APPLICABLE.name()); // the id holds nothing
      return new Expected(codes, false, -1, false, false);
    }
    Optional<RejectionReason> refused = refused(intent, target, requests, dlq, name);
    if (refused.isPresent()) {
      codes.add(refused.get().name());
      return new Expected(codes, false, -1, false, false);
    }
    boolean readTime = intent.stampedMs() != request.timestamp();
    if (intent.timing() instanceof Timing.Cron) {
      codes.add(RejectionReason.TOO_FAR.name()); // a cron schedule with no occurrence in range
      return new Expected(codes, true, -1, readTime, true);
    }
    return new Expected(codes, true, ((Timing.Once) intent.timing()).dueMs(), readTime, false);
  }

  /** Why the service refuses a schedule's target at intake, as the README says, if it does. */
  private static Optional<RejectionReason> refused(
      Intent intent, String target, String requests, String dlq, String name) {
    String topic = intent.target();
    if (topic.startsWith("__")
        || topic.equals(requests)
        || topic.equals(dlq)
        || topic.equals(requests + "-rerouted")
        || topic.startsWith("faults-" + name + "-")
        || OTHERS_INTERNAL.matcher(topic).matches()) {
      return Optional.of(RejectionReason.TARGET_NOT_ALLOWED);
    }
    if (!topic.equals(target)) {
      return Optional.of(RejectionReason.UNKNOWN_TOPIC);
    }
    if (intent.partition() >= TARGET_PARTITIONS) {
      return Optional.of(RejectionReason.BAD_PARTITION);
    }
    return Optional.empty();
  }

  /**
   * Holds every case against what came out; returns a line per case that went wrong.
   *
   * @param count the number of cases drawn; the last requests are numbered from it
   * @param cutoffMs when reading stopped
   */
  private static List<String> check(
      List<Case> cases, List<Received> received, String target, int count, long cutoffMs) {
    Map<Integer, List<Received>> fired = new HashMap<>();
    Map<Integer, List<Received>> dead = new HashMap<>();
    List<String> wrong = new ArrayList<>();
    for (Received r : received) {
      String number = r.header(CASE_HEADER);
      if (number == null) {
        wrong.add("a record no case asked for: " + r.record());
        continue;
      }
      (r.record().topic().equals(target) ? fired : dead)
          .computeIfAbsent(Integer.parseInt(number), k -> new ArrayList<>())
          .add(r);
    }
    long[] lastDue = new long[PARTITIONS];
    for (int p = 0; p < PARTITIONS; p++) {
      lastDue[p] = fired.get(count + p).get(0).headerMs(DelayHeaders.DUE_AT);
    }
    for (Case c : cases) {
      List<Received> f = fired.getOrDefault(c.number(), List.of());
      List<Received> d = dead.getOrDefault(c.number(), List.of());
      long before =
          c.request().key() == null
              ? Long.MIN_VALUE
              : lastDue[Utils.toPositive(Utils.murmur2(c.request().key())) % PARTITIONS];
      String problem = problem(c, f, d, before, cutoffMs);
      if (problem != null) {
        wrong.add(c + ": " + problem);
      }
    }
    return wrong;
  }

  /**
   * @param lastDueMs the due time of the last request of the case's partition, which fired
   * @param cutoffMs when reading stopped
   */
  private static String problem(
      Case c, List<Received> fired, List<Received> dead, long lastDueMs, long cutoffMs) {
    Expected expected = c.expected();
    if (dead.size() > 1) {
      return "dead-lettered " + dead.size() + " times";
    }
    if (dead.size() == 1) {
      String code = dead.get(0).header(DelayHeaders.ERROR);
      if (!fired.isEmpty()) {
        return "dead-lettered " + code + " and fired";
      }
      if (!expected.codes().contains(code)) {
        return "dead-lettered "
            + code
            + " ("
            + dead.get(0).header(DelayHeaders.ERROR_MESSAGE)
            + ")";
      }
      if (!Arrays.equals(dead.get(0).record().key(), c.request().key())
          && !code.equals(RejectionReason.BAD_ID.name())) {
        return "the dead letter does not keep the request's key";
      }
      return null;
    }
    if (!expected.mayApply()) {
      return "applied, fired " + fired.size() + " times";
    }
    Intent intent = c.request().expectation().accepted().orElseThrow();
    Set<String> keys = new HashSet<>();
    for (Received r : fired) {
      String problem = firedProblem(c, intent, r);
      if (problem != null) {
        return problem;
      }
      if (!keys.add(r.header(DelayHeaders.IDEMPOTENCY_KEY))) {
        return "fired " + r.header(DelayHeaders.IDEMPOTENCY_KEY) + " twice";
      }
    }
    if (expected.recurring()) {
      return null;
    }
    if (expected.dueMs() < 0) {
      return fired.isEmpty() ? null : "fired, though it holds nothing due";
    }
    boolean mustFire =
        expected.awaited(c.request().sentAtMs())
            || (!expected.readTime() && expected.dueMs() < lastDueMs);
    if (fired.size() > 1 || (mustFire && fired.isEmpty())) {
      return "fired " + fired.size() + " times";
    }
    if (fired.isEmpty()) {
      return null;
    }
    // Stamped when read, it is due later by how long that took, at most till reading stopped.
    long due = fired.get(0).headerMs(DelayHeaders.DUE_AT);
    long latest =
        expected.readTime()
            ? expected.dueMs() + (cutoffMs - c.request().sentAtMs())
            : expected.dueMs();
    return due >= expected.dueMs() && due <= latest ? null : "fired as due at " + due;
  }

  private static String firedProblem(Case c, Intent intent, Received r) {
    if (!Arrays.equals(r.record().value(), intent.payload())) {
      return "payload changed";
    }
    byte[] key = intent.targetKey() != null ? intent.targetKey() : c.request().key();
    if (!Arrays.equals(r.record().key(), key)) {
      return "fired with another key";
    }
    if (intent.partition() >= 0 && r.record().partition() != intent.partition()) {
      return "fired to partition " + r.record().partition();
    }
    long due = r.headerMs(DelayHeaders.DUE_AT);
    if (r.headerMs(DelayHeaders.FIRED_AT) < due || r.record().timestamp() != due) {
      return "fired before its due time " + due + " or stamped otherwise";
    }
    List<Header> carried =
        Arrays.stream(r.record().headers().toArray())
            .filter(h -> DelayHeaders.isCarried(h.key()))
            .toList();
    List<Header> expected = new ArrayList<>(intent.carried());
    expected.add(new RecordHeader(CASE_HEADER, utf8(Integer.toString(c.number()))));
    if (!sameHeaders(carried, expected)) {
      return "carried headers changed: " + carried;
    }
    return null;
  }

  private static ProducerRecord<byte[], byte[]> record(String requests, Case c) {
    GeneratedRequest request = c.request();
    ProducerRecord<byte[], byte[]> record =
        new ProducerRecord<>(
            requests,
            null,
            request.timestamp(),
            request.key(),
            request.value(),
            request.recordHeaders());
    record.headers().add(CASE_HEADER, utf8(Integer.toString(c.number())));
    return record;
  }

  private static boolean sameHeaders(List<Header> actual, List<Header> expected) {
    if (actual.size() != expected.size()) {
      return false;
    }
    for (int i = 0; i < actual.size(); i++) {
      if (!actual.get(i).key().equals(expected.get(i).key())
          || !Arrays.equals(actual.get(i).value(), expected.get(i).value())) {
        return false;
      }
    }
    return true;
  }

  /** A valid request whose id hashes to the given partition, due after the rest. */
  private static ProducerRecord<byte[], byte[]> last(
      String requests, String target, int partition, int number) {
    String id = null;
    for (int n = 0; id == null; n++) {
      String candidate = "last-" + partition + "-" + n;
      byte[] bytes = candidate.getBytes(StandardCharsets.UTF_8);
      if (Utils.toPositive(Utils.murmur2(bytes)) % PARTITIONS == partition) {
        id = candidate;
      }
    }
    ProducerRecord<byte[], byte[]> last =
        new ProducerRecord<>(requests, null, utf8(id), utf8("last"));
    last.headers().add(CASE_HEADER, utf8(Integer.toString(number)));
    last.headers().add(DelayHeaders.TARGET_TOPIC, utf8(target));
    last.headers().add(DelayHeaders.AFTER, utf8(Long.toString(WINDOW_MS + 3_000)));
    return last;
  }

  private static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static KafkaProducer<byte[], byte[]> producer(String bootstrap) {
    return new KafkaProducer<>(
        Map.of(
            ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
            bootstrap,
            ProducerConfig.ACKS_CONFIG,
            "all",
            ProducerConfig.LINGER_MS_CONFIG,
            5,
            ProducerConfig.MAX_REQUEST_SIZE_CONFIG,
            2 * 1024 * 1024),
        new ByteArraySerializer(),
        new ByteArraySerializer());
  }

  private ServiceConfig config(String bootstrap, String name, String requests, String dlq) {
    Map<String, Object> props = new HashMap<>();
    props.put(DelayConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(DelayConfig.APPLICATION_ID_CONFIG, "faults-" + name);
    props.put(DelayConfig.STATE_DIR_CONFIG, stateDir.toString());
    props.put(DelayConfig.REQUESTS_TOPIC_CONFIG, requests);
    props.put(DelayConfig.DLQ_TOPIC_CONFIG, dlq);
    props.put(ServiceConfig.TOPIC_PARTITIONS_CONFIG, PARTITIONS);
    props.put(ServiceConfig.TOPIC_REPLICATION_FACTOR_CONFIG, (short) 1);
    props.put(ServiceConfig.HTTP_PORT_CONFIG, 0);
    props.put(DelayConfig.MAX_PAYLOAD_BYTES_CONFIG, MAX_PAYLOAD_BYTES);
    return new ServiceConfig(props);
  }
}

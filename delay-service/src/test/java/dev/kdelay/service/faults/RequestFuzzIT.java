package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.service.KafkaClusterExtension;
import dev.kdelay.service.KafkaTestCluster;
import dev.kdelay.service.ServiceConfig;
import dev.kdelay.service.faults.CommittedRecords.Received;
import dev.kdelay.service.faults.FuzzCase.Kind;
import dev.kdelay.topology.DelayConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile input through one service in this JVM: a seeded mix of valid and malformed requests.
 * Every malformed one lands in the dead-letter topic once, with its reason in {@code delay-error};
 * every valid one fires once, byte for byte, with only kdelay's own output headers; the rest leave
 * no trace; and the service stays RUNNING with its original stream thread throughout.
 *
 * <p>{@code -Dkdelay.fuzz.seed=N} replays a seed; the seed is printed either way.
 */
@FaultSeed(value = 20_240_408L, property = "kdelay.fuzz.seed")
@ExtendWith({KafkaClusterExtension.class, FaultExtension.class})
class RequestFuzzIT {

  private static final int MAX_PAYLOAD_BYTES = 256 * 1024;
  private static final int PARTITIONS = 3;
  private static final int TARGET_PARTITIONS = 2;

  @TempDir Path stateDir;

  @Test
  @Tag("integration")
  void shouldDeadLetterEveryBadRequestAndFireEveryGoodOneWithoutStopping(
      KafkaTestCluster kafka, FaultRun run) throws Exception {
    fuzz(kafka, run.seed(), "fuzz", 400);
  }

  @Test
  @Tag("fault-long")
  void shouldSurviveTenThousandHostileRequests(KafkaTestCluster kafka, FaultRun run)
      throws Exception {
    fuzz(kafka, run.seed(), "fuzz-long", 10_000);
  }

  private void fuzz(KafkaTestCluster kafka, long seed, String name, int count) throws Exception {
    // given
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
    RequestFuzzer fuzzer =
        new RequestFuzzer(seed, requests, target, TARGET_PARTITIONS, MAX_PAYLOAD_BYTES);
    List<FuzzCase> cases = new ArrayList<>();
    try (InProcessService service = InProcessService.start(config, Duration.ofSeconds(90));
        CommittedRecords out =
            new CommittedRecords(bootstrap, List.of(target, dlq), FuzzCase.CASE_HEADER)) {

      // when
      try (KafkaProducer<byte[], byte[]> producer = producer(bootstrap)) {
        for (int n = 0; n < count; n++) {
          FuzzCase fuzzCase = fuzzer.next(n);
          cases.add(fuzzCase);
          producer.send(fuzzCase.request());
        }
        producer.flush();
        // Then one valid request per partition, due after all the rest: once they have fired,
        // every case has been dealt with.
        for (int p = 0; p < PARTITIONS; p++) {
          producer.send(fence(requests, target, p, count + p)).get(30, TimeUnit.SECONDS);
        }
      }
      Set<String> awaited =
          cases.stream()
              .filter(c -> c.kind() != Kind.NOTHING)
              .map(c -> Integer.toString(c.number()))
              .collect(Collectors.toSet());
      for (int p = 0; p < PARTITIONS; p++) {
        awaited.add(Integer.toString(count + p));
      }
      Await.until(
          "every fuzz case to fire or be dead-lettered",
          Duration.ofMinutes(4),
          () -> out.containsAll(awaited));
      List<Received> received = out.finish(Duration.ofSeconds(60));

      // then
      List<String> wrong = check(cases, received, target, dlq);
      Map<String, Long> byOutcome =
          cases.stream()
              .collect(
                  Collectors.groupingBy(
                      c -> c.kind() + (c.code() == null ? "" : " " + c.code()),
                      TreeMap::new,
                      Collectors.counting()));
      System.out.printf(
          "FAULTS %s: seed %d, %d requests %s; %d wrong; state changes away from RUNNING: %s;"
              + " replacement threads: %s%n",
          name,
          seed,
          count,
          byOutcome,
          wrong.size(),
          service.departuresFromRunning(),
          service.replacementThreads());
      assertThat(wrong).as("cases kdelay got wrong (seed " + seed + ")").isEmpty();
      assertThat(service.departuresFromRunning()).as("Kafka Streams left RUNNING").isEmpty();
      assertThat(service.replacementThreads()).as("stream threads that died").isEmpty();
    }
  }

  /** Holds every case against what came out; returns a line per case that went wrong. */
  private static List<String> check(
      List<FuzzCase> cases, List<Received> received, String target, String dlq) {
    Map<Integer, List<Received>> fired = new HashMap<>();
    Map<Integer, List<Received>> dead = new HashMap<>();
    List<String> wrong = new ArrayList<>();
    for (Received r : received) {
      String number = r.header(FuzzCase.CASE_HEADER);
      if (number == null) {
        wrong.add("a record no case asked for: " + r.record());
        continue;
      }
      (r.record().topic().equals(target) ? fired : dead)
          .computeIfAbsent(Integer.parseInt(number), k -> new ArrayList<>())
          .add(r);
    }
    Map<Kind, Integer> seen = new EnumMap<>(Kind.class);
    for (FuzzCase c : cases) {
      List<Received> f = fired.getOrDefault(c.number(), List.of());
      List<Received> d = dead.getOrDefault(c.number(), List.of());
      seen.merge(c.kind(), 1, Integer::sum);
      String problem =
          switch (c.kind()) {
            case FIRES -> firedProblem(c, f, d);
            case DEAD_LETTER -> deadLetterProblem(c, f, d);
            case NOTHING ->
                f.isEmpty() && d.isEmpty()
                    ? null
                    : "left " + f.size() + " fired, " + d.size() + " dead letters";
          };
      if (problem != null) {
        wrong.add(c + ": " + problem);
      }
    }
    return wrong;
  }

  private static String firedProblem(FuzzCase c, List<Received> fired, List<Received> dead) {
    if (fired.size() != 1 || !dead.isEmpty()) {
      return "fired "
          + fired.size()
          + " times, dead-lettered "
          + dead.stream().map(r -> r.header(DelayHeaders.ERROR)).toList();
    }
    Received r = fired.get(0);
    if (!Arrays.equals(r.record().value(), c.request().value())) {
      return "payload changed";
    }
    if (c.targetPartition() >= 0 && r.record().partition() != c.targetPartition()) {
      return "fired to partition " + r.record().partition();
    }
    long due = r.headerMs(DelayHeaders.DUE_AT);
    if (r.headerMs(DelayHeaders.FIRED_AT) < due || r.record().timestamp() != due) {
      return "fired before its due time " + due;
    }
    String id = new String(c.request().key(), StandardCharsets.UTF_8);
    if (!DelayHeaders.idempotencyKey(id, due).equals(r.header(DelayHeaders.IDEMPOTENCY_KEY))
        || count(r, DelayHeaders.IDEMPOTENCY_KEY) != 1
        || count(r, DelayHeaders.ID) != 1
        || count(r, DelayHeaders.ERROR) != 0) {
      return "output headers wrong: " + r.record().headers();
    }
    List<Header> carried =
        Arrays.stream(r.record().headers().toArray())
            .filter(h -> DelayHeaders.isCarried(h.key()))
            .toList();
    if (!sameHeaders(carried, Arrays.asList(c.carried().toArray()))) {
      return "carried headers changed: " + carried;
    }
    return null;
  }

  private static String deadLetterProblem(FuzzCase c, List<Received> fired, List<Received> dead) {
    if (dead.size() != 1 || !fired.isEmpty()) {
      return "dead-lettered " + dead.size() + " times, fired " + fired.size() + " times";
    }
    Received r = dead.get(0);
    String code = r.header(DelayHeaders.ERROR);
    String message = r.header(DelayHeaders.ERROR_MESSAGE);
    if (!c.code().name().equals(code)) {
      return "dead-lettered as " + code + " (" + message + ")";
    }
    if (message == null || message.isBlank()) {
      return "no delay-error-message";
    }
    if (!Arrays.equals(r.record().key(), c.request().key())
        || !Arrays.equals(r.record().value(), c.request().value())) {
      return "the dead letter does not keep the original key and value";
    }
    return null;
  }

  private static long count(Received r, String header) {
    return Arrays.stream(r.record().headers().toArray())
        .filter(h -> h.key().equals(header))
        .count();
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

  /** A valid request whose id hashes to the given partition, due a second after the rest. */
  private static ProducerRecord<byte[], byte[]> fence(
      String requests, String target, int partition, int number) {
    String id = null;
    for (int n = 0; id == null; n++) {
      String candidate = "fence-" + partition + "-" + n;
      byte[] bytes = candidate.getBytes(StandardCharsets.UTF_8);
      if (Utils.toPositive(Utils.murmur2(bytes)) % PARTITIONS == partition) {
        id = candidate;
      }
    }
    ProducerRecord<byte[], byte[]> fence =
        new ProducerRecord<>(requests, null, utf8(id), utf8("fence"));
    fence.headers().add(FuzzCase.CASE_HEADER, utf8(Integer.toString(number)));
    fence.headers().add(DelayHeaders.TARGET_TOPIC, utf8(target));
    fence.headers().add(DelayHeaders.AFTER, utf8("4000"));
    return fence;
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

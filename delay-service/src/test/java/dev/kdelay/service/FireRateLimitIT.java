package dev.kdelay.service;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.topology.DelayConfig;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A fire-rate limit on a real broker: a burst due at once for a limited topic reaches a {@code
 * read_committed} consumer at the limit's rate, each task once, in due order within its partition,
 * with the due time it had; another topic's tasks due at the same moment fire at once beside it.
 * Then {@code kdelay limits set} lowers the limit while the service runs, and the tasks that fall
 * due after it fire at the new rate.
 *
 * <p>The rate is read from the fired records' {@code delay-fired-at}, which kdelay stamps when it
 * hands the record to the producer: what the limit governs. A record becomes visible when its
 * transaction commits, a few milliseconds later.
 */
@Tag("integration")
@ExtendWith(KafkaClusterExtension.class)
class FireRateLimitIT {

  private static final int PARTITIONS = 6;
  // Larger runs, for a measurement rather than a test, with -Dkdelay.ratelimit.tasks=100000
  // -Dkdelay.ratelimit.rate=1000 -Dkdelay.ratelimit.burst=1000: 100 s of draining.
  private static final double RATE =
      Double.parseDouble(System.getProperty("kdelay.ratelimit.rate", "300"));
  private static final int BURST = Integer.getInteger("kdelay.ratelimit.burst", 60);
  private static final int LIMITED_TASKS = Integer.getInteger("kdelay.ratelimit.tasks", 2_400);
  private static final int FREE_TASKS = 300;

  /** Time to take every request in before they fall due: a start, and 5,000 requests a second. */
  private static final Duration LEAD = Duration.ofSeconds(12 + LIMITED_TASKS / 5_000);

  private static final double LOWER_RATE = 100;
  private static final int LATER_TASKS = 400;
  private static final Duration LATER_LEAD = Duration.ofSeconds(4);
  private static final Duration TIMEOUT = Duration.ofSeconds(120 + (long) (LIMITED_TASKS / RATE));

  @TempDir Path stateDir;

  private final List<AutoCloseable> resources = new ArrayList<>();
  private String bootstrapServers;
  private String name;

  @BeforeEach
  void setUp(KafkaTestCluster kafka) {
    bootstrapServers = kafka.bootstrapServers();
    name = "rate-" + UUID.randomUUID().toString().substring(0, 8);
  }

  @AfterEach
  void tearDown() throws Exception {
    for (int i = resources.size() - 1; i >= 0; i--) {
      resources.get(i).close();
    }
  }

  @Test
  void shouldFireALimitedTopicAtItsRateWhileAnotherFiresAtOnce() throws Exception {
    // given: a service that may write 300 a second (a burst of 60) to one topic
    String limited = name + "-limited";
    String free = name + "-free";
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrapServers))) {
      admin
          .createTopics(
              List.of(new NewTopic(limited, 1, (short) 1), new NewTopic(free, 1, (short) 1)))
          .all()
          .get(60, TimeUnit.SECONDS);
    }
    ServiceConfig config = config(limited);
    DelayService service = new DelayService(config);
    resources.add(service);
    service.start(Optional.of(Duration.ofSeconds(60)));

    // when: 2,400 tasks for it and 300 for another topic fall due within a tenth of a second
    long dueMs = System.currentTimeMillis() + LEAD.toMillis();
    Map<String, Long> limitedDue = send(config, limited, LIMITED_TASKS, dueMs);
    Map<String, Long> freeDue = send(config, free, FREE_TASKS, dueMs);

    // then: each fires once, none early, with the due time it had
    List<ConsumerRecord<String, String>> limitedFired = readCommitted(limited, LIMITED_TASKS);
    List<ConsumerRecord<String, String>> freeFired = readCommitted(free, FREE_TASKS);
    assertFiredOnceAsDue(limitedFired, limitedDue);
    assertFiredOnceAsDue(freeFired, freeDue);

    // and: the limited topic got no more than its rate: in any second, at most a second's worth
    // and the burst
    List<Long> firedAt = limitedFired.stream().map(FireRateLimitIT::firedAt).sorted().toList();
    int busiest = busiestSecond(firedAt);
    long drainMs = firedAt.get(firedAt.size() - 1) - firedAt.get(0);
    System.out.printf(
        "rate limit %.0f/s burst %d: %,d fired over %,d ms (%.0f/s), busiest second %d;"
            + " the other topic's %d fired by %d ms after due%n",
        RATE,
        BURST,
        LIMITED_TASKS,
        drainMs,
        LIMITED_TASKS * 1000.0 / drainMs,
        busiest,
        FREE_TASKS,
        freeFired.stream().mapToLong(FireRateLimitIT::firedAt).max().orElseThrow() - dueMs);
    // Over the run, the rate holds strictly: the drain lasts what the rate allows after the burst.
    assertThat(drainMs)
        .as("the drain lasts what the rate allows after the burst")
        .isGreaterThanOrEqualTo((long) ((LIMITED_TASKS - BURST) / RATE * 1000) - 100);
    // Within a second it holds up to the slots that passed while the stream thread was away (a
    // commit, a pause for garbage collection): they go out together when it is back. On a busy
    // machine of two cores that may be most of a second.
    assertThat(busiest)
        .as("fires in the busiest second")
        .isLessThanOrEqualTo(2 * ((int) RATE + BURST));

    // and: the other topic did not wait for it: all its tasks fired before the limited topic's
    // first tenth
    assertThat(freeFired.stream().mapToLong(FireRateLimitIT::firedAt).max().orElseThrow())
        .isLessThan(firedAt.get(LIMITED_TASKS / 10));

    // and: within each request partition, the limited topic's tasks fired in due order
    Map<Integer, Long> lastDueByPartition = new HashMap<>();
    for (ConsumerRecord<String, String> record : limitedFired) {
      int partition = partitionOf(record.key());
      long due = dueAt(record);
      Long before = lastDueByPartition.put(partition, due);
      assertThat(before == null || before <= due)
          .as(
              "%s (due %d) after one due at %d in partition %d",
              record.key(), due, before, partition)
          .isTrue();
    }

    // when: an operator lowers the limit while the service runs (kdelay limits set), and more
    // tasks fall due at once
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    int code =
        new Main(Map.of(), new PrintStream(printed, true, StandardCharsets.UTF_8), System.err)
            .execute(
                List.of(
                    "limits",
                    "set",
                    limited,
                    (int) LOWER_RATE + "/" + BURST,
                    "--bootstrap-servers",
                    bootstrapServers,
                    "--requests-topic",
                    config.delay().requestsTopic()));
    assertThat(code).as("kdelay limits set: %s", printed).isEqualTo(0);
    long changed = System.nanoTime();
    while (!service
        .fireRateLimits()
        .of(limited)
        .map(l -> l.perSecond() == LOWER_RATE)
        .orElse(false)) {
      assertThat(System.nanoTime() - changed)
          .as("the instance applied the new limit; it has %s", service.fireRateLimits())
          .isLessThan(TIMEOUT.toNanos());
      Thread.sleep(20); // the poll interval of this wait, not a guess at how long it takes
    }
    long laterDueMs = System.currentTimeMillis() + LATER_LEAD.toMillis();
    Map<String, Long> laterDue = send(config, limited, LATER_TASKS, laterDueMs, "later-");

    // then: they fire at the new rate, without a restart
    List<ConsumerRecord<String, String>> everyFire =
        readCommitted(limited, LIMITED_TASKS + LATER_TASKS);
    List<ConsumerRecord<String, String>> laterFired =
        everyFire.subList(LIMITED_TASKS, everyFire.size());
    assertFiredOnceAsDue(laterFired, laterDue);
    List<Long> laterFiredAt = laterFired.stream().map(FireRateLimitIT::firedAt).sorted().toList();
    long laterDrainMs = laterFiredAt.get(LATER_TASKS - 1) - laterFiredAt.get(0);
    System.out.printf(
        "after kdelay limits set %d/%d: %,d fired over %,d ms (%.0f/s)%n",
        (int) LOWER_RATE, BURST, LATER_TASKS, laterDrainMs, LATER_TASKS * 1000.0 / laterDrainMs);
    assertThat(laterDrainMs)
        .as("the drain lasts what the new rate allows after the burst")
        .isGreaterThanOrEqualTo((long) ((LATER_TASKS - BURST) / LOWER_RATE * 1000) - 100);

    // and: kdelay limits list says where the limit comes from
    printed.reset();
    new Main(Map.of(), new PrintStream(printed, true, StandardCharsets.UTF_8), System.err)
        .execute(
            List.of(
                "limits",
                "--bootstrap-servers",
                bootstrapServers,
                "--requests-topic",
                config.delay().requestsTopic()));
    assertThat(printed.toString(StandardCharsets.UTF_8))
        .contains(
            limited
                + " "
                + (int) LOWER_RATE
                + "/"
                + BURST
                + " (set in "
                + config.delay().requestsTopic()
                + "-limits)");
  }

  private static void assertFiredOnceAsDue(
      List<ConsumerRecord<String, String>> fired, Map<String, Long> due) {
    Set<String> seen = new HashSet<>();
    for (ConsumerRecord<String, String> record : fired) {
      assertThat(seen.add(record.key())).as("fired once: %s", record.key()).isTrue();
      assertThat(dueAt(record))
          .as("its due time: %s", record.key())
          .isEqualTo(due.get(record.key()));
      assertThat(firedAt(record))
          .as("not early: %s", record.key())
          .isGreaterThanOrEqualTo(dueAt(record));
      assertThat(header(record, DelayHeaders.IDEMPOTENCY_KEY))
          .isEqualTo(DelayHeaders.idempotencyKey(record.key(), dueAt(record)));
    }
    assertThat(seen).isEqualTo(due.keySet());
  }

  /** The most fires whose fire times lie within one second of each other. */
  /** The most fires within any second, of fire times in order. */
  static int busiestSecond(List<Long> sortedFiredAt) {
    int busiest = 0;
    int from = 0;
    for (int to = 0; to < sortedFiredAt.size(); to++) {
      while (sortedFiredAt.get(to) - sortedFiredAt.get(from) >= 1_000) {
        from++;
      }
      busiest = Math.max(busiest, to - from + 1);
    }
    return busiest;
  }

  private ServiceConfig config(String limited) {
    Map<String, Object> props = new HashMap<>();
    props.put(DelayConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    props.put(DelayConfig.APPLICATION_ID_CONFIG, "kdelay-it-" + name);
    props.put(DelayConfig.STATE_DIR_CONFIG, stateDir.toString());
    props.put(DelayConfig.REQUESTS_TOPIC_CONFIG, name + "-requests");
    props.put(DelayConfig.DLQ_TOPIC_CONFIG, name + "-dlq");
    props.put(DelayConfig.FIRE_RATE_LIMITS_CONFIG, limited + "=" + RATE + "/" + BURST);
    props.put(ServiceConfig.TOPIC_PARTITIONS_CONFIG, PARTITIONS);
    props.put(ServiceConfig.TOPIC_REPLICATION_FACTOR_CONFIG, (short) 1);
    props.put(ServiceConfig.HTTP_PORT_CONFIG, 0);
    return new ServiceConfig(props);
  }

  private Map<String, Long> send(ServiceConfig config, String target, int count, long dueMs)
      throws Exception {
    return send(config, target, count, dueMs, "");
  }

  /** Sends tasks due a millisecond apart from {@code dueMs}; answers each id's due time. */
  private Map<String, Long> send(
      ServiceConfig config, String target, int count, long dueMs, String prefix) throws Exception {
    Map<String, Object> props = new HashMap<>();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    props.put(ProducerConfig.LINGER_MS_CONFIG, 20);
    Map<String, Long> due = new HashMap<>();
    List<Future<RecordMetadata>> sent = new ArrayList<>();
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
      for (int i = 0; i < count; i++) {
        String id = prefix + target + "-" + i;
        long at = dueMs + i % 100;
        ProducerRecord<String, String> request =
            new ProducerRecord<>(config.delay().requestsTopic(), id, "payload " + i);
        request.headers().add(DelayHeaders.TARGET_TOPIC, utf8(target));
        request.headers().add(DelayHeaders.FIRE_AT, utf8(Long.toString(at)));
        sent.add(producer.send(request));
        due.put(id, at);
      }
    }
    for (Future<RecordMetadata> each : sent) {
      each.get(30, TimeUnit.SECONDS);
    }
    return due;
  }

  /**
   * Reads the topic as a read_committed consumer until it has at least {@code count} records and
   * every record committed by then: a duplicate cannot hide behind a count that was reached.
   */
  private List<ConsumerRecord<String, String>> readCommitted(String topic, int count) {
    try (TargetTopicReader reader = new TargetTopicReader(bootstrapServers, topic)) {
      reader.pollUntil(received -> received.size() >= count, TIMEOUT);
      return reader.drainCommitted(TIMEOUT).stream()
          .map(TargetTopicReader.Received::record)
          .toList();
    }
  }

  /** The request partition a schedule id belongs to: the default partitioner's. */
  private static int partitionOf(String id) {
    return Utils.toPositive(Utils.murmur2(utf8(id))) % PARTITIONS;
  }

  private static long firedAt(ConsumerRecord<String, String> record) {
    return Long.parseLong(header(record, DelayHeaders.FIRED_AT));
  }

  private static long dueAt(ConsumerRecord<String, String> record) {
    return Long.parseLong(header(record, DelayHeaders.DUE_AT));
  }

  private static String header(ConsumerRecord<String, String> record, String name) {
    return new String(record.headers().lastHeader(name).value(), StandardCharsets.UTF_8);
  }

  private static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}

package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The scale-out run of the capacity model (docs/capacity.md): one, two and three instances of one
 * deployment on a cluster of three brokers (each a process of its own, topics replicated three
 * times), and at each size, after a warm-up of the new instance, the same two loads: a burst of
 * tasks all due at one instant, whose drain rate is the aggregate fire rate, and a steady rate of
 * tasks due 3 s after sending, whose lateness is printed. Every task must fire exactly once and
 * none early; the figures are printed, and read as ratios against one instance, since everything
 * shares the machine's cores.
 *
 * <p>A measurement, not a test of the build: tagged {@code capacity}, run with {@code mvn -B -ntp
 * verify -pl delay-service -am -Dgroups=capacity -Dit.test=ScaleOutRunIT}.
 */
@FaultSeed(20_261_128L)
@ExtendWith(FaultExtension.class)
class ScaleOutRunIT {

  private static final int BROKERS = 3;
  private static final int BURST = Integer.getInteger("kdelay.scaleout.burst", 30_000);
  private static final int RATE = Integer.getInteger("kdelay.scaleout.rate", 1_000);

  /** Stream threads per instance ({@code delay.num.stream.threads}). */
  private static final int THREADS = Integer.getInteger("kdelay.scaleout.threads", 1);

  private static final Duration STEADY = Duration.ofSeconds(20);
  private static final Duration WARM_UP = Duration.ofSeconds(15);
  private static final Duration BURST_LEAD = Duration.ofSeconds(20);
  private static final Duration STEADY_LEAD = Duration.ofSeconds(3);
  private static final Duration TIMEOUT = Duration.ofMinutes(3);

  @Test
  @Tag("capacity")
  void shouldFireEveryTaskOnceWithOneTwoAndThreeInstancesAndPrintTheirRates(FaultRun run)
      throws Exception {
    Path dir = FaultScenario.freshDir("scaleout.brokers");
    BrokerCluster cluster =
        run.closeAfter(BrokerCluster.start(dir, BROKERS, FaultScenario.childLogConfig()));
    FaultScenario scenario = run.scenario("scaleout", cluster.bootstrapServers(), (short) BROKERS);
    Fleet fleet = scenario.fleet(0, Map.of("DELAY_NUM_STREAM_THREADS", Integer.toString(THREADS)));
    String target = scenario.targets().get(0);
    List<String> lines = new ArrayList<>();
    double[] drainRates = new double[4];
    try (KafkaProducer<String, String> producer = producer(scenario);
        Arrivals arrivals = new Arrivals(scenario.bootstrapServers(), target)) {
      List<ServiceInstance> live = new ArrayList<>();
      for (int size = 1; size <= 3; size++) {
        live.addAll(fleet.start(Character.toString('a' + size - 1)));
        fleet.awaitOwners(live, TIMEOUT);

        // a warm-up, not measured: the new instance's JIT compilers at work, as a new instance's
        // are in its first minute (the children run C1 only)
        steady(producer, scenario.requestsTopic(), "n" + size + "-warm-", target, WARM_UP);
        arrivals.await("n" + size + "-warm-", (int) (RATE * WARM_UP.toSeconds()), TIMEOUT);

        // the aggregate fire rate: a burst due at one instant, drained
        long due = System.currentTimeMillis() + BURST_LEAD.toMillis();
        String burst = "n" + size + "-burst-";
        for (int i = 0; i < BURST; i++) {
          send(producer, scenario.requestsTopic(), burst + i, target, due);
        }
        producer.flush();
        assertThat(System.currentTimeMillis())
            .as("the burst sent before it is due")
            .isLessThan(due);
        Map<String, long[]> drained = arrivals.await(burst, BURST, TIMEOUT);
        long last = drained.values().stream().mapToLong(a -> a[0]).max().orElseThrow();
        long first = drained.values().stream().mapToLong(a -> a[0]).min().orElseThrow();
        drainRates[size] = BURST * 1000.0 / Math.max(1, last - due);

        // lateness at a steady rate
        String steady = "n" + size + "-steady-";
        int count = steady(producer, scenario.requestsTopic(), steady, target, STEADY);
        Map<String, long[]> arrived = arrivals.await(steady, count, TIMEOUT);
        long[] lateness = arrived.values().stream().mapToLong(a -> a[0] - a[1]).sorted().toArray();
        long[] toFire = arrived.values().stream().mapToLong(a -> a[2] - a[1]).sorted().toArray();
        String line =
            String.format(
                "CAPACITY scale-out %d instance%s of %d thread%s on %d brokers: a burst of %,d due at once drained"
                    + " in %,d ms (first visible %,d ms after due) = %,.0f fires/s, %.2fx one"
                    + " instance's; %,d/s for %d s due %d s after sending: lateness p50 %d, p99"
                    + " %d, max %d ms (due to delay-fired-at: p50 %d, p99 %d ms)",
                size,
                size == 1 ? "" : "s",
                THREADS,
                THREADS == 1 ? "" : "s",
                BROKERS,
                BURST,
                last - due,
                first - due,
                drainRates[size],
                drainRates[size] / drainRates[1],
                RATE,
                STEADY.toSeconds(),
                STEADY_LEAD.toSeconds(),
                percentile(lateness, 0.50),
                percentile(lateness, 0.99),
                lateness[lateness.length - 1],
                percentile(toFire, 0.50),
                percentile(toFire, 0.99));
        System.out.println(line);
        lines.add(line);
      }
      assertThat(arrivals.duplicates()).as("ids fired more than once").isEmpty();
      assertThat(arrivals.early()).as("fired before due").isZero();
      assertThat(fleet.threadFailures()).isEmpty();
    }
    lines.forEach(scenario::report);
  }

  /**
   * Sends tasks at {@link #RATE} for a while, each due {@link #STEADY_LEAD} after it is sent.
   *
   * @return how many were sent
   */
  private static int steady(
      KafkaProducer<String, String> producer,
      String topic,
      String prefix,
      String target,
      Duration duration) {
    long start = System.nanoTime();
    int count = (int) (RATE * duration.toSeconds());
    for (int i = 0; i < count; i++) {
      long slot = start + i * 1_000_000_000L / RATE;
      LockSupport.parkNanos(slot - System.nanoTime()); // the load's pace, not a wait
      send(
          producer, topic, prefix + i, target, System.currentTimeMillis() + STEADY_LEAD.toMillis());
    }
    producer.flush();
    return count;
  }

  private static long percentile(long[] sorted, double p) {
    return sorted[(int) Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  }

  private static void send(
      KafkaProducer<String, String> producer, String topic, String id, String target, long dueMs) {
    ProducerRecord<String, String> request = new ProducerRecord<>(topic, id, id);
    request.headers().add(DelayHeaders.TARGET_TOPIC, target.getBytes(StandardCharsets.UTF_8));
    request
        .headers()
        .add(DelayHeaders.FIRE_AT, Long.toString(dueMs).getBytes(StandardCharsets.UTF_8));
    producer.send(request);
  }

  private static KafkaProducer<String, String> producer(FaultScenario scenario) {
    return new KafkaProducer<>(
        Map.of(
            ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
            scenario.bootstrapServers(),
            ProducerConfig.LINGER_MS_CONFIG,
            5),
        new StringSerializer(),
        new StringSerializer());
  }

  /**
   * A {@code read_committed} consumer of the target on a thread of its own: for each id, when it
   * became visible, when it was due and when it fired, and the ids seen twice.
   */
  private static final class Arrivals implements AutoCloseable {

    private final KafkaConsumer<String, String> consumer;
    private final Map<String, long[]> seen = new ConcurrentHashMap<>();
    private final Map<String, Integer> duplicates = new ConcurrentHashMap<>();
    private final Thread thread;
    private volatile long early;

    Arrivals(String bootstrapServers, String topic) {
      Map<String, Object> props = new HashMap<>();
      props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
      props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
      props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 5);
      props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5_000);
      consumer = new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer());
      List<TopicPartition> partitions =
          consumer.partitionsFor(topic).stream()
              .map(info -> new TopicPartition(topic, info.partition()))
              .toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      thread = new Thread(this::poll, "scaleout-arrivals");
      thread.setDaemon(true);
      thread.start();
    }

    private void poll() {
      try {
        while (true) {
          for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(20))) {
            long now = System.currentTimeMillis();
            long due = Long.parseLong(header(record, DelayHeaders.DUE_AT));
            long fired = Long.parseLong(header(record, DelayHeaders.FIRED_AT));
            if (fired < due) {
              early++;
            }
            if (seen.putIfAbsent(record.key(), new long[] {now, due, fired}) != null) {
              duplicates.merge(record.key(), 1, Integer::sum);
            }
          }
        }
      } catch (WakeupException e) {
        // closed
      }
    }

    /** Waits until {@code count} ids with a prefix arrived, and returns them. */
    Map<String, long[]> await(String prefix, int count, Duration timeout) {
      Map<String, long[]> found = new HashMap<>();
      Await.until(
          count + " tasks " + prefix + "* visible",
          timeout,
          () -> {
            found.clear();
            seen.forEach(
                (id, arrival) -> {
                  if (id.startsWith(prefix)) {
                    found.put(id, arrival);
                  }
                });
            return found.size() >= count;
          });
      return found;
    }

    Map<String, Integer> duplicates() {
      return duplicates;
    }

    long early() {
      return early;
    }

    private static String header(ConsumerRecord<String, String> record, String name) {
      Header header = record.headers().lastHeader(name);
      return new String(header.value(), StandardCharsets.UTF_8);
    }

    @Override
    public void close() throws InterruptedException {
      consumer.wakeup();
      thread.join(TimeUnit.SECONDS.toMillis(10));
      consumer.close();
    }
  }
}

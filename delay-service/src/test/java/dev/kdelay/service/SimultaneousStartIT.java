package dev.kdelay.service;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.topology.DelayConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Replicas of one deployment start together: three instances of one application id, released at the
 * same instant on a cluster where none of their topics exists, so that they race to create kdelay's
 * topics and Kafka Streams' changelogs. Every one must reach RUNNING with the stream thread it
 * started with, and none may fail.
 *
 * <p>A regression test: before topic creation took "already exists" for success and waited for the
 * topic to show in the metadata, an instance whose create lost to another's could fail at once with
 * {@code Topic '...-dlq' already exists.} The race is timing-dependent, so a run makes five
 * attempts with fresh names; a pass is evidence, not proof.
 */
@ExtendWith(KafkaClusterExtension.class)
class SimultaneousStartIT {

  private static final int ATTEMPTS = 5;
  private static final int INSTANCES = 3;
  private static final Duration START_TIMEOUT = Duration.ofMinutes(2);
  private static final Duration ALL_RUNNING_TIMEOUT = Duration.ofSeconds(30);
  private static final Pattern REPLACEMENT_THREAD =
      Pattern.compile("StreamThread-([2-9]|\\d\\d+)$");

  @TempDir Path stateDir;

  @Test
  @Tag("integration")
  void shouldRunEveryInstanceWhenThreeStartAtTheSameMomentOnFreshTopics(KafkaTestCluster kafka)
      throws Exception {
    List<String> seen = new ArrayList<>();
    List<Boolean> passed = new ArrayList<>();
    try {
      for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
        passed.add(startTogether(kafka.bootstrapServers(), "together-" + attempt, seen));
      }
    } finally {
      System.out.println("FAULTS simultaneous start of " + INSTANCES + " instances: " + seen);
    }
    // then: every attempt ran all three, on the stream threads they started with
    assertThat(passed).as(seen.toString()).containsOnly(true);
  }

  /** One attempt; records what it saw and returns whether it passed. */
  private boolean startTogether(String bootstrap, String name, List<String> seen) throws Exception {
    // given: three instances of one application, topics nobody has created
    String applicationId = "together-app-" + name;
    CyclicBarrier release = new CyclicBarrier(INSTANCES);
    ExecutorService starters = Executors.newFixedThreadPool(INSTANCES);
    List<DelayService> services = new ArrayList<>();
    List<Future<Long>> starts = new ArrayList<>();
    try {
      // when: released at the same instant
      for (int i = 0; i < INSTANCES; i++) {
        DelayService service = new DelayService(config(bootstrap, name, applicationId, i));
        services.add(service);
        starts.add(
            starters.submit(
                () -> {
                  release.await();
                  long started = System.nanoTime();
                  service.start(Optional.of(START_TIMEOUT));
                  return (System.nanoTime() - started) / 1_000_000;
                }));
      }
      List<String> times = new ArrayList<>();
      List<String> failures = new ArrayList<>();
      for (Future<Long> start : starts) {
        try {
          times.add(start.get(START_TIMEOUT.toSeconds() + 30, TimeUnit.SECONDS) + " ms");
        } catch (Exception e) {
          failures.add(String.valueOf(e.getCause() == null ? e : e.getCause()));
        }
      }
      boolean together =
          failures.isEmpty()
              && waitUntil(
                  ALL_RUNNING_TIMEOUT,
                  () ->
                      services.stream()
                          .allMatch(s -> s.state().orElse(null) == KafkaStreams.State.RUNNING));
      List<String> replaced = replacementThreads(applicationId);
      seen.add(
          name
              + ": RUNNING after "
              + times
              + ", failed "
              + failures
              + ", replaced threads "
              + replaced
              + (together
                  ? ""
                  : ", states " + services.stream().map(DelayService::state).toList()));
      return failures.isEmpty() && replaced.isEmpty() && together;
    } finally {
      starters.shutdownNow();
      services.forEach(DelayService::close);
    }
  }

  /** Names of the application's stream threads that replaced one that died. */
  private static List<String> replacementThreads(String applicationId) {
    return Thread.getAllStackTraces().keySet().stream()
        .map(Thread::getName)
        .filter(name -> name.startsWith(applicationId))
        .filter(name -> REPLACEMENT_THREAD.matcher(name).find())
        .toList();
  }

  private static boolean waitUntil(Duration timeout, BooleanSupplier condition)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        return false;
      }
      TimeUnit.MILLISECONDS.sleep(25); // how often the condition is looked at, not a guess
    }
    return true;
  }

  private ServiceConfig config(String bootstrap, String name, String applicationId, int instance) {
    Map<String, Object> props = new HashMap<>();
    props.put(DelayConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(DelayConfig.APPLICATION_ID_CONFIG, applicationId);
    props.put(DelayConfig.STATE_DIR_CONFIG, stateDir.resolve(name + "-" + instance).toString());
    props.put(DelayConfig.REQUESTS_TOPIC_CONFIG, name + "-requests");
    props.put(DelayConfig.DLQ_TOPIC_CONFIG, name + "-dlq");
    props.put(ServiceConfig.TOPIC_PARTITIONS_CONFIG, 3);
    props.put(ServiceConfig.HTTP_PORT_CONFIG, 0);
    return new ServiceConfig(props);
  }
}

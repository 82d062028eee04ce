package dev.kdelay.benchmarks;

import dev.kdelay.benchmarks.textbook.TextbookDelay;
import dev.kdelay.service.DelayService;
import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.topology.StreamsTuning;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.Topology;

/**
 * An application under test in a JVM of its own: a kdelay instance, the pass-through ceiling or the
 * textbook delay app.
 *
 * <p>Protocol on standard output: {@code READY <ms from start to RUNNING>} (for kdelay, which
 * restores its stores before RUNNING, that is the restore time); {@code HEAP} answers {@code HEAP
 * <used bytes after a full GC>}; {@code COUNTERS} answers with the {@link StreamsCounters}; {@code
 * STOP}, or the end of standard input, closes the instance.
 *
 * <pre>{@code
 * java -cp ... dev.kdelay.benchmarks.AppUnderTest KDELAY|PASS_THROUGH|TEXTBOOK BOOTSTRAP APP_ID
 *     STATE_DIR INPUT OUTPUT [KEY=VALUE ...]
 * }</pre>
 */
public final class AppUnderTest {

  private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(30);

  private AppUnderTest() {}

  /**
   * Runs the instance until told to stop.
   *
   * @param args kind, bootstrap servers, application id, state directory, input topic, output topic
   *     (the pass-through's; ignored by kdelay and the textbook app), then {@code key=value}
   *     settings
   * @throws Exception if the instance fails to start
   */
  public static void main(String[] args) throws Exception {
    AppKind kind = AppKind.valueOf(args[0]);
    Map<String, String> overrides = new HashMap<>();
    for (int i = 6; i < args.length; i++) {
      String[] pair = args[i].split("=", 2);
      overrides.put(pair[0], pair[1]);
    }
    ServiceConfig config = AppKind.config(args[1], args[2], args[3], args[4], overrides);
    long started = System.nanoTime();
    AutoCloseable instance =
        switch (kind) {
          case KDELAY -> startKdelay(config);
          case PASS_THROUGH -> startStreams("pass-through", passThrough(args[4], args[5]), config);
          case TEXTBOOK -> startStreams("textbook", TextbookDelay.topology(args[4]), config);
        };
    System.out.println("READY " + (System.nanoTime() - started) / 1_000_000);
    System.out.flush();
    serve(instance);
    System.exit(0);
  }

  private static AutoCloseable startKdelay(ServiceConfig config) {
    DelayService service = new DelayService(config);
    service.start();
    Thread watchdog =
        new Thread(
            () -> {
              try {
                if (service.awaitTermination() == KafkaStreams.State.ERROR) {
                  System.err.println("kdelay failed");
                  Runtime.getRuntime().halt(1);
                }
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            },
            "failure-watchdog");
    watchdog.setDaemon(true);
    watchdog.start();
    return service;
  }

  /** The ceiling: records go from the input topic to the output topic unchanged. */
  static Topology passThrough(String input, String output) {
    return new Topology()
        .addSource("in", new ByteArrayDeserializer(), new ByteArrayDeserializer(), input)
        .addSink("out", output, new ByteArraySerializer(), new ByteArraySerializer(), "in");
  }

  /** Starts a topology with kdelay's Streams settings and waits until it is RUNNING. */
  private static AutoCloseable startStreams(String name, Topology topology, ServiceConfig config)
      throws InterruptedException {
    KafkaStreams streams =
        new KafkaStreams(topology, StreamsTuning.streamsProperties(config.delay()));
    CountDownLatch running = new CountDownLatch(1);
    streams.setStateListener(
        (newState, oldState) -> {
          if (newState == KafkaStreams.State.RUNNING) {
            running.countDown();
          } else if (newState == KafkaStreams.State.ERROR) {
            System.err.println(name + " failed");
            Runtime.getRuntime().halt(1);
          }
        });
    streams.start();
    if (!running.await(5, TimeUnit.MINUTES)) {
      throw new IllegalStateException(name + " did not reach RUNNING in 5 minutes");
    }
    return () -> streams.close(CLOSE_TIMEOUT);
  }

  private static void serve(AutoCloseable instance) throws Exception {
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      String command = line.trim();
      if (command.equals("HEAP")) {
        System.out.println("HEAP " + heapAfterGc());
        System.out.flush();
      } else if (command.equals("COUNTERS")) {
        System.out.println("COUNTERS " + StreamsCounters.read().format());
        System.out.flush();
      } else if (command.equals("STOP")) {
        break;
      }
    }
    instance.close();
  }

  private static long heapAfterGc() {
    // Two collections: the first may only finish what a concurrent cycle had started.
    System.gc();
    System.gc();
    MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
    return heap.getUsed();
  }
}

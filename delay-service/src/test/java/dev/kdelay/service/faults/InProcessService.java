package dev.kdelay.service.faults;

import dev.kdelay.service.DelayService;
import dev.kdelay.service.config.ServiceConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.apache.kafka.streams.KafkaStreams;

/**
 * A {@link DelayService} in the test JVM, started within a timeout, and a watch on it: its Kafka
 * Streams state sampled every few milliseconds from the moment it first runs, and its stream
 * threads, so that a test can tell that bad input never took the service out of RUNNING nor killed
 * a thread (a replaced thread gets the next number, {@code -StreamThread-2}).
 */
final class InProcessService implements AutoCloseable {

  private static final long SAMPLE_MS = 5;

  private final DelayService service;
  private final String applicationId;
  private final List<String> departures = new ArrayList<>();
  private final Thread watch;
  private volatile boolean stopping;

  private InProcessService(DelayService service, String applicationId) {
    this.service = service;
    this.applicationId = applicationId;
    this.watch = new Thread(this::watchState, "state-watch");
    watch.setDaemon(true);
    watch.start();
  }

  /** Starts the service and waits until it is RUNNING. */
  static InProcessService start(ServiceConfig config, Duration timeout) throws Exception {
    DelayService service = new DelayService(config);
    try {
      CompletableFuture.runAsync(service::start)
          .get(Await.scaled(timeout).toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      service.close();
      throw e;
    }
    return new InProcessService(service, config.delay().applicationId());
  }

  private void watchState() {
    while (!stopping) {
      Optional<KafkaStreams.State> state = service.state();
      if (state.isEmpty() || state.get() != KafkaStreams.State.RUNNING) {
        synchronized (departures) {
          departures.add(System.currentTimeMillis() + ": " + state.orElse(null));
        }
      }
      Await.pause(SAMPLE_MS);
    }
  }

  /** Every sample, since the service first ran, that found it in a state other than RUNNING. */
  List<String> departuresFromRunning() {
    synchronized (departures) {
      return List.copyOf(departures);
    }
  }

  /** Names of this service's stream threads that replaced one that died. */
  List<String> replacementThreads() {
    Pattern replacement = Pattern.compile("StreamThread-([2-9]|\\d\\d+)$");
    return Thread.getAllStackTraces().keySet().stream()
        .map(Thread::getName)
        .filter(name -> name.startsWith(applicationId) && replacement.matcher(name).find())
        .toList();
  }

  @Override
  public void close() throws InterruptedException {
    stopping = true;
    watch.join(TimeUnit.SECONDS.toMillis(5));
    service.close();
  }
}

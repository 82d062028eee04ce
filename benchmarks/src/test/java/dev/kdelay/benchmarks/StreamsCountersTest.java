package dev.kdelay.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;
import org.junit.jupiter.api.Test;

class StreamsCountersTest {

  private static final long SPUN_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

  @Test
  void shouldCountTheCpuOfALiveStreamThread() throws Exception {
    long before = StreamsCounters.liveStreamThreadCpuNanos();

    whileSpunOnLiveThread(
        "bench-app-0f3c-StreamThread-1",
        spun ->
            assertThat(StreamsCounters.liveStreamThreadCpuNanos() - before).isGreaterThan(spun));
  }

  @Test
  void shouldNotCountThreadsNamedAfterAStreamThreadThatAreNotOne() throws Exception {
    long before = StreamsCounters.liveStreamThreadCpuNanos();

    // The producer's network thread of a stream thread, and the application's other threads.
    whileSpunOnLiveThread(
        "bench-app-0f3c-StreamThread-1-producer",
        spun -> assertThat(StreamsCounters.liveStreamThreadCpuNanos()).isEqualTo(before));
    whileSpunOnLiveThread(
        "kafka-producer-network-thread | bench-app-0f3c-StreamThread-1-producer",
        spun -> assertThat(StreamsCounters.liveStreamThreadCpuNanos()).isEqualTo(before));
  }

  @Test
  void shouldRoundTripThroughTheProtocolAndSubtract() {
    StreamsCounters earlier = new StreamsCounters(1, 2, 3, 4, 5, 6, 7, 8);
    StreamsCounters later = new StreamsCounters(11, 22, 33, 44, 55, 66, 77, 88);

    assertThat(StreamsCounters.parse(later.format())).isEqualTo(later);
    assertThat(later.since(earlier)).isEqualTo(new StreamsCounters(10, 20, 30, 40, 50, 60, 70, 80));
  }

  @Test
  void shouldCountWhatTheJitCompilersSpent() {
    // This JVM has compiled the test framework's code by now; HotSpot keeps the running total.
    long before = StreamsCounters.jvmCompileMillis();

    assertThat(before).isPositive();
    assertThat(StreamsCounters.read().compileMillis()).isGreaterThanOrEqualTo(before);
  }

  @Test
  void shouldGiveStreamThreadCpuPerThousandRecordsTakenIn() {
    StreamsCounters counters = new StreamsCounters(5, 2_000, 0, 6_000, 0, 0, 30_000_000L, 0);
    Runs.Throughput run = new Runs.Throughput(1_000, 1, 0, 0, 2_000, 0, 2_000, counters);

    assertThat(run.streamThreadCpuMsPerThousand()).isEqualTo(15.0);
  }

  /**
   * Starts a thread of this name that spins for {@link #SPUN_NANOS} of its own CPU time, runs the
   * check while it is still alive (given the CPU time it had spun, a little less than it counts
   * now), then lets it end.
   */
  private static void whileSpunOnLiveThread(String name, LongConsumer check)
      throws InterruptedException {
    CountDownLatch spun = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    long[] cpu = new long[1];
    Thread thread =
        new Thread(
            () -> {
              cpu[0] = spin();
              spun.countDown();
              try {
                release.await(30, TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            },
            name);
    thread.start();
    try {
      assertThat(spun.await(30, TimeUnit.SECONDS)).isTrue();
      assertThat(cpu[0]).isGreaterThanOrEqualTo(SPUN_NANOS);
      check.accept(cpu[0] - 1);
    } finally {
      release.countDown();
      thread.join();
    }
  }

  /** Spins until the calling thread has used {@link #SPUN_NANOS} of CPU; returns its CPU time. */
  private static long spin() {
    long start = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
    long now = start;
    while (now - start < SPUN_NANOS) {
      now = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
    }
    return now;
  }
}

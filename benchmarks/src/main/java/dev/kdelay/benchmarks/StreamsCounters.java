package dev.kdelay.benchmarks;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.Set;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;

/**
 * Counters of a Kafka Streams application, read from the JMX beans Kafka registers, so that they
 * work for any application without a handle on its {@code KafkaStreams}: how many transactions it
 * committed, how many records its producer sent and how long its stream threads waited for the
 * producer's flush and the transaction commit. A run's deltas explain its throughput: records per
 * transaction, produced records per input record, and the share of the run spent committing.
 *
 * <p>Also the CPU time of the stream threads, read from the JVM: the thread that bounds a Kafka
 * Streams application's throughput, so its CPU per record compares two applications' work without
 * what they share with everything else on the machine (the cores, the JIT compiler, the broker).
 *
 * @param commits commits of all stream threads
 * @param processed records processed by all stream threads
 * @param punctuations punctuations run
 * @param sends records the stream threads' producers sent (output and changelogs)
 * @param flushNanos time the producers spent in {@code flush()}
 * @param commitNanos time spent in {@code sendOffsetsToTransaction} and {@code commitTransaction}
 * @param streamThreadCpuNanos CPU time of the live stream threads, user and system
 * @param compileMillis time the JVM's JIT compilers spent compiling, as the JVM reports it (the
 *     elapsed time of each compilation, summed over the compiler threads), or 0 where it does not
 *     say: a burst on a fresh instance competes with them for the cores
 */
record StreamsCounters(
    long commits,
    long processed,
    long punctuations,
    long sends,
    long flushNanos,
    long commitNanos,
    long streamThreadCpuNanos,
    long compileMillis) {

  /**
   * How Kafka Streams names its stream threads: {@code <client id>-StreamThread-<n>}.
   *
   * <p>The counters are read in the application's JVM just before a burst is due, so reading them
   * must not touch code the stream thread runs: a regular expression or {@code String.format} here
   * deoptimized the JDK's compiled {@code java.util.Formatter}, which Kafka Streams 4.3 calls on
   * every pass of the stream thread ({@code TaskExecutionMetadata.canProcessTask}), at the burst's
   * first fire (HotSpot's compilation log, {@code -XX:+LogCompilation}).
   */
  private static final String STREAM_THREAD = "-StreamThread-";

  /** Reads the counters of this JVM. */
  static StreamsCounters read() {
    MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    return new StreamsCounters(
        sum(server, "kafka.streams:type=stream-thread-metrics,*", "commit-total"),
        sum(server, "kafka.streams:type=stream-thread-metrics,*", "process-total"),
        sum(server, "kafka.streams:type=stream-thread-metrics,*", "punctuate-total"),
        sum(server, "kafka.producer:type=producer-metrics,*", "record-send-total"),
        sum(server, "kafka.producer:type=producer-metrics,*", "flush-time-ns-total"),
        sum(server, "kafka.producer:type=producer-metrics,*", "txn-commit-time-ns-total")
            + sum(
                server, "kafka.producer:type=producer-metrics,*", "txn-send-offsets-time-ns-total"),
        liveStreamThreadCpuNanos(),
        jvmCompileMillis());
  }

  /** Time the JIT compilers have spent compiling in this JVM; 0 where the JVM cannot tell. */
  static long jvmCompileMillis() {
    CompilationMXBean compiler = ManagementFactory.getCompilationMXBean();
    return compiler != null && compiler.isCompilationTimeMonitoringSupported()
        ? compiler.getTotalCompilationTime()
        : 0;
  }

  /** CPU time the live threads named as stream threads have used; 0 where the JVM cannot tell. */
  static long liveStreamThreadCpuNanos() {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    if (!threads.isThreadCpuTimeSupported() || !threads.isThreadCpuTimeEnabled()) {
      return 0;
    }
    long total = 0;
    for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
      if (info != null && isStreamThread(info.getThreadName())) {
        long nanos = threads.getThreadCpuTime(info.getThreadId());
        total += Math.max(0, nanos); // -1: the thread ended in between
      }
    }
    return total;
  }

  /** Whether a thread's name is a stream thread's: the marker, then a number. */
  static boolean isStreamThread(String name) {
    int marker = name.lastIndexOf(STREAM_THREAD);
    int digits = marker + STREAM_THREAD.length();
    if (marker < 0 || digits == name.length()) {
      return false;
    }
    for (int i = digits; i < name.length(); i++) {
      if (name.charAt(i) < '0' || name.charAt(i) > '9') {
        return false;
      }
    }
    return true;
  }

  /**
   * The protocol form: eight numbers. Built with a {@link StringBuilder}: neither {@code
   * String.format} nor {@code +}, whose first use bootstraps method handles and generates classes
   * in the application's JVM (see {@link #STREAM_THREAD}).
   */
  String format() {
    long[] values = {
      commits,
      processed,
      punctuations,
      sends,
      flushNanos,
      commitNanos,
      streamThreadCpuNanos,
      compileMillis
    };
    StringBuilder text = new StringBuilder(8 * 12);
    for (long value : values) {
      if (text.length() > 0) {
        text.append(' ');
      }
      text.append(value);
    }
    return text.toString();
  }

  /** Reads the protocol form. */
  static StreamsCounters parse(String text) {
    String[] f = text.trim().split(" ");
    return new StreamsCounters(
        Long.parseLong(f[0]),
        Long.parseLong(f[1]),
        Long.parseLong(f[2]),
        Long.parseLong(f[3]),
        Long.parseLong(f[4]),
        Long.parseLong(f[5]),
        Long.parseLong(f[6]),
        Long.parseLong(f[7]));
  }

  /** What happened between {@code earlier} and this. */
  StreamsCounters since(StreamsCounters earlier) {
    return new StreamsCounters(
        commits - earlier.commits,
        processed - earlier.processed,
        punctuations - earlier.punctuations,
        sends - earlier.sends,
        flushNanos - earlier.flushNanos,
        commitNanos - earlier.commitNanos,
        streamThreadCpuNanos - earlier.streamThreadCpuNanos,
        compileMillis - earlier.compileMillis);
  }

  private static long sum(MBeanServer server, String pattern, String attribute) {
    double total = 0;
    Set<ObjectName> names;
    try {
      names = server.queryNames(new ObjectName(pattern), null);
    } catch (MalformedObjectNameException e) {
      throw new IllegalArgumentException(pattern, e);
    }
    for (ObjectName name : names) {
      try {
        Object value = server.getAttribute(name, attribute);
        if (value instanceof Number number && !Double.isNaN(number.doubleValue())) {
          total += number.doubleValue();
        }
      } catch (JMException e) {
        // Kafka Streams registers two beans per thread; only one has the counters.
      }
    }
    return (long) total;
  }
}

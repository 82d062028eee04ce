package dev.kdelay.benchmarks;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

/**
 * Where a thread's time goes, from a Java Flight Recorder file of {@code bin/kdelay-bench --jfr
 * DIR}: the stream thread of kdelay against the one of the pass-through, for example.
 *
 * <p>Execution samples (the thread runs Java) and native method samples (the thread is in native
 * code: RocksDB through JNI, or blocked in {@code epoll} or {@code park}) are weighted by their
 * sampling periods (10 and 20 ms in JFR's {@code profile} settings), so the figures approximate the
 * thread's wall-clock time. Each sample is put in the first category (in the order below) that a
 * frame of its stack matches, searching from the innermost frame outwards, and every method on its
 * stack is counted once towards that method's inclusive share.
 *
 * <pre>{@code
 * java -cp benchmarks/target/kdelay-bench.jar dev.kdelay.benchmarks.ProfileSummary \
 *     /tmp/jfr/kdelay-a.jfr '.*StreamThread-[0-9]+'
 * }</pre>
 */
public final class ProfileSummary {

  private static final long EXECUTION_PERIOD_MS = 10;
  private static final long NATIVE_PERIOD_MS = 20;
  private static final int TOP = 30;

  /** Categories, most specific first: {label, frame prefix, frame prefix, ...}. */
  private static final String[][] CATEGORIES = {
    {"RocksDB flush (store commit)", "org.rocksdb.RocksDB.flush"},
    {"RocksDB get", "org.rocksdb.RocksDB.get"},
    {
      "RocksDB put/delete/write",
      "org.rocksdb.RocksDB.put",
      "org.rocksdb.RocksDB.delete",
      "org.rocksdb.RocksDB.write"
    },
    {"RocksDB iterator seek", "org.rocksdb.AbstractRocksIterator.seek"},
    {
      "RocksDB iterator next/key/value/close",
      "org.rocksdb.AbstractRocksIterator",
      "org.rocksdb.RocksIterator",
      "org.rocksdb.AbstractNativeReference.close",
      "org.rocksdb.ReadOptions",
      "org.rocksdb.Slice"
    },
    {
      "producer flush: commit waits for acks",
      "org.apache.kafka.clients.producer.KafkaProducer.flush"
    },
    {
      "transaction commit (offsets, EndTxn)",
      "org.apache.kafka.clients.producer.KafkaProducer.commitTransaction",
      "org.apache.kafka.clients.producer.KafkaProducer.sendOffsetsToTransaction",
      "org.apache.kafka.clients.producer.KafkaProducer.beginTransaction"
    },
    {"producer send", "org.apache.kafka.clients.producer.KafkaProducer.send"},
    {"consumer poll", "org.apache.kafka.clients.consumer.KafkaConsumer.poll"},
    {"request parsing", "dev.kdelay.schemas.RequestParser"},
    {"stored-task codec", "dev.kdelay.schemas.StoredTaskCodec"},
    {"kdelay punctuator (other)", "dev.kdelay.topology.internals.FirePunctuator"},
    {"kdelay request processor (other)", "dev.kdelay.topology.internals.RequestProcessor"},
    {
      "Kafka Streams commit (other)",
      "org.apache.kafka.streams.processor.internals.TaskExecutor.commit",
      "org.apache.kafka.streams.processor.internals.TaskManager.commit"
    },
    {"Kafka Streams (other)", "org.apache.kafka.streams"},
  };

  private ProfileSummary() {}

  /**
   * Prints the summary.
   *
   * @param args the recording, and a regular expression the names of the threads to include match
   *     in full (default: all threads)
   * @throws IOException if the recording cannot be read
   */
  public static void main(String[] args) throws IOException {
    if (args.length < 1) {
      System.err.println("usage: ProfileSummary FILE.jfr [THREAD_NAME_REGEX]");
      System.exit(2);
    }
    Pattern thread = Pattern.compile(args.length > 1 ? args[1] : ".*");
    Map<String, Long> categories = new LinkedHashMap<>();
    Map<String, Long> inclusive = new HashMap<>();
    Map<String, Long> self = new HashMap<>();
    long total = 0;
    for (RecordedEvent event : RecordingFile.readAllEvents(Path.of(args[0]))) {
      long weight = weight(event);
      if (weight == 0
          || event.getStackTrace() == null
          || !thread.matcher(threadOf(event)).matches()) {
        continue;
      }
      List<String> frames = frames(event);
      total += weight;
      categories.merge(category(frames), weight, Long::sum);
      self.merge(frames.isEmpty() ? "?" : frames.get(0), weight, Long::sum);
      for (String method : new HashSet<>(frames)) {
        inclusive.merge(method, weight, Long::sum);
      }
    }
    System.out.printf("%s, threads matching '%s': %,d ms of samples%n", args[0], thread, total);
    print("by category (first match from the innermost frame)", categories, total, TOP);
    print("inclusive, by method", inclusive, total, TOP);
    print("self (innermost frame)", self, total, TOP);
  }

  private static long weight(RecordedEvent event) {
    return switch (event.getEventType().getName()) {
      case "jdk.ExecutionSample" -> EXECUTION_PERIOD_MS;
      case "jdk.NativeMethodSample" -> NATIVE_PERIOD_MS;
      default -> 0;
    };
  }

  private static String threadOf(RecordedEvent event) {
    var thread = event.getThread("sampledThread");
    return thread == null || thread.getJavaName() == null ? "" : thread.getJavaName();
  }

  private static List<String> frames(RecordedEvent event) {
    List<String> frames = new ArrayList<>();
    for (RecordedFrame frame : event.getStackTrace().getFrames()) {
      frames.add(frame.getMethod().getType().getName() + "." + frame.getMethod().getName());
    }
    return frames;
  }

  private static String category(List<String> frames) {
    String innermost = frames.isEmpty() ? "" : frames.get(0);
    if (innermost.startsWith("sun.nio.ch.EPoll.wait") || innermost.endsWith("Unsafe.park")) {
      // Blocked. Say on what, by the outermost category the stack shows.
      for (String[] category : CATEGORIES) {
        if (matches(frames, category)) {
          return "blocked in " + category[0];
        }
      }
      return "blocked (other)";
    }
    for (String[] category : CATEGORIES) {
      if (matches(frames, category)) {
        return category[0];
      }
    }
    return "other";
  }

  private static boolean matches(List<String> frames, String[] category) {
    for (String frame : frames) {
      for (int i = 1; i < category.length; i++) {
        if (frame.startsWith(category[i])) {
          return true;
        }
      }
    }
    return false;
  }

  private static void print(String title, Map<String, Long> counts, long total, int top) {
    System.out.printf("%n%s%n", title);
    Set<String> shown = new HashSet<>();
    counts.entrySet().stream()
        .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
        .limit(top)
        .forEach(
            entry -> {
              shown.add(entry.getKey());
              System.out.printf(
                  "  %5.1f%%  %,8d ms  %s%n",
                  100.0 * entry.getValue() / Math.max(1, total), entry.getValue(), entry.getKey());
            });
  }
}

package dev.kdelay.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
 * <p>JFR takes its native method samples from one thread per period, among every thread that is in
 * native code at that moment, idle network threads in {@code epoll} included: a stream thread's
 * time in RocksDB is under-counted. So the summary also reads async-profiler's collapsed stacks
 * (CPU time of every thread, native frames included), as {@code benchmarks/README.md} shows.
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
    {"RocksDB get", "org.rocksdb.RocksDB.get", "org.rocksdb.RocksDB.multiGet"},
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
      System.err.println(
          "usage: ProfileSummary FILE.jfr [THREAD_NAME_REGEX]\n"
              + "       ProfileSummary FILE.collapsed [THREAD_NAME_REGEX [INTERVAL_MS]]");
      System.exit(2);
    }
    Path file = Path.of(args[0]);
    Pattern thread = Pattern.compile(args.length > 1 ? args[1] : ".*");
    List<Sample> samples =
        file.toString().endsWith(".jfr")
            ? fromRecording(file)
            : fromCollapsed(
                Files.readAllLines(file), args.length > 2 ? Long.parseLong(args[2]) : 10);
    Summary summary = summarize(samples, thread);
    System.out.printf(
        "%s, threads matching '%s': %,d ms of samples%n", args[0], thread, summary.total());
    print(
        "by category (first match from the innermost frame)",
        summary.categories(),
        summary.total());
    print("inclusive, by method", summary.inclusive(), summary.total());
    print("self (innermost frame)", summary.self(), summary.total());
  }

  /**
   * One stack sample.
   *
   * @param thread the thread's name
   * @param frames methods as {@code package.Class.method}, innermost first
   * @param weightMs the wall-clock or CPU time it stands for
   */
  record Sample(String thread, List<String> frames, long weightMs) {}

  /** Where the samples' time went: by category, by method inclusive and by innermost method. */
  record Summary(
      long total,
      Map<String, Long> categories,
      Map<String, Long> inclusive,
      Map<String, Long> self) {}

  static Summary summarize(List<Sample> samples, Pattern thread) {
    Map<String, Long> categories = new LinkedHashMap<>();
    Map<String, Long> inclusive = new HashMap<>();
    Map<String, Long> self = new HashMap<>();
    long total = 0;
    for (Sample sample : samples) {
      if (!thread.matcher(sample.thread()).matches()) {
        continue;
      }
      List<String> frames = sample.frames();
      total += sample.weightMs();
      categories.merge(category(frames), sample.weightMs(), Long::sum);
      self.merge(frames.isEmpty() ? "?" : frames.get(0), sample.weightMs(), Long::sum);
      for (String method : new HashSet<>(frames)) {
        inclusive.merge(method, sample.weightMs(), Long::sum);
      }
    }
    return new Summary(total, categories, inclusive, self);
  }

  private static List<Sample> fromRecording(Path recording) throws IOException {
    List<Sample> samples = new ArrayList<>();
    for (RecordedEvent event : RecordingFile.readAllEvents(recording)) {
      long weight = weight(event);
      if (weight > 0 && event.getStackTrace() != null) {
        samples.add(new Sample(threadOf(event), frames(event), weight));
      }
    }
    return samples;
  }

  /**
   * Samples from async-profiler's collapsed output ({@code collapsed,threads}): one line per
   * distinct stack, {@code [thread tid=N];outermost;...;innermost COUNT}, Java classes with
   * slashes. Each sample stands for one interval of the profiler.
   */
  static List<Sample> fromCollapsed(List<String> lines, long intervalMs) {
    List<Sample> samples = new ArrayList<>();
    for (String line : lines) {
      int space = line.lastIndexOf(' ');
      if (line.isBlank() || space < 0) {
        continue;
      }
      List<String> stack = new ArrayList<>(List.of(line.substring(0, space).split(";")));
      String thread = "";
      if (!stack.isEmpty() && stack.get(0).startsWith("[")) {
        String name = stack.remove(0);
        thread = name.substring(1, name.length() - 1).replaceFirst(" tid=\\d+$", "");
      }
      List<String> frames = new ArrayList<>(stack.size());
      for (int i = stack.size() - 1; i >= 0; i--) {
        frames.add(stack.get(i).replace('/', '.'));
      }
      long count = Long.parseLong(line.substring(space + 1).trim());
      samples.add(new Sample(thread, frames, count * intervalMs));
    }
    return samples;
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

  private static void print(String title, Map<String, Long> counts, long total) {
    System.out.printf("%n%s%n", title);
    counts.entrySet().stream()
        .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
        .limit(TOP)
        .forEach(
            entry -> {
              System.out.printf(
                  "  %5.1f%%  %,8d ms  %s%n",
                  100.0 * entry.getValue() / Math.max(1, total), entry.getValue(), entry.getKey());
            });
  }
}

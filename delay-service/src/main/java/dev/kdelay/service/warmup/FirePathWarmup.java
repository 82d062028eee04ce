package dev.kdelay.service.warmup;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.LogValues;
import dev.kdelay.service.ServiceMetrics;
import dev.kdelay.service.topics.AdminTargetTopics;
import dev.kdelay.topology.DelayConfig;
import dev.kdelay.topology.DelayTopology;
import dev.kdelay.topology.StreamsTuning;
import dev.kdelay.topology.internals.delivery.DeliveryQuarantine;
import dev.kdelay.topology.internals.delivery.RescuingProducer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs synthetic tasks through kdelay's own topology, in this JVM and without Kafka, before the
 * instance reports ready: so that its first real fires run compiled code.
 *
 * <p>Why: a fresh JVM runs the fire path interpreted, then compiled by C1, and only after thousands
 * of calls by C2; on two cores the compiler threads also take CPU from the stream thread. A burst
 * due on an instance that just started drained two to four times slower than on a warm one. Here
 * requests are taken in and fired through the same processors, stores (RocksDB, in a temporary
 * directory) and record collector as in production, under Kafka Streams' {@link
 * TopologyTestDriver}, which stands in for the consumer and the producer: nothing is read from or
 * written to the cluster. What the topology wrote in a round (fired records, changelogs) then goes
 * through a Kafka producer, wrapped as the stream threads' are, in a transaction, to a {@link
 * ProducerSink} on the loopback interface that drops it: the driver's mock producer runs none of
 * the Kafka producer's code, and the instance's first writes (its intake's changelog) came too late
 * for the JIT to have compiled that code with profiles before a burst.
 *
 * <p>The topology runs with the service's own kinds of collaborators (its target-topic cache, told
 * from memory that every topic exists, and its metrics, in a registry of their own; the fire-rate
 * limits are one final class whoever builds the topology, {@code FireRateLimitsInEffect}), and
 * every other round fires late, as a burst does. The JIT compiles what it saw: a call site that saw
 * only a stand-in ({@code TargetTopics.UNCHECKED}, {@code DelayMetrics.NOOP}) was compiled for that
 * one class, and the first real fire threw the compiled fire path away (a {@code class_check} trap
 * in {@code DeliveryCheck.atFire}, inlined up to {@code FirePunctuator.fireDue}), as did the first
 * late fire: the instance's first burst then ran interpreted while it was compiled again.
 *
 * <p>It runs while Kafka Streams joins the group and restores, so it costs a restart only the CPU
 * it shares with them.
 *
 * <p>{@link #warm} runs it twice. While a JVM starts on two cores the compilers' queues are long,
 * and HotSpot then compiles hot methods at C1's tier 2 (counters only) instead of tier 3 (which
 * records which branches run): a single pass left no branch profile of its fires in {@code
 * FirePunctuator.fireDue}. C2 compiled that method later from the idle punctuations that followed,
 * where nothing was ever due, so the fire branch became an uncommon trap: an instance's first burst
 * threw the compiled fire path away (an {@code unstable_if} deoptimization at {@code
 * FirePunctuator.fireDue}'s {@code mayHaveDue}, in JFR's {@code jdk.Deoptimization} events) and
 * drained in C1's code while C2 compiled it again. So the first pass is followed by a wait until
 * the compilers are quiet (the fire path then runs profiling code), a second, shorter pass whose
 * fires are profiled, and a wait for the compilations those profiles asked for.
 */
public final class FirePathWarmup {

  private static final Logger log = LoggerFactory.getLogger(FirePathWarmup.class);

  /** Punctuations a round of requests may take to fire before the warm-up goes on regardless. */
  private static final int MAX_STEPS_PER_ROUND = 20;

  /** Any name outside kdelay's own topics: the warm-up's policy allows every other. */
  private static final String TARGET = "warmup.fired";

  /** How late the late rounds fire: more than a burst's fires are. */
  private static final Duration LATE_BY = Duration.ofSeconds(1);

  /** The partitions the warm-up's target topic is said to have. */
  private static final int TARGET_PARTITIONS = 6;

  /** The producer settings that shape what its code does with a record. */
  private static final List<String> BATCH_SETTINGS =
      List.of(
          ProducerConfig.LINGER_MS_CONFIG,
          ProducerConfig.BATCH_SIZE_CONFIG,
          ProducerConfig.COMPRESSION_TYPE_CONFIG,
          ProducerConfig.BUFFER_MEMORY_CONFIG,
          ProducerConfig.MAX_REQUEST_SIZE_CONFIG,
          ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION);

  /** The synthetic schedule ids' prefix. */
  private static final String ID_PREFIX = "warmup-";

  private FirePathWarmup() {}

  /**
   * What a warm-up did.
   *
   * @param fired the synthetic tasks that fired
   * @param rerouted synthetic requests kdelay moved to the partition their id hashes to: none, as
   *     in production, where producers partition by the same hash
   * @param produced records the Kafka producer's code sent to the {@link ProducerSink}: those the
   *     topology wrote (fired records, changelogs), or 0 if that part failed
   * @param took how long it took
   */
  public record Result(int fired, int rerouted, long produced, Duration took) {}

  /**
   * What a warm-up of two passes did.
   *
   * @param first the first pass, of the configured number of tasks
   * @param second the second pass, once the compilers were quiet
   * @param waited how long it waited for the compilers, after both passes
   * @param took how long it all took
   */
  public record Warmed(Result first, Result second, Duration waited, Duration took) {

    /** The synthetic tasks both passes fired. */
    public int fired() {
      return first.fired() + second.fired();
    }

    /** The records both passes' Kafka producers sent. */
    public long produced() {
      return first.produced() + second.produced();
    }
  }

  /** The longest wait for the compilers after each pass. */
  private static final Duration MAX_COMPILER_WAIT = Duration.ofSeconds(3);

  /** The window over which the compilers must have been busy a tenth of the time at most. */
  private static final Duration COMPILERS_QUIET = Duration.ofMillis(250);

  /**
   * Warms the fire path in two passes (see the class comment): {@code tasks} synthetic tasks, a
   * wait for the compilers, a pass of a quarter as many (at least one punctuation's worth, at most
   * {@code tasks}), and a wait for the compilers again.
   *
   * @throws InterruptedException if interrupted while waiting for the compilers
   */
  public static Warmed warm(DelayConfig service, int tasks) throws InterruptedException {
    long started = System.nanoTime();
    Result first = run(service, tasks);
    Optional<CompilerQuiet> compilers = CompilerQuiet.ofThisJvm();
    Duration waited = Duration.ZERO;
    if (compilers.isPresent()) {
      waited = waited.plus(compilers.get().await(COMPILERS_QUIET, MAX_COMPILER_WAIT));
    }
    int secondTasks = Math.min(tasks, Math.max(tasks / 4, service.maxFiresPerPunctuation()));
    Result second = run(service, secondTasks);
    if (compilers.isPresent()) {
      waited = waited.plus(compilers.get().await(COMPILERS_QUIET, MAX_COMPILER_WAIT));
    }
    return new Warmed(first, second, waited, Duration.ofNanos(System.nanoTime() - started));
  }

  /** Takes in and fires {@code tasks} synthetic tasks with {@code service}'s settings. */
  public static Result run(DelayConfig service, int tasks) {
    long started = System.nanoTime();
    int fired = 0;
    int rerouted = 0;
    long produced = 0;
    Path stateDir = temporaryDirectory(Path.of(service.getString(DelayConfig.STATE_DIR_CONFIG)));
    try {
      Map<Object, Object> settings = new HashMap<>(service.originals());
      settings.put(DelayConfig.APPLICATION_ID_CONFIG, "kdelay-warmup");
      settings.put(DelayConfig.STATE_DIR_CONFIG, stateDir.toString());
      settings.put(DelayConfig.TARGET_TOPIC_ALLOW_CONFIG, ".*");
      // The driver has one partition per topic: with the service's partition count, five requests
      // in six sat on a partition their id does not hash to, went through the reroute topic and
      // were taken in twice, a path production requests do not take.
      settings.put(DelayConfig.REQUESTS_PARTITIONS_CONFIG, 1);
      DelayConfig config = new DelayConfig(settings);
      // The driver's clock starts now and moves only when told, so tasks are due exactly when
      // the driver's wall clock says, whatever the machine's load.
      Instant start = Instant.now();
      // The service's own kinds of collaborators, not stand-ins: compiled code that saw only a
      // stand-in at a call site is thrown away at the first call with the real one, on the
      // instance's first fires (see the class comment).
      // One quarantine for the topology and the producer, as in the service.
      ServiceMetrics metrics = new ServiceMetrics(Clock.systemUTC(), () -> 0);
      DeliveryQuarantine quarantine = new DeliveryQuarantine(config, metrics);
      try (metrics;
          AdminTargetTopics topics = AdminTargetTopics.everyTopicPresent(TARGET_PARTITIONS);
          Producing producing = Producing.open(config, quarantine);
          TopologyTestDriver driver =
              new TopologyTestDriver(
                  DelayTopology.build(config, topics, metrics, quarantine),
                  StreamsTuning.streamsProperties(config),
                  start)) {
        ByteArraySerializer bytes = new ByteArraySerializer();
        ByteArrayDeserializer read = new ByteArrayDeserializer();
        TestInputTopic<byte[], byte[]> requests =
            driver.createInputTopic(config.requestsTopic(), bytes, bytes);
        TestInputTopic<byte[], byte[]> reroute =
            driver.createInputTopic(config.rerouteTopic(), bytes, bytes);
        TestOutputTopic<byte[], byte[]> fences =
            driver.createOutputTopic(config.rerouteTopic(), read, read);
        TestOutputTopic<byte[], byte[]> targets = driver.createOutputTopic(TARGET, read, read);
        int round = config.maxFiresPerPunctuation(); // one punctuation's worth
        byte[] payload = new byte[100];
        Instant now = start;
        for (int taken = 0, rounds = 0; taken < tasks; rounds++) {
          int size = Math.min(round, tasks - taken);
          Instant due = now.plusMillis(1);
          // Every other round fires late, as a burst or a backlog does: the branches taken then
          // are compiled too.
          Duration firstStep = rounds % 2 == 1 ? LATE_BY : config.punctuateInterval();
          for (int i = 0; i < size; i++, taken++) {
            RecordHeaders headers = new RecordHeaders();
            headers.add(DelayHeaders.TARGET_TOPIC, TARGET.getBytes(StandardCharsets.UTF_8));
            headers.add(
                DelayHeaders.FIRE_AT,
                Long.toString(due.toEpochMilli()).getBytes(StandardCharsets.UTF_8));
            requests.pipeInput(
                new TestRecord<>(
                    (ID_PREFIX + taken).getBytes(StandardCharsets.UTF_8), payload, headers, now));
          }
          // Punctuations until the round has fired (a bounded number: the warm-up must end
          // whatever it meets); kdelay's fences come back as Kafka would bring them, once.
          int firedOfRound = 0;
          for (int step = 0; step < MAX_STEPS_PER_ROUND && firedOfRound < size; step++) {
            Duration advance = step == 0 ? firstStep : config.punctuateInterval();
            now = now.plus(advance);
            driver.advanceWallClockTime(advance);
            for (TestRecord<byte[], byte[]> back : fences.readRecordsToList()) {
              if (back.key() != null
                  && new String(back.key(), StandardCharsets.UTF_8).startsWith(ID_PREFIX)) {
                rerouted++; // a request, not a fence
              }
              reroute.pipeInput(back);
            }
            List<TestRecord<byte[], byte[]>> firedRecords = targets.readRecordsToList();
            firedOfRound += firedRecords.size();
            producing.add(TARGET, firedRecords);
          }
          fired += firedOfRound;
          for (String topic : driver.producedTopicNames()) {
            // The changelogs' records and the rest, which the driver keeps until read.
            producing.add(topic, driver.createOutputTopic(topic, read, read).readRecordsToList());
          }
          producing.commit();
        }
        produced = producing.produced();
      }
    } finally {
      deleteQuietly(stateDir);
    }
    return new Result(fired, rerouted, produced, Duration.ofNanos(System.nanoTime() - started));
  }

  /**
   * The warm-up's Kafka producer, wrapped as the service's stream threads' producers are, writing
   * each round's records in a transaction to a {@link ProducerSink}. A failure there is logged and
   * ends this part only: the rest of the warm-up goes on.
   */
  private static final class Producing implements AutoCloseable {

    private final ProducerSink sink;
    private Producer<byte[], byte[]> producer;
    private boolean inTransaction;

    private Producing(ProducerSink sink, Producer<byte[], byte[]> producer) {
      this.sink = sink;
      this.producer = producer;
    }

    static Producing open(DelayConfig config, DeliveryQuarantine quarantine) {
      ProducerSink sink = null;
      Producer<byte[], byte[]> producer = null;
      try {
        sink = ProducerSink.open();
        producer =
            new RescuingProducer(
                new KafkaProducer<>(
                    producerSettings(config, sink.bootstrapServers()),
                    new ByteArraySerializer(),
                    new ByteArraySerializer()),
                quarantine);
        producer.initTransactions();
        return new Producing(sink, producer);
      } catch (IOException | RuntimeException e) {
        log.warn("event=warm-up-producer-failed error={}", LogValues.quote(e));
        if (producer != null) {
          producer.close(Duration.ZERO);
        }
        return new Producing(sink, null);
      }
    }

    /** Sends records in the open transaction, beginning one if none is. */
    void add(String topic, List<TestRecord<byte[], byte[]>> records) {
      if (producer == null || records.isEmpty()) {
        return;
      }
      try {
        if (!inTransaction) {
          producer.beginTransaction();
          inTransaction = true;
        }
        for (TestRecord<byte[], byte[]> record : records) {
          producer.send(
              new ProducerRecord<>(
                  topic, null, record.timestamp(), record.key(), record.value(), record.headers()),
              (metadata, error) -> {});
        }
      } catch (RuntimeException e) {
        failed(e);
      }
    }

    void commit() {
      if (producer == null || !inTransaction) {
        return;
      }
      try {
        producer.commitTransaction();
        inTransaction = false;
      } catch (RuntimeException e) {
        failed(e);
      }
    }

    long produced() {
      return producer == null || sink == null ? 0 : sink.records();
    }

    private void failed(RuntimeException e) {
      log.warn("event=warm-up-producer-failed error={}", LogValues.quote(e));
      producer.close(Duration.ZERO);
      producer = null;
    }

    @Override
    public void close() {
      if (producer != null) {
        producer.close(Duration.ZERO);
      }
      if (sink != null) {
        sink.close();
      }
    }
  }

  /**
   * The settings of the stream threads' producers that shape their batches, with the sink as the
   * cluster: plaintext, a transactional id of the warm-up's own.
   */
  private static Map<String, Object> producerSettings(DelayConfig config, String bootstrap) {
    Properties streams = StreamsTuning.streamsProperties(config);
    Map<String, Object> settings = new HashMap<>();
    for (String key : BATCH_SETTINGS) {
      Object value = streams.getOrDefault(StreamsConfig.producerPrefix(key), streams.get(key));
      if (value != null) {
        settings.put(key, value);
      }
    }
    settings.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    settings.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "kdelay-warmup");
    settings.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 10_000);
    settings.put(ProducerConfig.CLIENT_ID_CONFIG, "kdelay-warmup");
    return settings;
  }

  /**
   * A directory of its own beside the service's state, outside its application's directory: not in
   * the OS temp directory, which Kafka Streams warns about at every start.
   */
  private static Path temporaryDirectory(Path serviceStateDir) {
    try {
      Files.createDirectories(serviceStateDir);
      return Files.createTempDirectory(serviceStateDir, "kdelay-warmup-");
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the warm-up's state directory", e);
    }
  }

  private static void deleteQuietly(Path dir) {
    try {
      Utils.delete(dir.toFile());
    } catch (IOException e) {
      // Left beside the state directory: a few MB, named kdelay-warmup-*, safe to delete.
    }
  }
}

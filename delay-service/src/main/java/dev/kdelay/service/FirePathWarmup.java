package dev.kdelay.service;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.topology.DelayConfig;
import dev.kdelay.topology.DelayMetrics;
import dev.kdelay.topology.DelayTopology;
import dev.kdelay.topology.DeliveryQuarantine;
import dev.kdelay.topology.TargetTopics;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;

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
 * written to the cluster. The Kafka producer's own code is warmed by the instance's first real
 * writes (each request it takes in writes its changelog).
 *
 * <p>It runs while Kafka Streams joins the group and restores, so it costs a restart only the CPU
 * it shares with them.
 */
final class FirePathWarmup {

  /** Punctuations a round of requests may take to fire before the warm-up goes on regardless. */
  private static final int MAX_STEPS_PER_ROUND = 20;

  /** Any name outside kdelay's own topics: the warm-up's policy allows every other. */
  private static final String TARGET = "warmup.fired";

  /** The synthetic schedule ids' prefix. */
  private static final String ID_PREFIX = "warmup-";

  private FirePathWarmup() {}

  /**
   * What a warm-up did.
   *
   * @param fired the synthetic tasks that fired
   * @param rerouted synthetic requests kdelay moved to the partition their id hashes to: none, as
   *     in production, where producers partition by the same hash
   * @param took how long it took
   */
  record Result(int fired, int rerouted, Duration took) {}

  /** Takes in and fires {@code tasks} synthetic tasks with {@code service}'s settings. */
  static Result run(DelayConfig service, int tasks) {
    long started = System.nanoTime();
    int fired = 0;
    int rerouted = 0;
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
      try (TopologyTestDriver driver =
          new TopologyTestDriver(
              DelayTopology.build(
                  config,
                  TargetTopics.UNCHECKED,
                  DelayMetrics.NOOP,
                  new DeliveryQuarantine(config)),
              config.streamsProperties(),
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
        for (int taken = 0; taken < tasks; ) {
          int size = Math.min(round, tasks - taken);
          Instant due = now.plusMillis(1);
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
            now = now.plus(config.punctuateInterval());
            driver.advanceWallClockTime(config.punctuateInterval());
            for (TestRecord<byte[], byte[]> back : fences.readRecordsToList()) {
              if (back.key() != null
                  && new String(back.key(), StandardCharsets.UTF_8).startsWith(ID_PREFIX)) {
                rerouted++; // a request, not a fence
              }
              reroute.pipeInput(back);
            }
            firedOfRound += targets.readRecordsToList().size();
          }
          fired += firedOfRound;
          dropOtherOutput(driver);
        }
      }
    } finally {
      deleteQuietly(stateDir);
    }
    return new Result(fired, rerouted, Duration.ofNanos(System.nanoTime() - started));
  }

  /** The driver keeps every record written until read: drops the changelogs' and the rest. */
  private static void dropOtherOutput(TopologyTestDriver driver) {
    ByteArrayDeserializer read = new ByteArrayDeserializer();
    for (String topic : driver.producedTopicNames()) {
      driver.createOutputTopic(topic, read, read).readRecordsToList();
    }
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

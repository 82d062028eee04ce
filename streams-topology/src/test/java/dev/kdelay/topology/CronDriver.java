package dev.kdelay.topology;

import static dev.kdelay.topology.DelayDriver.TARGET;
import static dev.kdelay.topology.DelayDriver.bytes;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;

/**
 * A {@link TopologyTestDriver} around kdelay's topology whose wall clock starts at a given instant
 * and moves in steps of any size; each step runs one punctuation.
 */
final class CronDriver implements AutoCloseable {

  private final TopologyTestDriver driver;
  private final DelayConfig config;
  private final TestInputTopic<byte[], byte[]> requests;
  private final TestOutputTopic<byte[], byte[]> fired;
  private final TestOutputTopic<byte[], byte[]> deadLetters;
  private Instant now;

  CronDriver(Path stateDir, Instant start) {
    this(stateDir, start, StreamsConfig.AT_LEAST_ONCE);
  }

  /**
   * With a processing guarantee: Kafka Streams' {@code at_least_once} or {@code exactly_once_v2}.
   */
  CronDriver(Path stateDir, Instant start, String guarantee) {
    Map<String, Object> settings = new HashMap<>();
    settings.put(DelayConfig.APPLICATION_ID_CONFIG, "kdelay-cron-test");
    settings.put(DelayConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
    settings.put(DelayConfig.STATE_DIR_CONFIG, stateDir.toString());
    this.config = new DelayConfig(settings);
    Properties props = StreamsTuning.streamsProperties(config);
    props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, guarantee);
    this.driver = new TopologyTestDriver(DelayTopology.build(config), props, start);
    this.now = start;
    ByteArraySerializer out = new ByteArraySerializer();
    ByteArrayDeserializer in = new ByteArrayDeserializer();
    this.requests = driver.createInputTopic(config.requestsTopic(), out, out);
    this.fired = driver.createOutputTopic(TARGET, in, in);
    this.deadLetters = driver.createOutputTopic(config.dlqTopic(), in, in);
  }

  /** Pipes a request stamped with the current wall-clock time. */
  void request(String id, String value, Header... headers) {
    requests.pipeInput(
        new TestRecord<>(
            bytes(id), value == null ? null : bytes(value), new RecordHeaders(headers), now));
  }

  /** Moves the wall clock in one step: one punctuation, however long the step. */
  void advance(Duration step) {
    now = now.plus(step);
    driver.advanceWallClockTime(step);
  }

  /** Moves the wall clock to an instant in steps, as a running stream thread would. */
  void runUntil(Instant until, Duration step) {
    while (now.isBefore(until)) {
      Duration left = Duration.between(now, until);
      advance(left.compareTo(step) < 0 ? left : step);
    }
  }

  /** A few punctuation intervals: enough for a catch-up that fires one entry per punctuation. */
  void catchUp() {
    for (int i = 0; i < 50; i++) {
      advance(config.punctuateInterval());
    }
  }

  /** The records fired since the last call. */
  List<TestRecord<byte[], byte[]>> fired() {
    return fired.readRecordsToList();
  }

  List<TestRecord<byte[], byte[]>> deadLetters() {
    return deadLetters.readRecordsToList();
  }

  long entries() {
    return StoredSchedules.entries(driver);
  }

  /** What the store says of an id. */
  ScheduleView view(String id) {
    return StoredSchedules.of(driver).view(id).value();
  }

  @Override
  public void close() {
    driver.close();
  }
}

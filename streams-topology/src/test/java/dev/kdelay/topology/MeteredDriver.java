package dev.kdelay.topology;

import static dev.kdelay.topology.DelayDriver.bytes;
import static dev.kdelay.topology.DelayDriver.header;

import dev.kdelay.schemas.DelayHeaders;
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
 * A {@link TopologyTestDriver} around the topology built with a metrics listener, with a movable
 * wall clock and access to the stores.
 */
final class MeteredDriver implements AutoCloseable {

  static final Instant START = DelayDriver.START;
  static final String TARGET = DelayDriver.TARGET;

  final RecordingMetrics metrics = new RecordingMetrics();
  final TopologyTestDriver driver;
  private final TestInputTopic<byte[], byte[]> requests;
  private final TestOutputTopic<byte[], byte[]> fired;
  private Instant wallClock = START;

  MeteredDriver(Path stateDir, Map<String, Object> overrides) {
    Map<String, Object> settings = new HashMap<>();
    settings.put(DelayConfig.APPLICATION_ID_CONFIG, "kdelay-metrics-test");
    settings.put(DelayConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
    settings.put(DelayConfig.STATE_DIR_CONFIG, stateDir.toString());
    settings.putAll(overrides);
    DelayConfig config = new DelayConfig(settings);
    Properties props = StreamsTuning.streamsProperties(config);
    props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
    driver =
        new TopologyTestDriver(
            DelayTopology.build(config, TargetTopics.UNCHECKED, metrics), props, START);
    ByteArraySerializer out = new ByteArraySerializer();
    requests = driver.createInputTopic(config.requestsTopic(), out, out);
    ByteArrayDeserializer in = new ByteArrayDeserializer();
    fired = driver.createOutputTopic(TARGET, in, in);
  }

  void request(String id, String value, Header... headers) {
    requests.pipeInput(
        new TestRecord<>(
            bytes(id), value == null ? null : bytes(value), new RecordHeaders(headers), wallClock));
  }

  void scheduleAt(String id, Instant due) {
    request(
        id,
        "payload of " + id,
        header(DelayHeaders.TARGET_TOPIC, TARGET),
        header(DelayHeaders.FIRE_AT, Long.toString(due.toEpochMilli())));
  }

  void cron(String id, String expression, Header... extra) {
    Header[] headers = new Header[extra.length + 2];
    headers[0] = header(DelayHeaders.TARGET_TOPIC, TARGET);
    headers[1] = header(DelayHeaders.CRON, expression);
    System.arraycopy(extra, 0, headers, 2, extra.length);
    request(id, "tick", headers);
  }

  void action(String id, String action) {
    request(id, null, header(DelayHeaders.ACTION, action));
  }

  /** Moves the wall clock in one step: one punctuation, as after a stall. */
  void advance(Duration duration) {
    wallClock = wallClock.plus(duration);
    driver.advanceWallClockTime(duration);
  }

  /** Moves the wall clock to an instant in 5 ms steps, as a running stream thread would. */
  void advanceTo(Instant instant) {
    while (wallClock.isBefore(instant)) {
      Duration step = Duration.between(wallClock, instant);
      advance(step.compareTo(Duration.ofMillis(5)) > 0 ? Duration.ofMillis(5) : step);
    }
  }

  Instant now() {
    return wallClock;
  }

  List<TestRecord<byte[], byte[]>> fired() {
    return fired.readRecordsToList();
  }

  @Override
  public void close() {
    driver.close();
  }
}

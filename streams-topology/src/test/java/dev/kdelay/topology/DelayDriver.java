package dev.kdelay.topology;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.topology.internals.delivery.DeliveryQuarantine;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;

/** A {@link TopologyTestDriver} around kdelay's topology, with a movable wall clock. */
final class DelayDriver implements AutoCloseable {

  static final Instant START = Instant.parse("2026-03-01T12:00:00Z");
  static final String TARGET = "target";

  final TopologyTestDriver driver;
  final DelayConfig config;
  private final TestInputTopic<byte[], byte[]> requests;
  private final TestInputTopic<byte[], byte[]> rerouted;
  private final Map<String, TestOutputTopic<byte[], byte[]>> outputs = new HashMap<>();
  private final Map<String, TestInputTopic<byte[], byte[]>> tenantInputs = new HashMap<>();
  private final List<TestRecord<byte[], byte[]>> rerouteOutputs = new java.util.ArrayList<>();
  private Instant wallClock = START;

  DelayDriver(Path stateDir) {
    this(stateDir, Map.of());
  }

  DelayDriver(Path stateDir, Map<String, Object> overrides) {
    this(stateDir, overrides, TargetTopics.UNCHECKED);
  }

  DelayDriver(Path stateDir, Map<String, Object> overrides, TargetTopics targetTopics) {
    this(stateDir, overrides, targetTopics, null);
  }

  /** With a quarantine of refused records; null: a fresh one of the driver's own. */
  DelayDriver(
      Path stateDir,
      Map<String, Object> overrides,
      TargetTopics targetTopics,
      DeliveryQuarantine quarantine) {
    this(stateDir, overrides, targetTopics, quarantine, StreamsConfig.AT_LEAST_ONCE);
  }

  /** A driver that runs exactly once, as the service does: each record commits a transaction. */
  static DelayDriver exactlyOnce(Path stateDir) {
    return exactlyOnce(stateDir, Map.of());
  }

  /** The same, with overrides. */
  static DelayDriver exactlyOnce(Path stateDir, Map<String, Object> overrides) {
    return new DelayDriver(
        stateDir, overrides, TargetTopics.UNCHECKED, null, StreamsConfig.EXACTLY_ONCE_V2);
  }

  private DelayDriver(
      Path stateDir,
      Map<String, Object> overrides,
      TargetTopics targetTopics,
      DeliveryQuarantine quarantine,
      String guarantee) {
    this.config = config(stateDir, overrides);
    Properties props = StreamsTuning.streamsProperties(config);
    props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, guarantee);
    DeliveryQuarantine refused = quarantine != null ? quarantine : new DeliveryQuarantine(config);
    this.driver =
        new TopologyTestDriver(
            DelayTopology.build(config, targetTopics, DelayMetrics.NOOP, refused), props, START);
    ByteArraySerializer out = new ByteArraySerializer();
    this.requests = driver.createInputTopic(config.requestsTopic(), out, out);
    this.rerouted = driver.createInputTopic(config.rerouteTopic(), out, out);
  }

  /** The configuration every driver runs with, plus overrides. */
  static DelayConfig config(Path stateDir, Map<String, Object> overrides) {
    Map<String, Object> settings = new HashMap<>();
    settings.put(DelayConfig.APPLICATION_ID_CONFIG, "kdelay-test");
    settings.put(DelayConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
    settings.put(DelayConfig.STATE_DIR_CONFIG, stateDir.toString());
    settings.putAll(overrides);
    return new DelayConfig(settings);
  }

  /** Pipes a request stamped with the current wall-clock time. */
  void request(String id, String value, Header... headers) {
    request(bytes(id), value == null ? null : bytes(value), now(), headers);
  }

  void request(byte[] key, byte[] value, Instant timestamp, Header... headers) {
    requests.pipeInput(new TestRecord<>(key, value, new RecordHeaders(headers), timestamp));
    deliverFences();
  }

  /** Pipes a request to a tenant's own request topic, stamped with the current wall-clock time. */
  void requestAs(String tenant, String id, String value, Header... headers) {
    String topic = config.tenants().named(tenant).orElseThrow().requestsTopic();
    ByteArraySerializer out = new ByteArraySerializer();
    tenantInputs
        .computeIfAbsent(topic, t -> driver.createInputTopic(t, out, out))
        .pipeInput(
            new TestRecord<>(
                bytes(id), value == null ? null : bytes(value), new RecordHeaders(headers), now()));
    deliverFences();
  }

  void rerouted(TestRecord<byte[], byte[]> record) {
    rerouted.pipeInput(record);
    deliverFences();
  }

  void scheduleAt(String id, Instant due, String value, Header... extra) {
    Header[] headers = new Header[extra.length + 2];
    headers[0] = header(DelayHeaders.TARGET_TOPIC, TARGET);
    headers[1] = header(DelayHeaders.FIRE_AT, Long.toString(due.toEpochMilli()));
    System.arraycopy(extra, 0, headers, 2, extra.length);
    request(id, value, headers);
  }

  void advance(Duration duration) {
    wallClock = wallClock.plus(duration);
    driver.advanceWallClockTime(duration);
    deliverFences();
  }

  /**
   * Exactly once, a task writes a fence to the reroute topic before its first fire and fires once
   * it read it back: what Kafka does, the driver does here. Other reroutes wait for {@link
   * #reroutes}.
   */
  private void deliverFences() {
    List<TestRecord<byte[], byte[]>> fences = new java.util.ArrayList<>();
    for (TestRecord<byte[], byte[]> record : output(config.rerouteTopic()).readRecordsToList()) {
      if (record.headers().lastHeader("kdelay-fence") != null) {
        fences.add(record);
      } else {
        rerouteOutputs.add(record);
      }
    }
    fences.forEach(rerouted::pipeInput);
  }

  /** Moves the wall clock to an instant, in small steps as a running stream thread would. */
  void advanceTo(Instant instant) {
    while (now().isBefore(instant)) {
      Duration step = Duration.between(now(), instant);
      advance(step.compareTo(Duration.ofMillis(5)) > 0 ? Duration.ofMillis(5) : step);
    }
  }

  Instant now() {
    return wallClock;
  }

  List<TestRecord<byte[], byte[]>> fired() {
    return output(TARGET).readRecordsToList();
  }

  List<TestRecord<byte[], byte[]>> deadLetters() {
    return output(config.dlqTopic()).readRecordsToList();
  }

  List<TestRecord<byte[], byte[]>> reroutes() {
    deliverFences();
    List<TestRecord<byte[], byte[]>> reroutes = List.copyOf(rerouteOutputs);
    rerouteOutputs.clear();
    return reroutes;
  }

  TestOutputTopic<byte[], byte[]> output(String topic) {
    ByteArrayDeserializer in = new ByteArrayDeserializer();
    return outputs.computeIfAbsent(topic, t -> driver.createOutputTopic(t, in, in));
  }

  static Header header(String name, String value) {
    return new org.apache.kafka.common.header.internals.RecordHeader(name, bytes(value));
  }

  static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  static String text(byte[] bytes) {
    return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
  }

  static String headerText(Headers headers, String name) {
    Header header = headers.lastHeader(name);
    return header == null ? null : text(header.value());
  }

  @Override
  public void close() {
    driver.close();
  }
}

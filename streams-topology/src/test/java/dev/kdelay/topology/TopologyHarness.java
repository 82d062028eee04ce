package dev.kdelay.topology;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.generators.GeneratedRequest;
import dev.kdelay.schemas.generators.ParseOracle;
import dev.kdelay.topology.ContractModel.DeadLetter;
import dev.kdelay.topology.ContractModel.FiredRecord;
import dev.kdelay.topology.ContractModel.Observed;
import dev.kdelay.topology.internals.delivery.DeliveryQuarantine;
import dev.kdelay.topology.internals.store.ChangeLoggingScheduleStore;
import dev.kdelay.topology.internals.store.ChangelogReplay;
import dev.kdelay.topology.internals.store.MeteredScheduleStore;
import dev.kdelay.topology.internals.store.RocksDBScheduleStore;
import dev.kdelay.topology.internals.store.ScheduleChangelog;
import dev.kdelay.topology.internals.store.ScheduleEntry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;

/**
 * kdelay's topology in a {@link TopologyTestDriver}, as property tests drive it: requests in, the
 * wall clock moved on, and everything it wrote read back after each step. It can crash: the driver
 * is thrown away and a new one, on an empty state directory, is restored from the changelog written
 * so far (compacted, as Kafka keeps it), the way a partition moves to another instance.
 */
final class TopologyHarness implements AutoCloseable {

  static final String APPLICATION = "kdelay-prop";
  static final Map<String, Integer> TARGETS = Map.of("target", 3, "target-b", 1);
  static final int MAX_PAYLOAD_BYTES = 1000;
  static final long PUNCTUATE_MS = 5;

  private final Path root;
  private final DelayConfig config;
  private final String guarantee;
  private final String changelogTopic;

  /** The changelog as compaction would keep it: each id's last record, in the order written. */
  private final Map<Bytes, TestRecord<byte[], byte[]>> changelog = new LinkedHashMap<>();

  private TopologyTestDriver driver;
  private TestInputTopic<byte[], byte[]> requests;
  private TestInputTopic<byte[], byte[]> rerouted;
  private int fencesDelivered;
  private final Map<String, TestOutputTopic<byte[], byte[]>> outputs = new HashMap<>();
  private long nowMs;
  private int incarnation;
  private int crashes;

  TopologyHarness(Path root, long startMs, String guarantee, Map<String, Object> overrides) {
    this.root = root;
    this.guarantee = guarantee;
    this.nowMs = startMs;
    Map<String, Object> settings = new HashMap<>();
    settings.put(DelayConfig.APPLICATION_ID_CONFIG, APPLICATION);
    settings.put(DelayConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
    settings.put(DelayConfig.MAX_PAYLOAD_BYTES_CONFIG, MAX_PAYLOAD_BYTES);
    settings.put(DelayConfig.PUNCTUATE_INTERVAL_CONFIG, PUNCTUATE_MS);
    settings.put(DelayConfig.MAX_FIRES_PER_PUNCTUATION_CONFIG, 100_000);
    settings.put(DelayConfig.CANCEL_RETENTION_CONFIG, 2_000L);
    settings.put(DelayConfig.FIRED_RETENTION_CONFIG, 2_000L);
    settings.put(DelayConfig.MISFIRE_THRESHOLD_CONFIG, 1_500L);
    settings.put(DelayConfig.CATCH_UP_WINDOW_CONFIG, 6_000L);
    settings.putAll(overrides);
    settings.put(DelayConfig.STATE_DIR_CONFIG, root.toString());
    this.config = new DelayConfig(settings);
    this.changelogTopic = APPLICATION + "-" + DelayTopology.SCHEDULES_STORE + "-changelog";
    start();
  }

  /** The settings the model of this harness needs. */
  ContractModel.Config modelConfig() {
    return new ContractModel.Config(
        config.cancelRetentionMs(),
        config.firedRetentionMs(),
        config.misfireThresholdMs(),
        config.catchUpWindowMs(),
        config.horizonMs(),
        TARGETS,
        Set.of(config.requestsTopic(), config.dlqTopic(), config.rerouteTopic()),
        APPLICATION + "-");
  }

  /** The limits requests are rendered and judged with. */
  ParseOracle.Limits limits() {
    return new ParseOracle.Limits(
        config.maxIdBytes(),
        config.maxPayloadBytes(),
        config.maxHeaders(),
        config.horizonMs(),
        config.maxClockSkewMs());
  }

  private void start() {
    Path dir = root.resolve("incarnation-" + incarnation++);
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Properties props = StreamsTuning.streamsProperties(config);
    props.put(StreamsConfig.STATE_DIR_CONFIG, dir.toString());
    props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, guarantee);
    TargetTopics topics = new SlowLookUps();
    driver =
        new TopologyTestDriver(
            DelayTopology.build(config, topics, DelayMetrics.NOOP, new DeliveryQuarantine(config)),
            props,
            Instant.ofEpochMilli(nowMs));
    ByteArraySerializer out = new ByteArraySerializer();
    requests = driver.createInputTopic(config.requestsTopic(), out, out);
    rerouted = driver.createInputTopic(config.rerouteTopic(), out, out);
    outputs.clear();
    ChangelogReplay.restore(store(), List.copyOf(changelog.values()));
  }

  long now() {
    return nowMs;
  }

  int crashes() {
    return crashes;
  }

  MeteredScheduleStore store() {
    return StoredSchedules.of(driver);
  }

  /** Sends a request and returns what kdelay wrote in answer. */
  Observed send(GeneratedRequest request) {
    requests.pipeInput(
        new TestRecord<>(
            request.key(),
            request.value(),
            new RecordHeaders(request.headers().toArray(Header[]::new)),
            Instant.ofEpochMilli(request.timestamp())));
    return observe();
  }

  /** Moves the wall clock on by {@code ms} (one punctuation) and returns what kdelay wrote. */
  Observed advance(long ms) {
    nowMs += ms;
    driver.advanceWallClockTime(java.time.Duration.ofMillis(ms));
    return observe();
  }

  /** Crashes: a new driver on an empty state directory, restored from the changelog. */
  void crash() {
    readChangelog();
    driver.close();
    crashes++;
    compact();
    start();
  }

  /**
   * Drops tombstones as compaction does once {@code delete.retention.ms} passed: plain ones at once
   * (a restore into an empty store needs none), a marker's ten seconds after it expired (kdelay
   * keeps the changelog's delete retention above the markers', so a restore soon after an expiry
   * still brings the marker back, expired).
   */
  private void compact() {
    changelog
        .values()
        .removeIf(
            record -> {
              if (record.value() != null) {
                return false;
              }
              Header marker = record.headers().lastHeader(ScheduleChangelog.MARKER_HEADER);
              return marker == null
                  || ScheduleEntry.decode(marker.value()).value().timeMs() < nowMs - 10_000;
            });
  }

  /**
   * Damages what the store holds for an id, in the store and its changelog alike (a corrupted
   * record, or one written by a newer kdelay): the entry's header when {@code headerToo}, else its
   * stored task only.
   */
  void damage(String id, boolean headerToo, byte[] garbage) {
    MeteredScheduleStore store = store();
    RocksDBScheduleStore rocksDb = ((ChangeLoggingScheduleStore) store.bytes()).wrapped();
    byte[] idBytes = id.getBytes(StandardCharsets.UTF_8);
    byte[] previous = rocksDb.get(idBytes);
    if (previous == null) {
      return;
    }
    if (!headerToo
        && !(ScheduleEntry.decode(previous) instanceof Decoded.Readable<ScheduleEntry> live
            && !live.value().state().marker())) {
      return; // only a live entry has a task to damage
    }
    byte[] damaged;
    if (headerToo) {
      damaged = garbage.length >= 2 && garbage[0] == 2 ? new byte[] {9} : garbage;
    } else {
      int header = ScheduleEntry.FORMAT_3_HEADER_BYTES;
      damaged = java.util.Arrays.copyOf(previous, header + Math.max(1, garbage.length));
      System.arraycopy(garbage, 0, damaged, header, garbage.length);
      if (garbage.length == 0 || garbage[0] == 1) {
        damaged[header] = (byte) 0xFF; // an unknown codec version: never a task by chance
      }
    }
    readChangelog();
    rocksDb.write(idBytes, previous, damaged);
    RecordHeaders headers = new RecordHeaders();
    headers.add(new RecordHeader(ScheduleChangelog.REPLACES_HEADER, new byte[0]));
    changelog.remove(Bytes.wrap(idBytes));
    changelog.put(
        Bytes.wrap(idBytes),
        new TestRecord<>(idBytes, damaged, headers, Instant.ofEpochMilli(nowMs)));
  }

  private Observed observe() {
    int fencesBefore = fencesDelivered;
    List<DeadLetter> deadLetters = new ArrayList<>();
    for (TestRecord<byte[], byte[]> record : output(config.dlqTopic()).readRecordsToList()) {
      deadLetters.add(
          new DeadLetter(
              record.key(),
              header(record, DelayHeaders.ERROR),
              header(record, DelayHeaders.ID),
              header(record, DelayHeaders.DUE_AT)));
      if (record.timestamp() < 0) {
        throw new AssertionError("a dead letter stamped " + record.timestamp());
      }
    }
    List<FiredRecord> fires = new ArrayList<>();
    for (String topic : TARGETS.keySet()) {
      for (TestRecord<byte[], byte[]> record : output(topic).readRecordsToList()) {
        fires.add(
            new FiredRecord(
                topic,
                record.key(),
                record.value(),
                List.of(record.headers().toArray()),
                record.timestamp()));
      }
    }
    for (TestRecord<byte[], byte[]> reroute : output(config.rerouteTopic()).readRecordsToList()) {
      // Exactly once, a task fences itself before its first fire (TaskFence): the fence comes
      // back through the reroute topic, as Kafka would bring it. Nothing else is rerouted here.
      if (reroute.headers().lastHeader("kdelay-waiting") != null) {
        continue; // waits for its topic's look-up: the test driver brings it back by itself
      }
      if (reroute.headers().lastHeader("kdelay-fence") == null) {
        throw new AssertionError("one partition reroutes nothing but fences and waits: " + reroute);
      }
      rerouted.pipeInput(reroute);
      fencesDelivered++;
    }
    readChangelog();
    return new Observed(deadLetters, fires, fencesDelivered > fencesBefore);
  }

  private void readChangelog() {
    for (TestRecord<byte[], byte[]> record : output(changelogTopic).readRecordsToList()) {
      if (record.timestamp() < 0) {
        throw new AssertionError("a changelog record stamped " + record.timestamp());
      }
      Bytes key = Bytes.wrap(record.key());
      changelog.remove(key);
      changelog.put(key, record);
    }
  }

  private TestOutputTopic<byte[], byte[]> output(String topic) {
    ByteArrayDeserializer in = new ByteArrayDeserializer();
    return outputs.computeIfAbsent(topic, t -> driver.createOutputTopic(t, in, in));
  }

  private static String header(TestRecord<byte[], byte[]> record, String name) {
    Header header = record.headers().lastHeader(name);
    return header == null || header.value() == null
        ? null
        : new String(header.value(), StandardCharsets.UTF_8);
  }

  @Override
  public void close() {
    driver.close();
  }

  /**
   * The cluster as a new instance meets it: each target topic is looked up anew after every crash,
   * and the first two requests that ask find the look-up under way, so they wait aside. The
   * contract must not tell.
   */
  private static final class SlowLookUps implements TargetTopics {

    private final Map<String, Integer> asked = new HashMap<>();

    @Override
    public TargetTopic lookUp(String topic) {
      throw new AssertionError("a stream thread waited for the look-up of " + topic);
    }

    @Override
    public TargetTopic cached(String topic) {
      return answer(topic);
    }

    @Override
    public Optional<TargetTopic> known(String topic) {
      return asked.merge(topic, 1, Integer::sum) <= 2
          ? Optional.empty()
          : Optional.of(answer(topic));
    }

    private static TargetTopic answer(String topic) {
      return TARGETS.containsKey(topic)
          ? TargetTopic.present(TARGETS.get(topic))
          : TargetTopic.ABSENT;
    }
  }
}

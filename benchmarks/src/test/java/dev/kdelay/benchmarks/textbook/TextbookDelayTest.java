package dev.kdelay.benchmarks.textbook;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TextbookDelayTest {

  private static final String REQUESTS = "requests";
  private static final String TARGET = "order-timeouts";
  private static final String APPLICATION = "textbook-test";
  private static final long START_MS = 1_760_000_000_000L;
  private static final long FIRED_MS = START_MS + 60_000;
  private static final Duration TICK = TextbookDelay.PUNCTUATE_INTERVAL;

  @TempDir Path stateDir;

  private TopologyTestDriver driver;
  private TestInputTopic<byte[], byte[]> requests;
  private TestOutputTopic<byte[], byte[]> fired;

  @BeforeEach
  void startDriver() {
    Properties props = new Properties();
    props.put(StreamsConfig.APPLICATION_ID_CONFIG, APPLICATION);
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
    props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
    Clock clock = Clock.fixed(Instant.ofEpochMilli(FIRED_MS), ZoneOffset.UTC);
    driver =
        new TopologyTestDriver(
            TextbookDelay.topology(REQUESTS, clock), props, Instant.ofEpochMilli(START_MS));
    requests =
        driver.createInputTopic(REQUESTS, new ByteArraySerializer(), new ByteArraySerializer());
    fired =
        driver.createOutputTopic(TARGET, new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }

  @AfterEach
  void closeDriver() {
    driver.close();
  }

  @Test
  void shouldFireARequestOnceWhenDueWithItsIdPayloadCarriedHeadersAndTimes() {
    // given
    RecordHeaders headers = new RecordHeaders();
    headers.add("trace-id", utf8("abc"));
    headers.add(DelayHeaders.TARGET_TOPIC, utf8(TARGET));
    headers.add(DelayHeaders.FIRE_AT, utf8(Long.toString(START_MS + 20)));
    requests.pipeInput(new TestRecord<>(utf8("order-42"), utf8("payload"), headers, START_MS));

    // when
    driver.advanceWallClockTime(TICK);

    // then
    assertThat(fired.isEmpty()).isTrue();

    // when
    driver.advanceWallClockTime(Duration.ofMillis(20));
    driver.advanceWallClockTime(TICK);

    // then
    List<TestRecord<byte[], byte[]>> out = fired.readRecordsToList();
    assertThat(out).hasSize(1);
    TestRecord<byte[], byte[]> record = out.get(0);
    assertThat(text(record.key())).isEqualTo("order-42");
    assertThat(text(record.value())).isEqualTo("payload");
    assertThat(header(record, "trace-id")).isEqualTo("abc");
    assertThat(header(record, DelayHeaders.DUE_AT)).isEqualTo(Long.toString(START_MS + 20));
    assertThat(header(record, DelayHeaders.FIRED_AT)).isEqualTo(Long.toString(FIRED_MS));
    assertThat(record.headers().lastHeader(DelayHeaders.FIRE_AT)).isNull();
    assertThat(record.headers().lastHeader(DelayHeaders.TARGET_TOPIC)).isNull();
    assertThat(pendingEntries()).isZero();
  }

  @Test
  void shouldWriteAPutAndATombstoneToTheChangelogPerRequest() {
    // given
    request("order-1", START_MS);

    // when
    driver.advanceWallClockTime(TICK);

    // then
    List<TestRecord<byte[], byte[]>> changelog =
        driver
            .createOutputTopic(
                APPLICATION + "-" + TextbookDelay.STORE + "-changelog",
                new ByteArrayDeserializer(),
                new ByteArrayDeserializer())
            .readRecordsToList();
    assertThat(changelog).hasSize(2);
    assertThat(changelog.get(0).value()).isNotNull();
    assertThat(changelog.get(1).value()).isNull();
    assertThat(changelog.get(1).key()).isEqualTo(changelog.get(0).key());
  }

  @Test
  void shouldFireInDueOrderAndAtMostTheCapPerPunctuation() {
    // given more requests than one punctuation fires, sent latest due first
    int count = TextbookDelay.MAX_FIRES_PER_PUNCTUATION + 1;
    for (int i = count - 1; i >= 0; i--) {
      request("order-" + i, START_MS - count + i);
    }

    // when
    driver.advanceWallClockTime(TICK);

    // then
    List<TestRecord<byte[], byte[]>> first = fired.readRecordsToList();
    assertThat(first).hasSize(TextbookDelay.MAX_FIRES_PER_PUNCTUATION);
    assertThat(text(first.get(0).key())).isEqualTo("order-0");
    assertThat(text(first.get(first.size() - 1).key())).isEqualTo("order-" + (count - 2));

    // when
    driver.advanceWallClockTime(TICK);

    // then
    assertThat(fired.readRecordsToList())
        .extracting(record -> text(record.key()))
        .containsExactly("order-" + (count - 1));
    assertThat(pendingEntries()).isZero();
  }

  @Test
  void shouldFireARequestDueBeforeWhereTheLastScanEnded() {
    // given a scan that has moved past START_MS + 1,000
    request("later", START_MS + 1_000);
    driver.advanceWallClockTime(Duration.ofMillis(1_000));
    driver.advanceWallClockTime(TICK);
    assertThat(fired.readRecordsToList()).hasSize(1);

    // when a request arrives that is due before that
    request("overdue", START_MS + 10);
    request("not-yet", START_MS + 60_000);
    driver.advanceWallClockTime(TICK);

    // then it fires at the next punctuation, and only it
    assertThat(fired.readRecordsToList())
        .extracting(record -> text(record.key()))
        .containsExactly("overdue");
    assertThat(pendingEntries()).isEqualTo(1);
  }

  private void request(String id, long dueMs) {
    RecordHeaders headers = new RecordHeaders();
    headers.add(DelayHeaders.TARGET_TOPIC, utf8(TARGET));
    headers.add(DelayHeaders.FIRE_AT, utf8(Long.toString(dueMs)));
    requests.pipeInput(new TestRecord<>(utf8(id), utf8("payload"), headers, START_MS));
  }

  private long pendingEntries() {
    KeyValueStore<Bytes, byte[]> store = driver.getKeyValueStore(TextbookDelay.STORE);
    long entries = 0;
    try (KeyValueIterator<Bytes, byte[]> all = store.all()) {
      for (; all.hasNext(); all.next()) {
        entries++;
      }
    }
    return entries;
  }

  private static String header(TestRecord<byte[], byte[]> record, String name) {
    return text(record.headers().lastHeader(name).value());
  }

  private static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static String text(byte[] bytes) {
    return new String(bytes, StandardCharsets.UTF_8);
  }
}

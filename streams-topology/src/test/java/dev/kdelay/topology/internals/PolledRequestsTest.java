package dev.kdelay.topology.internals;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.TenantIds;
import dev.kdelay.topology.DelayConfig;
import dev.kdelay.topology.StreamsTuning;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;

/** What a stream thread read and has not processed, as its fires ask about it. */
class PolledRequestsTest {

  private static final TopicPartition REQUESTS = new TopicPartition("requests", 0);
  private static final TopicPartition REROUTED = new TopicPartition("requests-rerouted", 0);

  private final PolledRequests.Buffer buffer = new PolledRequests.Buffer();

  @Test
  void shouldTellAnIdReadUntilItsOffsetIsProcessed() {
    buffer.polled(poll(REQUESTS, 10, "a", "b", "a"), 0);

    assertThat(buffer.hasRequestFor("a")).isTrue();
    assertThat(buffer.hasRequestFor("b")).isTrue();
    assertThat(buffer.hasRequestFor("c")).isFalse();

    buffer.processed(REQUESTS, 10);
    assertThat(buffer.hasRequestFor("a")).as("its second request is still unread").isTrue();
    buffer.processed(REQUESTS, 11);
    assertThat(buffer.hasRequestFor("b")).isFalse();
    assertThat(buffer.hasRequestFor("a")).isTrue();
    buffer.processed(REQUESTS, 12);
    assertThat(buffer.hasRequestFor("a")).isFalse();
    assertThat(buffer.size()).isZero();
  }

  @Test
  void shouldGiveTheKeysReadAheadOfAnOffsetInOrderAtMostAGivenNumber() {
    buffer.polled(poll(REQUESTS, 10, "a", "b", "c", "d"), 0);
    buffer.polled(poll(REROUTED, 10, "x"), 0);

    PolledRequests.Ahead ahead = buffer.ahead(REQUESTS, 11, 2);

    assertThat(ahead.keys()).extracting(PolledRequestsTest::text).containsExactly("b", "c");
    assertThat(ahead.lastOffset()).isEqualTo(12);
    assertThat(buffer.ahead(REQUESTS, 13, 10).keys())
        .extracting(PolledRequestsTest::text)
        .containsExactly("d");
    assertThat(buffer.ahead(REQUESTS, 14, 10)).isEqualTo(PolledRequests.Ahead.NOTHING);
    assertThat(buffer.ahead(new TopicPartition("requests", 1), 0, 10).keys()).isEmpty();
    assertThat(buffer.size()).as("reading ahead forgets nothing").isEqualTo(5);
  }

  @Test
  void shouldKeepThePartitionsApart() {
    buffer.polled(poll(REQUESTS, 5, "a"), 0);
    buffer.polled(poll(REROUTED, 5, "a"), 0);

    buffer.processed(REQUESTS, 5);

    assertThat(buffer.hasRequestFor("a")).as("its copy on the reroute topic").isTrue();
    buffer.processed(REROUTED, 7);
    assertThat(buffer.hasRequestFor("a")).isFalse();
  }

  @Test
  void shouldForgetWhatWasThrownAwayWhenAPartitionIsReadAgainFromAnEarlierOffset() {
    buffer.polled(poll(REQUESTS, 0, "a", "b", "c"), 0);

    // when: an aborted transaction rewinds the consumer to offset 1
    buffer.polled(poll(REQUESTS, 1, "b"), 0);

    // then: c (offset 2) was thrown away and b is noted once
    assertThat(buffer.hasRequestFor("c")).isFalse();
    assertThat(buffer.size()).isEqualTo(2);
    buffer.processed(REQUESTS, 1);
    assertThat(buffer.hasRequestFor("b")).isFalse();
  }

  @Test
  void shouldForgetAClosedTasksPartitionAndRecordsNeverProcessed() {
    buffer.polled(poll(REQUESTS, 0, "a"), 0);
    buffer.polled(poll(REROUTED, 0, "b"), 5);

    buffer.forget(REQUESTS);
    assertThat(buffer.hasRequestFor("a")).isFalse();

    buffer.expire(5 + PolledRequests.STALE_NANOS);
    assertThat(buffer.hasRequestFor("b")).as("not stale yet").isTrue();
    buffer.expire(6 + PolledRequests.STALE_NANOS);
    assertThat(buffer.hasRequestFor("b")).isFalse();
    assertThat(buffer.size()).isZero();
  }

  @Test
  void shouldNoteThroughTheInterceptorOnTheThreadThatPolls() throws Exception {
    PolledRequests interceptor = new PolledRequests();
    ConsumerRecords<byte[], byte[]> records = poll(REQUESTS, 0, "mine");

    assertThat(interceptor.onConsume(records)).isSameAs(records);

    assertThat(PolledRequests.ofThisThread().hasRequestFor("mine")).isTrue();
    boolean[] seenElsewhere = new boolean[1];
    Thread other =
        new Thread(() -> seenElsewhere[0] = PolledRequests.ofThisThread().hasRequestFor("mine"));
    other.start();
    other.join();
    assertThat(seenElsewhere[0]).isFalse();
    PolledRequests.ofThisThread().forget(REQUESTS);
  }

  @Test
  void shouldQualifyATenantsRequestsWithTheSettingsKdelayGivesTheMainConsumer() {
    // given: the main consumer's configuration a deployment with tenants gets, as Kafka Streams
    // derives it, handed to the interceptor as the consumer hands it
    Map<String, Object> settings = new java.util.HashMap<>();
    settings.put(DelayConfig.APPLICATION_ID_CONFIG, "kdelay-test");
    settings.put(DelayConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
    settings.put(DelayConfig.TENANTS_CONFIG, "teama,teamb");
    Map<String, Object> consumer =
        new StreamsConfig(StreamsTuning.streamsProperties(new DelayConfig(settings)))
            .getMainConsumerConfigs("kdelay-test", "c", 0);
    PolledRequests interceptor = new PolledRequests();
    interceptor.configure(consumer);
    TopicPartition teamas = new TopicPartition("delay-requests.teama", 0);

    // when: a poll reads teama's request for x
    interceptor.onConsume(poll(teamas, 0, "x"));

    // then: it holds teama's x, not the shared namespace's or teamb's
    assertThat(PolledRequests.ofThisThread().hasRequestFor(TenantIds.qualified("teama", "x")))
        .isTrue();
    assertThat(PolledRequests.ofThisThread().hasRequestFor("x")).isFalse();
    assertThat(PolledRequests.ofThisThread().hasRequestFor(TenantIds.qualified("teamb", "x")))
        .isFalse();
    PolledRequests.ofThisThread().forget(teamas);
  }

  private static ConsumerRecords<byte[], byte[]> poll(
      TopicPartition partition, long firstOffset, String... keys) {
    List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
    for (int i = 0; i < keys.length; i++) {
      records.add(
          new ConsumerRecord<>(
              partition.topic(),
              partition.partition(),
              firstOffset + i,
              keys[i].getBytes(StandardCharsets.UTF_8),
              new byte[0]));
    }
    Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> byPartition = new LinkedHashMap<>();
    byPartition.put(partition, records);
    return new ConsumerRecords<>(byPartition, Map.of());
  }

  private static String text(byte[] bytes) {
    return new String(bytes, StandardCharsets.UTF_8);
  }
}

package dev.kdelay.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.topology.internals.PolledRequests;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;

class StreamsTuningTest {

  private static final String LINGER =
      StreamsConfig.producerPrefix(ProducerConfig.LINGER_MS_CONFIG);

  @Test
  void shouldLingerOnlyUnderExactlyOnceWhereTheCommitFlushesAnyway() {
    assertThat(streams(Map.of()).get(LINGER)).isEqualTo(100);
    assertThat(
            streams(Map.of(DelayConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE))
                .get(LINGER))
        .isEqualTo(0);
  }

  @Test
  void shouldRetryRefusedProduceRequestsWithinTensOfMillisecondsUnlessTold() {
    assertThat(streams(Map.of()).get(CommonClientConfigs.RETRY_BACKOFF_MS_CONFIG)).isEqualTo(20);
    assertThat(streams(Map.of()).get(CommonClientConfigs.RETRY_BACKOFF_MAX_MS_CONFIG))
        .isEqualTo(100);
    assertThat(
            streams(Map.of(CommonClientConfigs.RETRY_BACKOFF_MAX_MS_CONFIG, "500"))
                .get(CommonClientConfigs.RETRY_BACKOFF_MAX_MS_CONFIG))
        .isEqualTo("500");
  }

  @Test
  void shouldLetAPassThroughPropertyWinOverKdelaysOwn() {
    assertThat(streams(Map.of(LINGER, "7")).get(LINGER)).isEqualTo("7");
  }

  @Test
  void shouldGiveTheClientsKdelaysFailoverSettingsWhenNoneArePassedThrough() {
    StreamsConfig config = new StreamsConfig(streams(Map.of()));

    Map<String, Object> consumer = config.getMainConsumerConfigs("kdelay-test", "c", 0);
    assertThat(consumer.get(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG)).isEqualTo(6_000);
    assertThat(consumer.get(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG)).isEqualTo(1_500);
    assertThat(config.getProducerConfigs("p").get(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG))
        .isEqualTo(20_000);
    Map<String, Object> restore = config.getRestoreConsumerConfigs("r");
    assertThat(restore.get(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG)).isEqualTo(100);
    assertThat(consumer).doesNotContainKey(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG);
    // a restore reads in large fetches and polls; the main consumer keeps the defaults
    assertThat(restore.get(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG))
        .isEqualTo(8 * 1024 * 1024);
    assertThat(restore.get(ConsumerConfig.MAX_POLL_RECORDS_CONFIG)).isEqualTo(10_000);
    assertThat(consumer).doesNotContainKey(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG);
    assertThat(consumer.get(ConsumerConfig.MAX_POLL_RECORDS_CONFIG)).isEqualTo(1000);
    // a request to a broker that vanished is given up after 10 s, not Kafka's 30
    assertThat(consumer.get(CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG)).isEqualTo(10_000);
    assertThat(restore.get(CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG)).isEqualTo(10_000);
    assertThat(config.getProducerConfigs("p").get(CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG))
        .isEqualTo(10_000);
    assertThat(config.getAdminConfigs("a").get(CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG))
        .isEqualTo(10_000);
  }

  @Test
  void shouldLetAPlainPassThroughKeyWinOverTheFailoverSettingsWhenGiven() {
    // given: the keys as DELAY_KAFKA_SESSION_TIMEOUT_MS etc. pass them, without a client prefix
    StreamsConfig config =
        new StreamsConfig(
            streams(
                Map.of(
                    ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "3000",
                    ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "1000",
                    ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "3000",
                    CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG, "30000",
                    ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "200",
                    ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, "2097152",
                    ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "500")));

    // then: Kafka Streams would let a prefixed default of kdelay's win over them; it must not
    Map<String, Object> consumer = config.getMainConsumerConfigs("kdelay-test", "c", 0);
    assertThat(consumer.get(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG)).isEqualTo("3000");
    assertThat(consumer.get(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG)).isEqualTo("1000");
    assertThat(config.getProducerConfigs("p").get(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG))
        .isEqualTo("3000");
    Map<String, Object> restore = config.getRestoreConsumerConfigs("r");
    assertThat(restore.get(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG)).isEqualTo("200");
    assertThat(restore.get(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG)).isEqualTo("2097152");
    assertThat(restore.get(ConsumerConfig.MAX_POLL_RECORDS_CONFIG)).isEqualTo("500");
    assertThat(consumer.get(ConsumerConfig.MAX_POLL_RECORDS_CONFIG)).isEqualTo("500");
    assertThat(config.getProducerConfigs("p").get(CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG))
        .isEqualTo("30000");
  }

  @Test
  void shouldGiveOnlyTheMainConsumerTheInterceptorThatTellsFiresOfRequestsAlreadyRead() {
    StreamsConfig config = new StreamsConfig(streams(Map.of()));

    assertThat(interceptors(config.getMainConsumerConfigs("kdelay-test", "c", 0)))
        .isEqualTo(PolledRequests.class.getName());
    assertThat(config.getRestoreConsumerConfigs("r"))
        .doesNotContainKey(ConsumerConfig.INTERCEPTOR_CLASSES_CONFIG);
    assertThat(config.getProducerConfigs("p"))
        .doesNotContainKey(ProducerConfig.INTERCEPTOR_CLASSES_CONFIG);
  }

  @Test
  void shouldKeepTheMainConsumerInterceptorsAUserPassesThroughAndAddKdelaysLast() {
    String key = ConsumerConfig.INTERCEPTOR_CLASSES_CONFIG;
    String ours = PolledRequests.class.getName();

    // a plain key, a consumer-prefixed one, and the main consumer's own, each winning over the last
    assertThat(interceptors(mainConsumer(Map.of(key, "com.example.A, com.example.B"))))
        .isEqualTo("com.example.A,com.example.B," + ours);
    assertThat(
            interceptors(
                mainConsumer(
                    Map.of(
                        key, "com.example.A", StreamsConfig.consumerPrefix(key), "com.example.C"))))
        .isEqualTo("com.example.C," + ours);
    assertThat(
            interceptors(
                mainConsumer(
                    Map.of(
                        StreamsConfig.consumerPrefix(key),
                        "com.example.C",
                        StreamsConfig.mainConsumerPrefix(key),
                        "com.example.D"))))
        .isEqualTo("com.example.D," + ours);
  }

  private static Map<String, Object> mainConsumer(Map<String, Object> overrides) {
    return new StreamsConfig(streams(overrides)).getMainConsumerConfigs("kdelay-test", "c", 0);
  }

  private static Object interceptors(Map<String, Object> consumer) {
    return consumer.get(ConsumerConfig.INTERCEPTOR_CLASSES_CONFIG);
  }

  private static Properties streams(Map<String, Object> overrides) {
    Map<String, Object> settings = new HashMap<>();
    settings.put(DelayConfig.APPLICATION_ID_CONFIG, "kdelay-test");
    settings.put(DelayConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
    settings.putAll(overrides);
    return StreamsTuning.streamsProperties(new DelayConfig(settings));
  }
}

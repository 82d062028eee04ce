package dev.kdelay.service.warmup;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

class ProducerSinkTest {

  @Test
  void shouldAcceptATransactionalProducersRecordsAndCountThem() throws Exception {
    try (ProducerSink sink = ProducerSink.open();
        KafkaProducer<byte[], byte[]> producer =
            new KafkaProducer<>(
                Map.of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                    sink.bootstrapServers(),
                    ProducerConfig.TRANSACTIONAL_ID_CONFIG,
                    "sink-test",
                    ProducerConfig.MAX_BLOCK_MS_CONFIG,
                    10_000),
                new ByteArraySerializer(),
                new ByteArraySerializer())) {
      // given a transactional producer that the sink answered
      producer.initTransactions();

      // when it writes two transactions of records to two topics
      List<Future<RecordMetadata>> sent = new ArrayList<>();
      for (int transaction = 0; transaction < 2; transaction++) {
        producer.beginTransaction();
        for (int i = 0; i < 50; i++) {
          String topic = i % 2 == 0 ? "orders" : "orders-changelog";
          sent.add(producer.send(new ProducerRecord<>(topic, ("k" + i).getBytes(), new byte[10])));
        }
        producer.commitTransaction();
      }

      // then every send succeeded, with offsets counted per partition, and the sink counted them
      long highest = -1;
      for (Future<RecordMetadata> future : sent) {
        RecordMetadata metadata = future.get(10, TimeUnit.SECONDS);
        assertThat(metadata.partition()).isBetween(0, ProducerSink.PARTITIONS - 1);
        highest = Math.max(highest, metadata.offset());
      }
      assertThat(highest).isPositive();
      assertThat(sink.records()).isEqualTo(100);
      producer.close(Duration.ofSeconds(5));
    }
  }
}

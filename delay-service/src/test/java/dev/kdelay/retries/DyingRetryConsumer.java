package dev.kdelay.retries;

import dev.kdelay.client.retry.RetryHandler;
import dev.kdelay.client.retry.RetryPolicy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A consumer-producer loop, in a JVM of its own, that fails on the first record of partition 0,
 * sends its retry inside a transaction, says {@value #SENT} on stdout, and waits to be killed:
 * neither its transaction nor its offsets are ever committed or aborted by it.
 *
 * <p>It reads its partition by assignment, not as a group member, so the group has no member left
 * to wait for once the process is gone: the replacement joins at once, as it would after the dead
 * member's session expired.
 *
 * <p>Arguments: bootstrap servers, topic, kdelay's request topic, group, transactional id, the
 * retry's initial delay in ms.
 */
final class DyingRetryConsumer {

  /** What it prints once the retry is in the log, in its open transaction. */
  static final String SENT = "RETRY-SENT";

  private DyingRetryConsumer() {}

  public static void main(String[] args) throws Exception {
    String bootstrap = args[0];
    String topic = args[1];
    String requestsTopic = args[2];
    String group = args[3];
    String transactionalId = args[4];
    Duration initialDelay = Duration.ofMillis(Long.parseLong(args[5]));

    KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(
            Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId),
            new ByteArraySerializer(),
            new ByteArraySerializer());
    producer.initTransactions();
    RetryHandler retries =
        RetryHandler.builder(producer, group)
            .requestsTopic(requestsTopic)
            .policy(RetryPolicy.builder().initialDelay(initialDelay).jitter(0).build())
            .build();
    KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(
            Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrap,
                ConsumerConfig.GROUP_ID_CONFIG,
                group,
                ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                "read_committed",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
                false,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                "earliest"),
            new ByteArrayDeserializer(),
            new ByteArrayDeserializer());
    TopicPartition partition = new TopicPartition(topic, 0);
    consumer.assign(List.of(partition));
    consumer.seekToBeginning(List.of(partition));
    ConsumerRecord<byte[], byte[]> record = null;
    while (record == null) {
      ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
      if (!records.isEmpty()) {
        record = records.iterator().next();
      }
    }

    producer.beginTransaction();
    retries.handle(record, new IllegalStateException("first try"));
    producer.flush();
    System.out.println(SENT + " offset=" + record.offset());
    System.out.flush();
    new CountDownLatch(1).await(); // until SIGKILL
  }
}

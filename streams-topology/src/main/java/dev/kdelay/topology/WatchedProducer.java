package dev.kdelay.topology;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metrics.KafkaMetric;

/**
 * A producer whose failed sends are reported to the {@link DeliveryQuarantine} with their records,
 * before the caller's callback runs: each of them, not only the first of a transaction, and also
 * those Kafka Streams treats as fatal and never shows its handler. Everything else passes through.
 */
final class WatchedProducer implements Producer<byte[], byte[]> {

  private final Producer<byte[], byte[]> producer;
  private final DeliveryQuarantine quarantine;

  WatchedProducer(Producer<byte[], byte[]> producer, DeliveryQuarantine quarantine) {
    this.producer = producer;
    this.quarantine = quarantine;
  }

  @Override
  public Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record) {
    return send(record, null);
  }

  @Override
  public Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record, Callback callback) {
    return producer.send(
        record,
        (metadata, exception) -> {
          if (exception != null) {
            try {
              quarantine.recordRefused(record, exception);
            } catch (RuntimeException e) {
              // Never keep the caller's callback from running: it decides the transaction's fate.
            }
          }
          if (callback != null) {
            callback.onCompletion(metadata, exception);
          }
        });
  }

  @Override
  public void initTransactions() {
    producer.initTransactions();
  }

  @Override
  public void beginTransaction() {
    producer.beginTransaction();
  }

  @Override
  public void sendOffsetsToTransaction(
      Map<TopicPartition, OffsetAndMetadata> offsets, ConsumerGroupMetadata groupMetadata) {
    producer.sendOffsetsToTransaction(offsets, groupMetadata);
  }

  @Override
  public void commitTransaction() {
    producer.commitTransaction();
  }

  @Override
  public void abortTransaction() {
    producer.abortTransaction();
  }

  @Override
  public void registerMetricForSubscription(KafkaMetric metric) {
    producer.registerMetricForSubscription(metric);
  }

  @Override
  public void unregisterMetricFromSubscription(KafkaMetric metric) {
    producer.unregisterMetricFromSubscription(metric);
  }

  @Override
  public void flush() {
    producer.flush();
  }

  @Override
  public List<PartitionInfo> partitionsFor(String topic) {
    return producer.partitionsFor(topic);
  }

  @Override
  public Map<MetricName, ? extends Metric> metrics() {
    return producer.metrics();
  }

  @Override
  public Uuid clientInstanceId(Duration timeout) {
    return producer.clientInstanceId(timeout);
  }

  @Override
  public void close() {
    producer.close();
  }

  @Override
  public void close(Duration timeout) {
    producer.close(timeout);
  }
}

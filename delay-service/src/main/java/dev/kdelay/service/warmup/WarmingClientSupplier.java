package dev.kdelay.service.warmup;

import dev.kdelay.schemas.LogValues;
import dev.kdelay.service.topics.AdminTargetTopics;
import dev.kdelay.service.topics.TopicMetadataWarmer;
import dev.kdelay.topology.internals.delivery.DeliveryQuarantine;
import dev.kdelay.topology.internals.delivery.RescuingProducer;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.utils.ThreadUtils;
import org.apache.kafka.streams.KafkaClientSupplier;
import org.apache.kafka.streams.processor.internals.DefaultKafkaClientSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kafka Streams' own clients, with producers that learn target topics before they fire to them, and
 * whose failed sends the {@link DeliveryQuarantine} watches ({@link RescuingProducer}).
 *
 * <p>Why: a producer that has never written to a topic fetches the topic's metadata inside {@code
 * send} ({@code KafkaProducer.waitOnMetadata}, or {@code partitionsFor} when Kafka Streams applies
 * a partitioner), and Kafka Streams sends on the stream thread, so the first fire to a new topic
 * holds every task of that thread for at least a metadata round trip. Here the producers Kafka
 * Streams creates are remembered, and {@link #warm} has each of them fetch a topic's metadata on a
 * thread of its own ({@link Producer#partitionsFor} is thread-safe) when the topic is first seen at
 * intake, normally long before its tasks are due. {@link AdminTargetTopics} warms every existing
 * topic again at each refresh: that keeps them in the producers' metadata (a producer forgets a
 * topic unused for {@code metadata.max.idle.ms}, 5 minutes, and a task due later would wait again),
 * and it reaches producers created since (a replaced thread, a re-created producer).
 *
 * <p>A topic deleted between its refresh and its warming holds the warming thread for the
 * producer's {@code max.block.ms}; the stream threads are not affected.
 *
 * <pre>{@code
 * WarmingClientSupplier clients = new WarmingClientSupplier(quarantine);
 * KafkaStreams streams = new KafkaStreams(topology, properties, clients);
 * clients.warm(List.of("orders"));
 * }</pre>
 */
public final class WarmingClientSupplier
    implements KafkaClientSupplier, TopicMetadataWarmer, AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(WarmingClientSupplier.class);

  private final KafkaClientSupplier clients = new DefaultKafkaClientSupplier();
  private final DeliveryQuarantine quarantine;

  // Weak: Kafka Streams closes and drops a thread's producer (a replaced thread, a fenced
  // producer); it is forgotten here once nothing else holds it.
  private final Set<Producer<byte[], byte[]>> producers =
      Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>()));

  // Every transactional id Kafka Streams gave a producer of this instance.
  private final Set<String> transactionalIds = ConcurrentHashMap.newKeySet();

  private final ExecutorService warmer =
      Executors.newSingleThreadExecutor(
          ThreadUtils.createThreadFactory("kdelay-producer-warmer", true));

  /**
   * @param quarantine told of every record the producers fail to send
   */
  public WarmingClientSupplier(DeliveryQuarantine quarantine) {
    this.quarantine = quarantine;
  }

  @Override
  public Producer<byte[], byte[]> getProducer(Map<String, Object> config) {
    Object transactionalId = config.get(ProducerConfig.TRANSACTIONAL_ID_CONFIG);
    if (transactionalId != null) {
      transactionalIds.add(transactionalId.toString());
    }
    Producer<byte[], byte[]> producer =
        new RescuingProducer(clients.getProducer(config), quarantine);
    producers.add(producer);
    return producer;
  }

  /**
   * The transactional ids of this instance's producers, so far: {@link
   * dev.kdelay.service.failover.OrphanedTransactions}.
   */
  public Set<String> transactionalIds() {
    return Set.copyOf(transactionalIds);
  }

  @Override
  public Consumer<byte[], byte[]> getConsumer(Map<String, Object> config) {
    return clients.getConsumer(config);
  }

  @Override
  public Consumer<byte[], byte[]> getRestoreConsumer(Map<String, Object> config) {
    return clients.getRestoreConsumer(config);
  }

  @Override
  public Consumer<byte[], byte[]> getGlobalConsumer(Map<String, Object> config) {
    return clients.getGlobalConsumer(config);
  }

  @Override
  public Admin getAdmin(Map<String, Object> config) {
    return clients.getAdmin(config);
  }

  @Override
  public void warm(Collection<String> topics) {
    warmAll(topics);
  }

  /**
   * Has every producer fetch the metadata of these topics, one after the other on the warming
   * thread.
   *
   * @return completes when every producer has the topics' metadata, or gave up on it
   */
  CompletableFuture<Void> warmAll(Collection<String> topics) {
    List<String> names = List.copyOf(topics);
    if (names.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    return CompletableFuture.runAsync(() -> names.forEach(this::warmOne), warmer);
  }

  private void warmOne(String topic) {
    List<Producer<byte[], byte[]>> current;
    synchronized (producers) {
      current = List.copyOf(producers);
    }
    for (Producer<byte[], byte[]> producer : current) {
      try {
        // Answers from memory when the producer knows the topic, and resets its idle expiry.
        producer.partitionsFor(topic);
      } catch (KafkaException e) {
        // A closed producer, or a topic deleted since it was seen: the fire path copes with both.
        log.debug(
            "event=producer-warm-failed topic={} error={}",
            LogValues.quote(topic),
            LogValues.quote(e));
      }
    }
  }

  @Override
  public void close() {
    warmer.shutdownNow();
  }
}

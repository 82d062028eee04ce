package dev.kdelay.topology;

import dev.kdelay.topology.internals.RequestProcessor;
import dev.kdelay.topology.internals.RequestTimestamps;
import dev.kdelay.topology.internals.delivery.Causes;
import dev.kdelay.topology.internals.delivery.DeliveryQuarantine;
import dev.kdelay.topology.internals.delivery.FiredKey;
import dev.kdelay.topology.internals.delivery.Sinks;
import dev.kdelay.topology.internals.limits.FireSlots;
import dev.kdelay.topology.internals.store.ScheduleStoreBuilder;
import dev.kdelay.topology.internals.store.StoreFormat;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.AutoOffsetReset;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.StreamPartitioner;
import org.apache.kafka.streams.processor.TimestampExtractor;
import org.apache.kafka.streams.processor.TopicNameExtractor;

/**
 * Builds kdelay's Kafka Streams topology.
 *
 * <pre>
 *   requests ──┐                         ┌─▶ reroute topic   (requests on the wrong partition)
 *              ├─▶ request-processor ────┼─▶ dead-letter     (rejected requests, with reason)
 *   rerouted ──┘   [delay-schedules-v2]  └─▶ target topics   (fired tasks, topic per record)
 * </pre>
 *
 * <p>The schedule store holds each id once, with its due order as an index beside it; its changelog
 * is keyed by id, so pending tasks survive restarts and move with their partition. Interactive
 * queries read it as {@link ReadableSchedules} ({@link ScheduleStores#type()}). Drive the topology
 * with {@code TopologyTestDriver}, or run it:
 *
 * <pre>{@code
 * DelayConfig config = new DelayConfig(Map.of(DelayConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9092"));
 * try (KafkaStreams streams = new KafkaStreams(DelayTopology.build(config), StreamsTuning.streamsProperties(config))) {
 *   streams.start();
 *   ...
 * }
 * }</pre>
 */
public final class DelayTopology {

  private static final String REQUESTS_SOURCE = "requests";
  private static final String REROUTED_SOURCE = "rerouted-requests";
  private static final String PROCESSOR = "request-processor";

  /**
   * Name of the schedule store: each id's state and task, with its due order (read it with {@link
   * ScheduleStores#type()}).
   */
  public static final String SCHEDULES_STORE = StoreFormat.SCHEDULES_STORE;

  /**
   * Name of the store of the fire-rate limits' clocks ({@link DelayConfig#fireRateLimits}): small,
   * one entry per limited target topic and partition.
   */
  public static final String FIRE_SLOTS_STORE = FireSlots.STORE;

  /**
   * The stores of kdelay's first layout (two stores), which this version neither reads nor
   * migrates: see docs/operations.md, "Upgrading from the two-store layout".
   */
  public static final List<String> FIRST_LAYOUT_STORES = StoreFormat.FIRST_LAYOUT_STORES;

  /** The sources take the application's offset reset policy. */
  private static final AutoOffsetReset NO_RESET = null;

  private DelayTopology() {}

  /**
   * Builds the topology.
   *
   * @param config the service configuration
   * @return a topology ready for {@code new KafkaStreams(topology,
   *     StreamsTuning.streamsProperties(config))}
   * @throws NullPointerException if config is null
   */
  public static Topology build(DelayConfig config) {
    return build(config, TargetTopics.UNCHECKED);
  }

  /**
   * Builds the topology with a check of target topics.
   *
   * @param config the service configuration
   * @param targetTopics what is known of the target topics
   * @return a topology ready for {@code new KafkaStreams(topology,
   *     StreamsTuning.streamsProperties(config))}
   * @throws NullPointerException if an argument is null
   */
  public static Topology build(DelayConfig config, TargetTopics targetTopics) {
    return build(config, targetTopics, DelayMetrics.NOOP);
  }

  /**
   * Builds the topology with a check of target topics and a metrics listener.
   *
   * @param config the service configuration
   * @param targetTopics what is known of the target topics
   * @param metrics told of every request, fire and punctuation, on the stream threads
   * @return a topology ready for {@code new KafkaStreams(topology,
   *     StreamsTuning.streamsProperties(config))}
   * @throws NullPointerException if an argument is null
   */
  public static Topology build(
      DelayConfig config, TargetTopics targetTopics, DelayMetrics metrics) {
    return build(config, targetTopics, metrics, new DeliveryQuarantine(config));
  }

  /**
   * Builds the topology as the service runs it: with a check of target topics, a metrics listener
   * and the quarantine of records the producer refused, which must also be installed ({@code
   * DeliveryFailureHandler.install}) in the properties the {@code KafkaStreams} is created with.
   *
   * <pre>{@code
   * DeliveryQuarantine quarantine = new DeliveryQuarantine(config);
   * Properties props = StreamsTuning.streamsProperties(config);
   * DeliveryFailureHandler.install(props, quarantine);
   * new KafkaStreams(DelayTopology.build(config, targetTopics, metrics, quarantine), props);
   * }</pre>
   *
   * @param config the service configuration
   * @param targetTopics what is known of the target topics
   * @param metrics told of every request, fire and punctuation, on the stream threads
   * @param quarantine the records the producer refused, shared by every stream thread
   * @return a topology ready for {@code new KafkaStreams(topology, props)}
   * @throws NullPointerException if an argument is null
   */
  public static Topology build(
      DelayConfig config,
      TargetTopics targetTopics,
      DelayMetrics metrics,
      DeliveryQuarantine quarantine) {
    return build(
        config,
        targetTopics,
        metrics,
        quarantine,
        new FireRateLimitsInEffect(config.fireRateLimits()));
  }

  /**
   * Builds the topology as the service runs it, with fire-rate limits that may change while it
   * runs: the service's are {@code delay.fire.rate.limits} overlaid by what its limits topic holds.
   *
   * @param config the service configuration
   * @param targetTopics what is known of the target topics
   * @param metrics told of every request, fire and punctuation, on the stream threads
   * @param quarantine the records the producer refused, shared by every stream thread
   * @param limits the fire-rate limits in effect; asked on the stream threads at every fire to a
   *     topic that is or was limited
   * @return a topology ready for {@code new KafkaStreams(topology, props)}
   * @throws NullPointerException if an argument is null
   */
  public static Topology build(
      DelayConfig config,
      TargetTopics targetTopics,
      DelayMetrics metrics,
      DeliveryQuarantine quarantine,
      FireRateLimitsInEffect limits) {
    Objects.requireNonNull(config, "config cannot be null");
    Objects.requireNonNull(limits, "limits cannot be null");
    Objects.requireNonNull(quarantine, "quarantine cannot be null");
    Objects.requireNonNull(targetTopics, "targetTopics cannot be null");
    Objects.requireNonNull(metrics, "metrics cannot be null");
    ByteArrayDeserializer bytesIn = new ByteArrayDeserializer();
    ByteArraySerializer bytesOut = new ByteArraySerializer();
    Serializer<FiredKey> firedKey = (topic, key) -> key.key();
    TopicNameExtractor<FiredKey, byte[]> targetTopic = (key, value, context) -> key.topic();
    StreamPartitioner<FiredKey, byte[]> targetPartition =
        (topic, key, value, partitions) -> Optional.of(Set.of(key.partition()));

    // A tenant's dead letters go to its own topic: delay-tenant names it, which kdelay alone sets.
    TopicNameExtractor<byte[], byte[]> tenantDeadLetterTopic =
        (key, value, context) -> config.dlqTopic(Causes.tenant(context.headers()));
    // A rerouted request goes to the partition its id hashes to: a tenant's id as the tenant sent
    // it, the partition its producer chose (what the default partitioner would do with its key).
    StreamPartitioner<byte[], byte[]> reroutePartition =
        (topic, key, value, partitions) ->
            key == null
                ? Optional.empty()
                : Optional.of(Set.of(ScheduleMove.owner(key, partitions)));
    // The shared request topic, then each tenant's: one source, so that partition i of each is
    // read by task i, which owns the ids that hash to i whichever topic they came by.
    List<String> requestsTopics = new ArrayList<>();
    requestsTopics.add(config.requestsTopic());
    requestsTopics.addAll(config.tenants().requestsTopics());
    TimestampExtractor timestamps = new RequestTimestamps(config.rerouteTopic());
    Topology topology =
        new Topology()
            .addSource(
                NO_RESET,
                REQUESTS_SOURCE,
                timestamps,
                bytesIn,
                bytesIn,
                requestsTopics.toArray(String[]::new))
            .addSource(
                NO_RESET, REROUTED_SOURCE, timestamps, bytesIn, bytesIn, config.rerouteTopic())
            .addProcessor(
                PROCESSOR,
                () -> new RequestProcessor(config, targetTopics, metrics, quarantine, limits),
                REQUESTS_SOURCE,
                REROUTED_SOURCE)
            .addStateStore(
                new ScheduleStoreBuilder(
                    StoreFormat.SCHEDULES_STORE,
                    config.changelogDeleteRetentionMs(),
                    config.storeFormat()),
                PROCESSOR)
            .addStateStore(FireSlots.storeBuilder(), PROCESSOR);
    // Without tenants, the sinks are what they were before tenants: every key is a plain id, which
    // the producer's own partitioner puts where ScheduleMove.owner says.
    if (config.tenants().isEmpty()) {
      topology.addSink(Sinks.REROUTE, config.rerouteTopic(), bytesOut, bytesOut, PROCESSOR);
    } else {
      topology
          .addSink(
              Sinks.REROUTE, config.rerouteTopic(), bytesOut, bytesOut, reroutePartition, PROCESSOR)
          .addSink(Sinks.TENANT_DLQ, tenantDeadLetterTopic, bytesOut, bytesOut, PROCESSOR);
    }
    return topology
        .addSink(Sinks.DLQ, config.dlqTopic(), bytesOut, bytesOut, PROCESSOR)
        .addSink(Sinks.FIRE, targetTopic, firedKey, bytesOut, PROCESSOR)
        .addSink(
            Sinks.FIRE_PARTITIONED, targetTopic, firedKey, bytesOut, targetPartition, PROCESSOR);
  }
}

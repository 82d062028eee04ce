package dev.kdelay.topology.internals.delivery;

/**
 * The key of a record on its way to a target topic: the topic and partition it is routed to travel
 * with the key bytes, for the sink's topic extractor and partitioner.
 *
 * @param topic the target topic
 * @param key the record key
 * @param partition the partition, or {@link #ANY_PARTITION} for Kafka's default partitioner
 */
public record FiredKey(String topic, byte[] key, int partition) {

  /** No partition chosen: the producer's default partitioner decides from the key. */
  public static final int ANY_PARTITION = -1;
}

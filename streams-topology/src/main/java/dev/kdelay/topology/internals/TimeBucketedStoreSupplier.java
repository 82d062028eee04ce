package dev.kdelay.topology.internals;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;

/**
 * Supplies {@link TimeBucketedBytesStore}s to Kafka Streams, which composes the store as {@code
 * Metered(ChangeLogging(TimeBucketedBytesStore))}: the changelog makes the state survive restarts
 * and move with its partition.
 */
public final class TimeBucketedStoreSupplier implements KeyValueBytesStoreSupplier {

  private final String name;
  private final long bucketWidthMs;

  /**
   * Creates a supplier.
   *
   * @param name the store name
   * @param bucketWidthMs the width of a time bucket
   */
  public TimeBucketedStoreSupplier(String name, long bucketWidthMs) {
    this.name = name;
    this.bucketWidthMs = bucketWidthMs;
  }

  /** The builder of a logged, uncached task store. */
  public static StoreBuilder<KeyValueStore<Bytes, byte[]>> builder(
      String name, long bucketWidthMs) {
    return Stores.keyValueStoreBuilder(
            new TimeBucketedStoreSupplier(name, bucketWidthMs), Serdes.Bytes(), Serdes.ByteArray())
        .withLoggingEnabled(java.util.Map.of())
        .withCachingDisabled();
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public KeyValueStore<Bytes, byte[]> get() {
    return new TimeBucketedBytesStore(name, bucketWidthMs);
  }

  @Override
  public String metricsScope() {
    return "time-bucketed-rocksdb";
  }
}

package dev.kdelay.topology.internals;

import java.util.Map;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;

/** Builds the topology's stores so that interactive queries may read them from any thread. */
public final class QueryableStores {

  private QueryableStores() {}

  /**
   * The task store as the topology runs it: {@code
   * Metered(ChangeLogging(Synchronized(TimeBucketed)))}, uncached. The lock sits right around the
   * bytes store, the one layer that is not thread-safe by itself (see {@link
   * SynchronizedBytesStore}).
   *
   * @param name the store name
   * @param bucketWidthMs the width of a time bucket
   * @return the store builder
   */
  public static StoreBuilder<KeyValueStore<Bytes, byte[]>> taskStore(
      String name, long bucketWidthMs) {
    return Stores.keyValueStoreBuilder(
            SynchronizedBytesStore.supplier(new TimeBucketedStoreSupplier(name, bucketWidthMs)),
            Serdes.Bytes(),
            Serdes.ByteArray())
        .withLoggingEnabled(Map.of())
        .withCachingDisabled();
  }
}

package dev.kdelay.topology;

import dev.kdelay.topology.internals.store.MeteredScheduleStore;
import java.util.List;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.state.QueryableStoreType;
import org.apache.kafka.streams.state.internals.StateStoreProvider;

/**
 * How interactive queries find kdelay's schedule store: {@link #type()} for {@code
 * StoreQueryParameters}, one partition at a time.
 *
 * <pre>{@code
 * int partition = streams.queryMetadataForKey(DelayTopology.SCHEDULES_STORE, idBytes,
 *     new ByteArraySerializer()).partition();
 * ReadableSchedules schedules = streams.store(
 *     StoreQueryParameters.fromNameAndType(DelayTopology.SCHEDULES_STORE, ScheduleStores.type())
 *         .withPartition(partition));
 * }</pre>
 */
public final class ScheduleStores {

  private static final QueryableStoreType<ReadableSchedules> TYPE =
      new QueryableStoreType<>() {
        @Override
        public boolean accepts(StateStore store) {
          return store instanceof MeteredScheduleStore;
        }

        @Override
        public ReadableSchedules create(StateStoreProvider provider, String storeName) {
          List<ReadableSchedules> stores = provider.stores(storeName, this);
          if (stores.size() != 1) {
            throw new InvalidStateStoreException(
                "expected one partition's store "
                    + storeName
                    + ", found "
                    + stores.size()
                    + ": query with StoreQueryParameters.withPartition");
          }
          return stores.get(0);
        }
      };

  private ScheduleStores() {}

  /** The store type of {@link DelayTopology#SCHEDULES_STORE}, read one partition at a time. */
  public static QueryableStoreType<ReadableSchedules> type() {
    return TYPE;
  }
}

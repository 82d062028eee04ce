package dev.kdelay.topology.internals.store;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.state.StoreBuilder;

/**
 * Builds the {@link MeteredScheduleStore}: the one place its layers are composed, the way Kafka
 * Streams' {@code KeyValueStoreBuilder} composes {@code Metered(Logging(RocksDB))}:
 *
 * <pre>
 * MeteredScheduleStore                     typed (ids through the key serde) and metered
 *   ChangeLoggingScheduleStore   logs each write ({@link ScheduleChangelog}: markers travel as tombstones)
 *     RocksDBScheduleStore                RocksDB: entries and the indexes derived from them
 * </pre>
 *
 * Always logged, never cached: a store without its changelog would lose tasks.
 *
 * <p>The changelog topic is compacted and keeps tombstones (which carry the markers) for at least
 * the markers' retention: {@code delete.retention.ms} is given by the caller ({@link
 * dev.kdelay.topology.DelayConfig#changelogDeleteRetentionMs}). Kafka Streams sets it when it
 * creates the topic; the service raises it on a changelog that exists with less.
 */
public final class ScheduleStoreBuilder implements StoreBuilder<MeteredScheduleStore> {

  private final String name;
  private final byte format;
  private final Map<String, String> logConfig = new HashMap<>();

  /**
   * @param name the store name
   * @param deleteRetentionMs the changelog's {@code delete.retention.ms}: at least the longest time
   *     a marker is kept
   */
  public ScheduleStoreBuilder(String name, long deleteRetentionMs) {
    this(name, deleteRetentionMs, ScheduleEntry.FORMAT_3);
  }

  /**
   * @param name the store name
   * @param deleteRetentionMs the changelog's {@code delete.retention.ms}: at least the longest time
   *     a marker is kept
   * @param format the format of the entries it writes ({@link ScheduleEntry#FORMAT_2} or {@link
   *     ScheduleEntry#FORMAT_3})
   */
  public ScheduleStoreBuilder(String name, long deleteRetentionMs, byte format) {
    this.name = Objects.requireNonNull(name, "name cannot be null");
    this.format = format;
    logConfig.put(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT);
    logConfig.put(TopicConfig.DELETE_RETENTION_MS_CONFIG, Long.toString(deleteRetentionMs));
  }

  @Override
  public StoreBuilder<MeteredScheduleStore> withCachingEnabled() {
    throw new UnsupportedOperationException("the schedule store is never cached");
  }

  @Override
  public StoreBuilder<MeteredScheduleStore> withCachingDisabled() {
    return this;
  }

  @Override
  public StoreBuilder<MeteredScheduleStore> withLoggingEnabled(Map<String, String> config) {
    logConfig.putAll(config);
    return this;
  }

  @Override
  public StoreBuilder<MeteredScheduleStore> withLoggingDisabled() {
    throw new UnsupportedOperationException("the schedule store is always logged");
  }

  @Override
  public MeteredScheduleStore build() {
    return new MeteredScheduleStore(
        new ChangeLoggingScheduleStore(new RocksDBScheduleStore(name)), Serdes.String(), format);
  }

  @Override
  public Map<String, String> logConfig() {
    return Map.copyOf(logConfig);
  }

  @Override
  public boolean loggingEnabled() {
    return true;
  }

  @Override
  public String name() {
    return name;
  }
}

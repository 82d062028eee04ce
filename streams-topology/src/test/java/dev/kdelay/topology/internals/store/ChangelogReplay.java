package dev.kdelay.topology.internals.store;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.streams.test.TestRecord;

/**
 * Restores a test driver's schedule store from changelog records, the way Kafka Streams restores a
 * task that moves to another instance: the records go through the store's restore path, which
 * rebuilds its indexes.
 */
public final class ChangelogReplay {

  private ChangelogReplay() {}

  /** Restores the records, in order, into the RocksDB store beneath the change logging. */
  public static void restore(
      MeteredScheduleStore store, List<TestRecord<byte[], byte[]>> changelog) {
    RocksDBScheduleStore rocksDb = ((ChangeLoggingScheduleStore) store.bytes()).wrapped();
    List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>(changelog.size());
    long offset = 0;
    for (TestRecord<byte[], byte[]> record : changelog) {
      records.add(
          new ConsumerRecord<>(
              "changelog",
              0,
              offset++,
              record.timestamp(),
              TimestampType.CREATE_TIME,
              -1,
              -1,
              record.key(),
              record.value(),
              new RecordHeaders(record.headers().toArray()),
              Optional.empty()));
    }
    for (int from = 0; from < records.size(); from += 1000) {
      rocksDb.restoreBatch(records.subList(from, Math.min(records.size(), from + 1000)));
    }
  }
}

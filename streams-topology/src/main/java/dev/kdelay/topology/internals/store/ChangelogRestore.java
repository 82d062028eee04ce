package dev.kdelay.topology.internals.store;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.utils.Bytes;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;

/**
 * The writes that apply a batch of changelog records, rebuilding the indexes as they go. Each
 * record says in its {@link ScheduleChangelog#REPLACES_HEADER} where the entry it replaced sat in
 * the indexes, so the index key to delete is known without reading the store: a restore only
 * writes. For records that do not say (written before that header, or with a header this version
 * cannot read), the ids' stored entries are read with one multi-get for the batch.
 *
 * <p>Not thread-safe: the store calls it holding its lock, with everything it held in memory made
 * or forgotten.
 */
final class ChangelogRestore {

  private final RocksDB db;
  private final IndexBounds bounds;

  /**
   * A batch of changelog records with what each says it replaced, read before the store's lock is
   * taken.
   *
   * @param positions what each record says it replaced ({@link ScheduleChangelog#replaced}), null
   *     where it does not say
   * @param newestMs the newest record's timestamp
   */
  record Batch(
      List<ConsumerRecord<byte[], byte[]>> changes, List<byte[]> positions, long newestMs) {

    static Batch of(Collection<ConsumerRecord<byte[], byte[]>> records) {
      List<ConsumerRecord<byte[], byte[]>> changes = List.copyOf(records);
      List<byte[]> positions = new ArrayList<>(changes.size());
      long newestMs = Long.MIN_VALUE;
      for (ConsumerRecord<byte[], byte[]> record : changes) {
        positions.add(ScheduleChangelog.replaced(record));
        newestMs = Math.max(newestMs, record.timestamp());
      }
      return new Batch(changes, positions, newestMs);
    }
  }

  ChangelogRestore(RocksDB db, IndexBounds bounds) {
    this.db = db;
    this.bounds = bounds;
  }

  /**
   * The writes that apply {@code changes}. Their index keys arrive scattered over the time range:
   * made in key order (as {@link RocksDbInstance#write} makes them), RocksDB's memtable inserts are
   * short searches (see {@link StagedWrites}).
   */
  StagedWrites writes(Batch batch) throws RocksDBException {
    List<ConsumerRecord<byte[], byte[]>> changes = batch.changes();
    List<byte[]> positions = batch.positions();
    // Only when some records do not say what they replaced: each id's latest entry, read from the
    // store for the first of them, then as restored by this batch.
    Map<Bytes, byte[]> current = readUnsaid(changes, positions);
    StagedWrites writes = new StagedWrites();
    for (int i = 0; i < changes.size(); i++) {
      ConsumerRecord<byte[], byte[]> record = changes.get(i);
      byte[] id = record.key();
      byte[] oldIndex =
          positions.get(i) != null
              ? StoreKeys.indexAt(positions.get(i), id)
              : StoreKeys.indexOf(id, current.get(Bytes.wrap(id)));
      byte[] next = ScheduleChangelog.entry(record);
      writes.entry(id, oldIndex, next, bounds);
      if (current != null) {
        current.put(Bytes.wrap(id), next);
      }
    }
    return writes;
  }

  /**
   * Null when every record says what it replaced. Otherwise the stored entries of the ids whose
   * first record in the batch does not say, read with one multi-get (absent ones map to null).
   */
  private Map<Bytes, byte[]> readUnsaid(
      List<ConsumerRecord<byte[], byte[]>> changes, List<byte[]> positions)
      throws RocksDBException {
    if (!positions.contains(null)) {
      return null;
    }
    Set<Bytes> seen = new HashSet<>();
    List<byte[]> keys = new ArrayList<>();
    for (int i = 0; i < changes.size(); i++) {
      byte[] id = changes.get(i).key();
      if (seen.add(Bytes.wrap(id)) && positions.get(i) == null) {
        keys.add(StoreKeys.entry(id));
      }
    }
    Map<Bytes, byte[]> entries = new HashMap<>();
    List<byte[]> values = keys.isEmpty() ? List.of() : db.multiGetAsList(keys);
    for (int i = 0; i < keys.size(); i++) {
      entries.put(Bytes.wrap(StoreKeys.idOfEntry(keys.get(i))), values.get(i));
    }
    return entries;
  }
}

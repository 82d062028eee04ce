package dev.kdelay.topology.internals.store;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * Forgets markers (cancelled and fired ids) whose expiry has passed: a local delete of the entry
 * and its expiry key, never changelogged (see {@link ChangeLoggingScheduleStore} for how the
 * changelog forgets them). Like the due scan, it reads first and closes its iterator, then writes.
 *
 * <p>Not thread-safe: the store calls it holding its lock, with its collected writes made.
 */
final class ExpirySweep {

  private final RocksDB db;
  private final WriteOptions writeOptions;
  private final IndexBounds bounds;
  private final String store;

  ExpirySweep(RocksDB db, WriteOptions writeOptions, IndexBounds bounds, String store) {
    this.db = db;
    this.writeOptions = writeOptions;
    this.bounds = bounds;
    this.store = store;
  }

  /**
   * Forgets the markers expired at {@code nowMs}, looking at most {@code max} expiry keys.
   *
   * @return how many markers were forgotten
   */
  int run(long nowMs, int max) {
    byte[] bound = StoreKeys.indexPrefix(StoreKeys.EXPIRY, nowMs + 1);
    List<byte[]> expired = new ArrayList<>();
    try (RocksIterator scan = db.newIterator()) {
      for (scan.seek(bounds.expiryFrom());
          expired.size() < max && scan.isValid() && StoreKeys.before(scan.key(), bound);
          scan.next()) {
        expired.add(scan.key());
      }
      boolean more = scan.isValid() && StoreKeys.before(scan.key(), bound);
      bounds.expirySwept(
          expired.isEmpty() ? bound : expired.get(0),
          more ? nowMs : StoreKeys.firstIndexed(scan, bound, StoreKeys.EXPIRY));
    }
    if (expired.isEmpty()) {
      return 0;
    }
    int swept = 0;
    List<byte[]> entryKeys = new ArrayList<>(expired.size());
    for (byte[] key : expired) {
      entryKeys.add(StoreKeys.entry(StoreKeys.idOfIndex(key)));
    }
    try (WriteBatch batch = new WriteBatch()) {
      List<byte[]> entries = db.multiGetAsList(entryKeys);
      for (int i = 0; i < expired.size(); i++) {
        byte[] key = expired.get(i);
        batch.delete(key);
        // The id may have been scheduled again since: then its entry owns another index key.
        if (Arrays.equals(key, StoreKeys.indexOf(StoreKeys.idOfIndex(key), entries.get(i)))) {
          batch.delete(entryKeys.get(i));
          swept++;
        }
      }
      db.write(writeOptions, batch);
    } catch (RocksDBException e) {
      throw new ProcessorStateException("sweep failed in store " + store, e);
    }
    return swept;
  }
}

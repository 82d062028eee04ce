package dev.kdelay.topology.internals.store;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;

/**
 * What a read-ahead of ids learnt, by id: that it has no entry, or the entry. A request for a new
 * id is a lookup of an id not stored; one by one, each took 2.6-4 µs (keyMayExist, through the
 * memtables' and every file's filters), in multi-gets of {@link #STEP} 1.5 µs, which probe the
 * filters for many keys at once.
 *
 * <p>Each answer serves one lookup; a write to the id forgets it, and so does anything that could
 * change other ids' entries behind the store's back (a sweep that forgot markers, a restore). Not
 * thread-safe: the store calls it holding its lock.
 */
final class ReadAhead {

  /** Ids one multi-get looks up at most: the entries it reads are transient. */
  static final int STEP = 64;

  /** Ids remembered at most; past that, a read-ahead starts afresh. */
  static final int MAX_IDS = 4_096;

  /** Bytes of entries remembered at most; entries past that are not kept. */
  static final long MAX_BYTES = 1024 * 1024;

  /** The answer for an id known to have no entry. */
  static final byte[] ABSENT = new byte[0];

  private final Map<Bytes, byte[]> known = new HashMap<>();
  private long bytes;

  /**
   * Looks up {@code ids} in multi-gets, skipping those {@code answeredElsewhere} (the store's
   * collected writes, its entries kept in memory only) and those already known.
   */
  void read(RocksDB db, String store, List<byte[]> ids, Predicate<Bytes> answeredElsewhere) {
    if (known.size() + ids.size() > MAX_IDS) {
      clear();
    }
    List<byte[]> keys = new ArrayList<>(ids.size());
    List<Bytes> wanted = new ArrayList<>(ids.size());
    for (byte[] bytes : ids) {
      Bytes id = Bytes.wrap(bytes);
      if (!answeredElsewhere.test(id) && !known.containsKey(id)) {
        keys.add(StoreKeys.entry(bytes));
        wanted.add(id);
      }
    }
    for (int from = 0; from < keys.size(); from += STEP) {
      int to = Math.min(keys.size(), from + STEP);
      lookUp(db, store, keys.subList(from, to), wanted.subList(from, to));
    }
  }

  private void lookUp(RocksDB db, String store, List<byte[]> keys, List<Bytes> ids) {
    List<byte[]> entries;
    try {
      entries = db.multiGetAsList(keys);
    } catch (RocksDBException e) {
      throw new ProcessorStateException("read-ahead failed in store " + store, e);
    }
    for (int i = 0; i < ids.size(); i++) {
      byte[] entry = entries.get(i);
      if (entry == null) {
        known.put(ids.get(i), ABSENT);
      } else if (bytes + entry.length <= MAX_BYTES) {
        known.put(ids.get(i), entry);
        bytes += entry.length;
      }
    }
  }

  /**
   * The answer for an id, which it serves once: {@link #ABSENT}, the entry, or null if the id was
   * not read ahead.
   */
  byte[] take(Bytes id) {
    if (known.isEmpty()) {
      return null;
    }
    byte[] answer = known.remove(id);
    if (answer != null) {
      bytes -= answer.length;
    }
    return answer;
  }

  /** Forgets what was learnt of an id: it is written. */
  void forget(Bytes id) {
    take(id);
  }

  void clear() {
    known.clear();
    bytes = 0;
  }

  int size() {
    return known.size();
  }
}

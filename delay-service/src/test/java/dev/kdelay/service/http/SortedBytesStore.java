package dev.kdelay.service.http;

import java.util.Iterator;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/** A store of bytes in memory, in RocksDB's order (unsigned bytes), for reads without Streams. */
final class SortedBytesStore implements ReadOnlyKeyValueStore<Bytes, byte[]> {

  private final NavigableMap<Bytes, byte[]> entries = new TreeMap<>();

  SortedBytesStore put(Bytes key, byte[] value) {
    entries.put(key, value);
    return this;
  }

  @Override
  public byte[] get(Bytes key) {
    return entries.get(key);
  }

  @Override
  public KeyValueIterator<Bytes, byte[]> range(Bytes from, Bytes to) {
    return iterator(entries.subMap(from, true, to, true));
  }

  @Override
  public KeyValueIterator<Bytes, byte[]> all() {
    return iterator(entries);
  }

  @Override
  public long approximateNumEntries() {
    return entries.size();
  }

  private static KeyValueIterator<Bytes, byte[]> iterator(NavigableMap<Bytes, byte[]> view) {
    Iterator<Map.Entry<Bytes, byte[]>> entries = view.entrySet().iterator();
    NavigableMap<Bytes, byte[]> remaining = new TreeMap<>(view);
    return new KeyValueIterator<>() {
      @Override
      public boolean hasNext() {
        return entries.hasNext();
      }

      @Override
      public KeyValue<Bytes, byte[]> next() {
        Map.Entry<Bytes, byte[]> entry = entries.next();
        remaining.remove(entry.getKey());
        return KeyValue.pair(entry.getKey(), entry.getValue());
      }

      @Override
      public Bytes peekNextKey() {
        return remaining.firstKey();
      }

      @Override
      public void close() {}
    };
  }
}

package dev.kdelay.topology.internals;

import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.query.PositionBound;
import org.apache.kafka.streams.query.Query;
import org.apache.kafka.streams.query.QueryConfig;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Makes a bytes store that one stream thread writes safe for interactive queries, which read it
 * from other threads: every call, and every step of an iterator it returned, holds the store's
 * lock, as Kafka Streams' own RocksDB store does.
 *
 * <p>{@link TimeBucketedBytesStore} already keeps queries from moving its low-water mark, and
 * RocksDB's reads are thread-safe. What it cannot stop alone is its partition moving away while a
 * query reads: {@code close()} frees the RocksDB instance and the open iterators' native memory
 * under a query that is stepping one. With this layer a query's read or step and the owner's close
 * never overlap; a step after the close fails with an exception, never a crash. Its bookkeeping
 * between a scan and the delete that follows it (the write epoch, the entry last scanned) also sees
 * one call at a time.
 *
 * <p>The lock is uncontended unless a query runs, so the stream thread pays a few nanoseconds per
 * call.
 */
final class SynchronizedBytesStore implements KeyValueStore<Bytes, byte[]> {

  private final KeyValueStore<Bytes, byte[]> inner;

  SynchronizedBytesStore(KeyValueStore<Bytes, byte[]> inner) {
    this.inner = inner;
  }

  /** A supplier whose stores are wrapped so. */
  static KeyValueBytesStoreSupplier supplier(KeyValueBytesStoreSupplier inner) {
    return new KeyValueBytesStoreSupplier() {
      @Override
      public String name() {
        return inner.name();
      }

      @Override
      public KeyValueStore<Bytes, byte[]> get() {
        return new SynchronizedBytesStore(inner.get());
      }

      @Override
      public String metricsScope() {
        return inner.metricsScope();
      }
    };
  }

  @Override
  public String name() {
    return inner.name();
  }

  @Override
  public synchronized void init(StateStoreContext context, StateStore root) {
    inner.init(context, root);
  }

  @Override
  public synchronized void commit(Map<TopicPartition, Long> changelogOffsets) {
    inner.commit(changelogOffsets);
  }

  @Override
  public synchronized Long committedOffset(TopicPartition partition) {
    return inner.committedOffset(partition);
  }

  @Override
  public synchronized void close() {
    inner.close();
  }

  @Override
  public boolean persistent() {
    return inner.persistent();
  }

  @Override
  public boolean isOpen() {
    return inner.isOpen();
  }

  @Override
  public synchronized <R> QueryResult<R> query(
      Query<R> query, PositionBound positionBound, QueryConfig config) {
    return inner.query(query, positionBound, config);
  }

  @Override
  public synchronized Position getPosition() {
    return inner.getPosition();
  }

  @Override
  public synchronized void put(Bytes key, byte[] value) {
    inner.put(key, value);
  }

  @Override
  public synchronized byte[] putIfAbsent(Bytes key, byte[] value) {
    return inner.putIfAbsent(key, value);
  }

  @Override
  public synchronized void putAll(List<KeyValue<Bytes, byte[]>> entries) {
    inner.putAll(entries);
  }

  @Override
  public synchronized byte[] delete(Bytes key) {
    return inner.delete(key);
  }

  @Override
  public synchronized byte[] get(Bytes key) {
    return inner.get(key);
  }

  @Override
  public synchronized KeyValueIterator<Bytes, byte[]> range(Bytes from, Bytes to) {
    return new Iterator(inner.range(from, to));
  }

  @Override
  public synchronized KeyValueIterator<Bytes, byte[]> reverseRange(Bytes from, Bytes to) {
    return new Iterator(inner.reverseRange(from, to));
  }

  @Override
  public synchronized KeyValueIterator<Bytes, byte[]> all() {
    return new Iterator(inner.all());
  }

  @Override
  public synchronized KeyValueIterator<Bytes, byte[]> reverseAll() {
    return new Iterator(inner.reverseAll());
  }

  @Override
  public synchronized <PS extends Serializer<P>, P> KeyValueIterator<Bytes, byte[]> prefixScan(
      P prefix, PS prefixKeySerializer) {
    return new Iterator(inner.prefixScan(prefix, prefixKeySerializer));
  }

  @Override
  public synchronized long approximateNumEntries() {
    return inner.approximateNumEntries();
  }

  /** Steps the inner iterator under the store's lock. */
  private final class Iterator implements KeyValueIterator<Bytes, byte[]> {

    private final KeyValueIterator<Bytes, byte[]> inner;

    Iterator(KeyValueIterator<Bytes, byte[]> inner) {
      this.inner = inner;
    }

    @Override
    public boolean hasNext() {
      synchronized (SynchronizedBytesStore.this) {
        return inner.hasNext();
      }
    }

    @Override
    public KeyValue<Bytes, byte[]> next() {
      synchronized (SynchronizedBytesStore.this) {
        return inner.next();
      }
    }

    @Override
    public Bytes peekNextKey() {
      synchronized (SynchronizedBytesStore.this) {
        return inner.peekNextKey();
      }
    }

    @Override
    public void close() {
      synchronized (SynchronizedBytesStore.this) {
        inner.close();
      }
    }
  }
}

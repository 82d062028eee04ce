package dev.kdelay.topology.internals;

import java.util.NoSuchElementException;
import java.util.function.Consumer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;

/**
 * A forward scan of {@link TimeBucketedBytesStore} over {@code [start, end)}. RocksDB iterators
 * read a snapshot; a scan that started at the store's low-water mark reports each key it yields, so
 * that the mark follows the scan up to the lowest key written since the scan began.
 */
final class BucketedIterator implements KeyValueIterator<Bytes, byte[]> {

  private final TimeBucketedBytesStore store;
  private final ReadOptions readOptions;
  private final Slice upperBound;
  private final RocksIterator iterator;
  private final boolean fromLowWater;
  private final Consumer<BucketedIterator> onClose;
  private boolean closed;

  /** The lowest key the store wrote since this scan began, or null. */
  private byte[] lowestWrite;

  BucketedIterator(
      TimeBucketedBytesStore store,
      RocksDB db,
      byte[] start,
      byte[] end,
      boolean fromLowWater,
      Consumer<BucketedIterator> onClose) {
    this.store = store;
    this.upperBound = end == null ? null : new Slice(end);
    this.readOptions = new ReadOptions();
    if (upperBound != null) {
      readOptions.setIterateUpperBound(upperBound);
    }
    this.iterator = db.newIterator(readOptions);
    this.fromLowWater = fromLowWater;
    this.onClose = onClose;
    iterator.seek(start);
  }

  @Override
  public boolean hasNext() {
    if (closed) {
      throw new IllegalStateException("iterator is closed");
    }
    return iterator.isValid();
  }

  @Override
  public KeyValue<Bytes, byte[]> next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    byte[] key = iterator.key();
    byte[] value = iterator.value();
    if (fromLowWater) {
      store.scanReached(this, key, value);
    }
    KeyValue<Bytes, byte[]> entry = KeyValue.pair(Bytes.wrap(key), value);
    iterator.next();
    return entry;
  }

  /** Notes a write to the store while this scan is open. */
  void written(byte[] key) {
    if (lowestWrite == null || TaskKey.before(key, lowestWrite)) {
      lowestWrite = key;
    }
  }

  /** Whether a key below {@code key} was written since this scan began. */
  boolean wroteBelow(byte[] key) {
    return lowestWrite != null && TaskKey.before(lowestWrite, key);
  }

  @Override
  public Bytes peekNextKey() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    return Bytes.wrap(iterator.key());
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    iterator.close();
    readOptions.close();
    if (upperBound != null) {
      upperBound.close();
    }
    onClose.accept(this);
  }
}

package dev.kdelay.topology.internals.store;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * The records of the schedule store's changelog: what {@link ChangeLoggingScheduleStore} writes for
 * each change of an id's entry, and what a restore ({@link RocksDBScheduleStore}) reads back. Keyed
 * by schedule id:
 *
 * <pre>
 * new entry                  value                headers
 * live (scheduled, paused)   the entry            kdelay-replaces
 * marker (fired, cancelled)  null (a tombstone)   kdelay-replaces, kdelay-marker = the marker (27 bytes)
 * none (a forgotten id)      null (a tombstone)   kdelay-replaces
 * </pre>
 *
 * A marker travels in a tombstone so that compaction forgets the id after the topic's {@code
 * delete.retention.ms}, while a restore within that time still replays it. {@value
 * #REPLACES_HEADER} says where the entry the record replaced sat in the indexes ({@link
 * StoreKeys#positionOf}), so that a restore deletes that index key without reading the store.
 */
public final class ScheduleChangelog {

  /** The header of a changelog tombstone that carries a marker. */
  public static final String MARKER_HEADER = "kdelay-marker";

  /**
   * The header of every changelog record that says where the entry it replaced sat in the store's
   * indexes: the kind and time of its index key (9 bytes), or empty if it had none.
   */
  public static final String REPLACES_HEADER = "kdelay-replaces";

  private ScheduleChangelog() {}

  /**
   * The value that logs a change of an id's entry: the entry itself while it is live, a tombstone
   * for a marker or for no entry.
   *
   * @param next the new entry in binary form, its header readable, or null
   */
  static byte[] value(byte[] next) {
    return next == null || ScheduleEntry.stateOf(next).marker() ? null : next;
  }

  /** The headers that log a change of an id's entry from {@code previous} to {@code next}. */
  static Headers headers(byte[] previous, byte[] next) {
    Headers headers =
        new RecordHeaders().add(new RecordHeader(REPLACES_HEADER, StoreKeys.positionOf(previous)));
    if (next != null && value(next) == null) {
      headers.add(new RecordHeader(MARKER_HEADER, next));
    }
    return headers;
  }

  /** The entry a changelog record restores: its value, or the marker its tombstone carries. */
  public static byte[] entry(ConsumerRecord<byte[], byte[]> record) {
    if (record.value() != null) {
      return record.value();
    }
    Header marker = record.headers().lastHeader(MARKER_HEADER);
    return marker == null ? null : marker.value();
  }

  /**
   * The index position of the entry a changelog record replaced, or null if it does not say (or
   * says it in a form this version cannot read: then the store is read, as for an old record).
   */
  static byte[] replaced(ConsumerRecord<byte[], byte[]> record) {
    Header replaced = record.headers().lastHeader(REPLACES_HEADER);
    return replaced == null || replaced.value() == null || !StoreKeys.isPosition(replaced.value())
        ? null
        : replaced.value();
  }
}

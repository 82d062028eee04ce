package dev.kdelay.topology;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.TenantIds;
import dev.kdelay.topology.internals.RequestTimestamps;
import dev.kdelay.topology.internals.store.ScheduleChangelog;
import dev.kdelay.topology.internals.store.ScheduleEntry;
import dev.kdelay.topology.internals.store.StoreFormat;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.utils.Utils;

/**
 * What moves when a deployment's schedules move to another (`kdelay move`, the way to grow the
 * requests topic's partition count), and in what records.
 *
 * <p>The state of a stopped deployment is its schedule store's changelog: the last record of each
 * id sets its whole entry (state, due time, the request that set it and the stored task with its
 * occurrence, target, payload and headers; a marker travels in a tombstone's header, see {@link
 * #entryOf}). Each live entry, and each marker still ordering late requests, goes to the new
 * requests topic as an <em>import</em>: keyed by the id, the entry's bytes as its value, and the
 * header {@code kdelay-import} naming the application it comes from. The new deployment takes one
 * in only from the application its {@code delay.import.from} names, and applies it as the request
 * that set it would apply, in timestamp order: a cancel sent to the new deployment after that
 * request wins over the moved schedule, whichever arrives first.
 *
 * <p>Requests the stopped deployment had not applied (after its group's committed offsets on the
 * requests and reroute topics) go to the new requests topic as they were sent: their own key,
 * value, headers and timestamp, which orders them ({@link #forwarded}).
 */
public final class ScheduleMove {

  /** What a changelog value holds, as far as a move is concerned. */
  public enum Kind {
    /** A one-shot or recurring schedule that fires at its time. */
    SCHEDULED,
    /** A paused recurring schedule. */
    PAUSED,
    /** A cancel's or a fire's marker that still orders late requests. */
    MARKER,
    /** A marker past its retention: it orders nothing and need not move. */
    EXPIRED_MARKER,
    /** An entry this version cannot read: it moves as it is, and is dead-lettered on arrival. */
    UNREADABLE
  }

  private ScheduleMove() {}

  /**
   * The entry a record of the schedule store's changelog sets for its id: its value while the
   * schedule is live, the marker a tombstone carries for a cancel or a fire, or null for a
   * tombstone that forgets the id.
   */
  public static byte[] entryOf(ConsumerRecord<byte[], byte[]> changelogRecord) {
    return ScheduleChangelog.entry(changelogRecord);
  }

  /** The changelog topic of a deployment's schedule store: each id's entry, keyed by the id. */
  public static String changelogTopic(String applicationId) {
    return StoreFormat.changelogTopic(applicationId);
  }

  /**
   * The import of an id's entry.
   *
   * @param fromApplication the application id the entry comes from
   * @param id the schedule id, the changelog record's key
   * @param entry the changelog record's value
   * @param to the new requests topic
   * @param partitions its partition count: the import goes to the partition its id belongs to
   */
  public static ProducerRecord<byte[], byte[]> imported(
      String fromApplication, byte[] id, byte[] entry, String to, int partitions) {
    Headers headers = new RecordHeaders();
    headers.add(DelayHeaders.IMPORT, fromApplication.getBytes(StandardCharsets.UTF_8));
    return new ProducerRecord<>(to, owner(id, partitions), null, id, entry, headers);
  }

  /**
   * A request the stopped deployment had not applied, as it goes to the new requests topic; empty
   * for a record that is kdelay's own (a task's fence on the reroute topic).
   *
   * @param record the record read from the old requests or reroute topic
   * @param rerouted whether it was read from the reroute topic, whose copies carry their request's
   *     timestamp in {@code delay-requested-at}
   */
  public static Optional<ProducerRecord<byte[], byte[]>> forwarded(
      ConsumerRecord<byte[], byte[]> record, boolean rerouted, String to, int partitions) {
    Headers headers = new RecordHeaders(record.headers().toArray());
    long timestamp = record.timestamp();
    if (rerouted) {
      if (headers.lastHeader(DelayHeaders.FENCE) != null) {
        return Optional.empty();
      }
      long original = RequestTimestamps.requestedAt(headers.lastHeader(DelayHeaders.REQUESTED_AT));
      if (original >= 0) {
        timestamp = original;
      }
      headers.remove(DelayHeaders.REQUESTED_AT);
      headers.remove(DelayHeaders.WAITING);
    }
    // A request without a key is dead-lettered by the new deployment, as the old would have.
    int partition = record.key() == null ? 0 : owner(record.key(), partitions);
    return Optional.of(
        new ProducerRecord<>(
            to,
            partition,
            timestamp >= 0 ? timestamp : null,
            record.key(),
            record.value(),
            headers));
  }

  /**
   * The partition an id belongs to: Kafka's murmur2 of its bytes, as every kdelay reads it; of a
   * tenant's id ({@link TenantIds}), of the id as the tenant sent it, where its producer put it.
   */
  public static int owner(byte[] id, int partitions) {
    return Utils.toPositive(Utils.murmur2(TenantIds.idBytes(id))) % partitions;
  }

  /**
   * What a changelog value holds.
   *
   * @param entry the value; not null (a null value is a deletion)
   * @param nowMs the time a marker's expiry is compared with
   */
  public static Kind kindOf(byte[] entry, long nowMs) {
    if (!(ScheduleEntry.decode(entry) instanceof Decoded.Readable<ScheduleEntry> readable)) {
      return Kind.UNREADABLE;
    }
    ScheduleEntry read = readable.value();
    return switch (read.state()) {
      case SCHEDULED -> Kind.SCHEDULED;
      case PAUSED -> Kind.PAUSED;
      case CANCELLED, FIRED -> read.timeMs() <= nowMs ? Kind.EXPIRED_MARKER : Kind.MARKER;
    };
  }
}

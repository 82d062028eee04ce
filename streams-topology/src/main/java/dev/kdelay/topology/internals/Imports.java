package dev.kdelay.topology.internals;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.Rejection;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.schemas.Schedule;
import dev.kdelay.schemas.StoredTask;
import dev.kdelay.schemas.TenantIds;
import dev.kdelay.schemas.WireText;
import dev.kdelay.topology.Decoded;
import dev.kdelay.topology.ScheduleMove;
import dev.kdelay.topology.internals.store.ScheduleEntry;
import java.util.Optional;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.streams.processor.api.Record;

/**
 * Reads an import, a schedule moved here from another deployment ({@link ScheduleMove}): whether
 * this deployment takes imports from where it comes, and whether its id, entry and task can be
 * read. What it then does with it is the processor's and {@link Schedules#takeIn}'s.
 */
final class Imports {

  /** An import that can be taken in. */
  sealed interface Read permits Taken, Refused {}

  /**
   * @param id the schedule id
   * @param entry the entry as the other deployment held it, its request time counted as {@link
   *     RequestTimestamps#counted} counts a request's
   * @param schedule the stored task's schedule, or null for a marker
   */
  record Taken(String id, ScheduleEntry entry, Schedule schedule) implements Read {}

  /** An import that is dead-lettered, and why. */
  record Refused(Rejection rejection) implements Read {}

  private final String acceptedFrom;
  private final int maxIdBytes;
  private final long maxClockSkewMs;

  /**
   * @param acceptedFrom the application id imports are taken from ({@code delay.import.from}), or
   *     empty for none
   */
  Imports(String acceptedFrom, int maxIdBytes, long maxClockSkewMs) {
    this.acceptedFrom = acceptedFrom;
    this.maxIdBytes = maxIdBytes;
    this.maxClockSkewMs = maxClockSkewMs;
  }

  /** Whether a request record is an import. */
  static boolean isImport(Record<byte[], byte[]> record) {
    return record.headers().lastHeader(DelayHeaders.IMPORT) != null;
  }

  Read read(Record<byte[], byte[]> record, long nowMs) {
    Header from = record.headers().lastHeader(DelayHeaders.IMPORT);
    String source = from.value() == null ? "" : WireText.decode(from.value()).orElse("");
    if (acceptedFrom.isEmpty() || !acceptedFrom.equals(source)) {
      return refused(
          RejectionReason.IMPORT_REFUSED,
          "a schedule moved from application '"
              + source
              + "' (by kdelay move); this deployment takes in moved schedules only from the"
              + " application its delay.import.from names"
              + (acceptedFrom.isEmpty() ? ", and it names none" : ": '" + acceptedFrom + "'"));
    }
    byte[] key = record.key();
    Optional<String> id =
        key == null || key.length == 0 || TenantIds.idBytes(key).length > maxIdBytes
            ? Optional.empty()
            : WireText.decode(key);
    if (id.isEmpty()) {
      return refused(
          RejectionReason.BAD_ID,
          "the moved schedule's id is missing, longer than "
              + maxIdBytes
              + " bytes or not valid UTF-8");
    }
    byte[] value = record.value() == null ? new byte[0] : record.value();
    Decoded<ScheduleEntry> decoded = ScheduleEntry.decode(value);
    if (decoded instanceof Decoded.Unreadable<ScheduleEntry> unreadable) {
      return refused(
          RejectionReason.UNREADABLE_TASK,
          "the moved schedule's entry cannot be read: " + unreadable.error());
    }
    ScheduleEntry entry = ((Decoded.Readable<ScheduleEntry>) decoded).value();
    if (entry.requestMs() - nowMs > maxClockSkewMs) {
      // As a request stamped that far ahead counts (RequestTimestamps.counted): it would pin the
      // id.
      entry = new ScheduleEntry(entry.state(), entry.timeMs(), nowMs, entry.origin(), entry.task());
    }
    if (entry.state().marker()) {
      return new Taken(id.get(), entry, null);
    }
    Decoded<StoredTask> task = entry.decodeTask();
    if (task instanceof Decoded.Unreadable<StoredTask> unreadable) {
      return refused(
          RejectionReason.UNREADABLE_TASK,
          "the moved schedule's task cannot be read: " + unreadable.error());
    }
    return new Taken(id.get(), entry, ((Decoded.Readable<StoredTask>) task).value().schedule());
  }

  private static Refused refused(RejectionReason reason, String message) {
    return new Refused(new Rejection(reason, message));
  }
}

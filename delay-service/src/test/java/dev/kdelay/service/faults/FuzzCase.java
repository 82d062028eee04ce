package dev.kdelay.service.faults;

import dev.kdelay.schemas.RejectionReason;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * One generated request and what kdelay must do with it: fire it once, dead-letter it once with a
 * given code, or neither. Every request carries the header {@value #CASE_HEADER} with its number,
 * which fired records and dead letters keep, so each outcome can be traced back to its case.
 *
 * @param kind what must happen
 * @param code the dead letter's {@code delay-error}, for {@link Kind#DEAD_LETTER}
 * @param targetPartition the partition it must fire to, or -1 for any
 */
record FuzzCase(
    int number,
    String category,
    ProducerRecord<byte[], byte[]> request,
    Kind kind,
    RejectionReason code,
    int targetPartition) {

  static final String CASE_HEADER = "fuzz-case";

  /** What kdelay must do with a request. */
  enum Kind {
    FIRES,
    DEAD_LETTER,
    NOTHING
  }

  /** The headers a fired record must carry before kdelay's own: the request's non-kdelay ones. */
  RecordHeaders carried() {
    RecordHeaders carried = new RecordHeaders();
    for (Header header : request.headers()) {
      if (dev.kdelay.schemas.DelayHeaders.isCarried(header.key())) {
        carried.add(header);
      }
    }
    return carried;
  }

  @Override
  public String toString() {
    String key =
        request.key() == null
            ? "null"
            : request.key().length > 40
                ? request.key().length + " bytes"
                : new String(request.key(), StandardCharsets.UTF_8);
    return "case "
        + number
        + " ("
        + category
        + ", key "
        + key
        + ", expect "
        + kind
        + (code == null ? "" : " " + code)
        + ")";
  }
}

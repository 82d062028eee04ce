package dev.kdelay.topology.internals;

import dev.kdelay.schemas.Rejection;
import dev.kdelay.schemas.RejectionReason;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.utils.Utils;

/**
 * The barrier around each request and each due entry: an exception kdelay did not expect while it
 * works on one of them is that one's failure, not the stream thread's. It is dead-lettered as
 * {@code INTERNAL}, with an error id that its ERROR log line (and stack trace) also carries, and
 * the thread goes on with the next.
 *
 * <p>What concerns the whole thread still stops it: every {@link KafkaException}, which covers
 * Kafka Streams' own ({@code StreamsException}: a fenced producer, a failed send, a state store
 * that cannot write, {@code task.timeout.ms}) and the clients'. kdelay's own code throws none of
 * them for one record.
 *
 * <p>For the barrier to keep "exactly one outcome", the work on one record computes everything it
 * can fail on first, and then writes: a fired record or dead letter is handed to Kafka Streams last
 * (what follows is metrics and logging, which cannot fail the record), and the store write, which
 * can only fail for the whole thread, after it.
 */
final class UnexpectedFailure {

  private UnexpectedFailure() {}

  /** Whether a failure concerns the stream thread rather than the record it was working on. */
  static boolean concernsThread(RuntimeException failure) {
    return failure instanceof KafkaException;
  }

  /**
   * An id for a failure: the same for the same record and failure, so that a retry after a restart
   * logs and dead-letters it under the same id.
   *
   * @param record what failed, stably: a request's source position, or an entry's id and due time
   */
  static String errorId(String record, Throwable failure) {
    byte[] bytes = (record + "|" + failure.getClass().getName()).getBytes(StandardCharsets.UTF_8);
    return String.format("%08x", Utils.murmur2(bytes));
  }

  /** The rejection of a record kdelay failed on. */
  static Rejection rejection(String what, String errorId, Throwable failure) {
    return new Rejection(
        RejectionReason.INTERNAL,
        "kdelay failed on this " + what + " (error id " + errorId + ", see the log): " + failure);
  }
}

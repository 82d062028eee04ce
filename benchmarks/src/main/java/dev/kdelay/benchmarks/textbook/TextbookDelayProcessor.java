package dev.kdelay.benchmarks.textbook;

import dev.kdelay.schemas.DelayHeaders;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The textbook delay of one task: each request is one put into the store, keyed in due order; a
 * wall-clock punctuator forwards what is due and deletes it. Runs on the stream thread only.
 */
final class TextbookDelayProcessor implements Processor<byte[], byte[], RoutedKey, byte[]> {

  private static final byte[] NO_ID = new byte[0];

  private final Clock clock;
  private ProcessorContext<RoutedKey, byte[]> context;
  private KeyValueStore<Bytes, byte[]> pending;

  /**
   * No entry of this task's store is due before this time (the invariant every scan relies on):
   * intake lowers it, a scan raises it to the first entry it left. Kept in memory, so after a
   * (re)start the first scan goes from the start of the store, once. Scanning from zero every time
   * instead walks the tombstone of every entry fired so far, which RocksDB keeps until compaction:
   * the scan slows with every fire and the app collapses.
   */
  private long earliestDueMs = Long.MIN_VALUE;

  TextbookDelayProcessor(Clock clock) {
    this.clock = clock;
  }

  @Override
  public void init(ProcessorContext<RoutedKey, byte[]> context) {
    this.context = context;
    this.pending = context.getStateStore(TextbookDelay.STORE);
    context.schedule(TextbookDelay.PUNCTUATE_INTERVAL, PunctuationType.WALL_CLOCK_TIME, this::fire);
  }

  /** Stores a request until it is due; records without the two headers are not requests. */
  @Override
  public void process(Record<byte[], byte[]> request) {
    Header fireAt = request.headers().lastHeader(DelayHeaders.FIRE_AT);
    Header target = request.headers().lastHeader(DelayHeaders.TARGET_TOPIC);
    if (fireAt == null || target == null) {
      return;
    }
    long dueMs = Long.parseLong(new String(fireAt.value(), StandardCharsets.UTF_8));
    Headers carried = new RecordHeaders();
    for (Header header : request.headers()) {
      if (!header.key().equals(DelayHeaders.FIRE_AT)
          && !header.key().equals(DelayHeaders.TARGET_TOPIC)) {
        carried.add(header);
      }
    }
    String topic = new String(target.value(), StandardCharsets.UTF_8);
    byte[] id = request.key() == null ? NO_ID : request.key();
    pending.put(
        Bytes.wrap(DueOrderKey.of(dueMs, id)),
        new PendingRecord(topic, carried, request.value()).toBytes());
    earliestDueMs = Math.min(earliestDueMs, dueMs);
  }

  /**
   * Forwards the entries due by {@code nowMs}, at most {@link
   * TextbookDelay#MAX_FIRES_PER_PUNCTUATION} so that the thread goes back to polling, and deletes
   * them: a fired record and a tombstone each, in the transaction of the next commit.
   */
  private void fire(long nowMs) {
    if (earliestDueMs > nowMs) {
      return; // nothing due: no scan at all
    }
    List<Bytes> fired = new ArrayList<>();
    long firstLeftMs = Long.MAX_VALUE;
    // Open-ended: the first entry not fired tells where the next scan starts.
    try (KeyValueIterator<Bytes, byte[]> entries =
        pending.range(Bytes.wrap(DueOrderKey.firstDueAt(earliestDueMs)), null)) {
      while (entries.hasNext()) {
        KeyValue<Bytes, byte[]> entry = entries.next();
        long dueMs = DueOrderKey.dueMs(entry.key.get());
        if (dueMs > nowMs || fired.size() == TextbookDelay.MAX_FIRES_PER_PUNCTUATION) {
          firstLeftMs = dueMs;
          break;
        }
        forward(entry.key.get(), dueMs, PendingRecord.fromBytes(entry.value));
        fired.add(entry.key);
      }
    }
    fired.forEach(pending::delete);
    earliestDueMs = firstLeftMs;
  }

  /** The fired record, with the two headers the benchmark's probe reads: due and fired times. */
  private void forward(byte[] key, long dueMs, PendingRecord record) {
    long firedMs = clock.millis();
    Headers headers = record.headers();
    headers.add(DelayHeaders.DUE_AT, ascii(dueMs));
    headers.add(DelayHeaders.FIRED_AT, ascii(firedMs));
    context.forward(
        new Record<>(
            new RoutedKey(record.topic(), DueOrderKey.id(key)),
            record.payload(),
            firedMs,
            headers));
  }

  private static byte[] ascii(long value) {
    return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
  }
}

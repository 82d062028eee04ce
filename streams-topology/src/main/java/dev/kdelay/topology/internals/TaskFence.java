package dev.kdelay.topology.internals;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.topology.internals.delivery.FiredKey;
import dev.kdelay.topology.internals.delivery.Sinks;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;

/**
 * Exactly once: a task fires nothing until it has consumed a record, so that every transaction
 * carrying its fires also carries its input offsets, and with them the consumer group generation
 * that fences a zombie.
 *
 * <p>Under {@code exactly_once_v2} an instance that lost its partitions without knowing it (a long
 * pause, a network partition) is stopped from committing by the group coordinator, which checks the
 * generation sent with the transaction's offsets. A task that consumed nothing since it was
 * assigned has no offsets to send, and {@code KafkaProducer.sendOffsetsToTransaction} sends nothing
 * for an empty map: a transaction of fires alone would commit, and the new owner would fire the
 * same tasks again. (Kafka Streams 4.3.1: {@code StreamTask.committableOffsetsAndMetadata} lists
 * only partitions the task consumed from.) So a task that has consumed nothing writes a fence
 * record to its own partition of the reroute topic, kdelay's own input, and fires once it has read
 * a record: the fence, or any request before it. The cost is one commit and one fetch when a task
 * starts (a restart, a rebalance), never per fire.
 *
 * <p>A fence record is keyed {@code kdelay-fence/<partition>}, has no value and carries the header
 * {@value #HEADER}; the processor takes it for nothing else. An older kdelay reading one takes it
 * for the cancel of an id nobody uses.
 *
 * <p>One per task; runs on the stream thread only.
 */
final class TaskFence {

  /** The header that marks a fence record. */
  static final String HEADER = DelayHeaders.FENCE;

  private final boolean needed;
  private final String rerouteTopic;
  private final int partition;
  private boolean up;
  private boolean sent;

  /**
   * @param needed whether the application runs exactly once
   * @param rerouteTopic where the fence goes: kdelay's own input topic
   * @param partition the task's partition
   */
  TaskFence(boolean needed, String rerouteTopic, int partition) {
    this.needed = needed;
    this.rerouteTopic = rerouteTopic;
    this.partition = partition;
  }

  /** Notes that the task consumed a record: its commits carry its offsets from now on. */
  void consumed() {
    up = true;
  }

  /** Whether a consumed record is a fence: read from the reroute topic, with the fence header. */
  boolean isFence(Record<byte[], byte[]> record, Optional<RecordMetadata> source) {
    return record.headers().lastHeader(HEADER) != null
        && source.map(metadata -> rerouteTopic.equals(metadata.topic())).orElse(false);
  }

  /**
   * Whether the task may fire now. If not, the fence goes out (once), with its commit asked for.
   */
  boolean mayFire(ProcessorContext<Object, Object> context) {
    if (!needed || up) {
      return true;
    }
    if (!sent) {
      byte[] key = ("kdelay-fence/" + partition).getBytes(StandardCharsets.UTF_8);
      RecordHeaders headers = new RecordHeaders();
      headers.add(HEADER, Integer.toString(partition).getBytes(StandardCharsets.UTF_8));
      context.forward(
          new Record<>(
              new FiredKey(rerouteTopic, key, partition),
              null,
              context.currentSystemTimeMs(),
              headers),
          Sinks.FIRE_PARTITIONED);
      context.commit();
      sent = true;
    }
    return false;
  }
}

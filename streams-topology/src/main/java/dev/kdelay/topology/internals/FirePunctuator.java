package dev.kdelay.topology.internals;

import org.apache.kafka.streams.processor.Punctuator;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

/**
 * Fires due tasks on wall-clock time.
 *
 * <p>A punctuation with nothing due returns from memory. Otherwise it fires due entries in due
 * order, at most {@code maxFires} of them so that the stream thread gets back to polling,
 * heartbeats and commits under a backlog, and then asks for a commit: under exactly-once the fired
 * records become visible to {@code read_committed} consumers when the transaction commits, and
 * waiting for the regular commit interval would add up to that interval to every task's lateness.
 *
 * <p>Exactly once: the fired record, the deletion of the entry and (for cron) the next occurrence
 * are all in the same transaction, with the input offsets. A crash before the commit aborts all of
 * them and the new owner fires the task again from the restored store; a crash after it leaves
 * nothing to redo.
 *
 * <p>Runs on the stream thread only.
 */
final class FirePunctuator implements Punctuator {

  private final ProcessorContext<Object, Object> context;
  private final TaskStore tasks;
  private final Schedules schedules;
  private final int maxFires;

  FirePunctuator(
      ProcessorContext<Object, Object> context,
      TaskStore tasks,
      Schedules schedules,
      int maxFires) {
    this.context = context;
    this.tasks = tasks;
    this.schedules = schedules;
    this.maxFires = maxFires;
  }

  @Override
  public void punctuate(long timestamp) {
    long now = context.currentSystemTimeMs();
    if (!tasks.mayHaveDue(now)) {
      return;
    }
    int fired =
        tasks.drainDue(now, maxFires, (key, value) -> schedules.onDue(key, value, now, this::send));
    if (fired > 0) {
      context.commit();
    }
  }

  private void send(Record<FiredKey, byte[]> record) {
    String sink =
        record.key().partition() == FiredKey.ANY_PARTITION
            ? Names.FIRE_SINK
            : Names.FIRE_PARTITIONED_SINK;
    context.forward(record, sink);
  }
}

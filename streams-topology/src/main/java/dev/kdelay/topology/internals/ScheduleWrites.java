package dev.kdelay.topology.internals;

import dev.kdelay.topology.internals.HeldWrites.Write;
import dev.kdelay.topology.internals.delivery.Delivery;
import dev.kdelay.topology.internals.store.MeteredScheduleStore;
import dev.kdelay.topology.internals.store.MeteredScheduleStore.Due;
import dev.kdelay.topology.internals.store.MeteredScheduleStore.Stored;
import dev.kdelay.topology.internals.store.ScheduleEntry;
import dev.kdelay.topology.internals.store.ScheduleEntry.State;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.utils.Bytes;

/**
 * Every change of a partition's schedules goes through here: made in the store at once, or, at
 * least once, held until a commit has flushed the fire it records ({@link HeldWrites}, which this
 * class alone owns). Each write made tells the partition's gauges how the id's state changed.
 *
 * <p>Runs on the stream thread only.
 */
final class ScheduleWrites {

  private final MeteredScheduleStore store;
  private final PartitionState gauges;

  /** Whether writes that follow a fire wait for the commit that flushes it (at least once). */
  private final boolean holdFireWrites;

  private final HeldWrites held = new HeldWrites();

  ScheduleWrites(MeteredScheduleStore store, PartitionState gauges, boolean holdFireWrites) {
    this.store = store;
    this.gauges = gauges;
    this.holdFireWrites = holdFireWrites;
  }

  /**
   * Changes an id's entry: at once, or held when it records a fire and fire writes are held.
   *
   * @param next the new entry, or null to forget the id
   * @param afterFire whether the write records a fire (or a dead letter) made just before
   */
  void write(String id, Stored previous, ScheduleEntry next, boolean afterFire) {
    if (afterFire && holdFireWrites) {
      held.hold(id, new Write(previous, next));
    } else {
      make(id, new Write(previous, next));
    }
  }

  /** Notes a due entry handled: while writes are held, the next scan starts after it. */
  void handled(Due due) {
    held.handled(due);
  }

  /** How many ids have a write held. */
  int heldCount() {
    return held.count();
  }

  /**
   * What the next due batch may take beside the held writes (see {@link HeldWrites#room}); called
   * once at the start of each due scan.
   */
  HeldWrites.Room heldRoom(int maxFires, long maxBytes) {
    return held.room(maxFires, maxBytes);
  }

  /** Whether the id has a write held: its due entry in the store was handled already. */
  boolean isHeld(String id) {
    return held.contains(id);
  }

  /** Notes that a commit of the task began (see {@link HeldWrites#committing}). */
  void committing() {
    held.committing();
  }

  /**
   * Makes the held writes if a commit has flushed their fires since they were made; called first in
   * every punctuation and request.
   */
  void releaseIfCommitted() {
    held.releaseIfCommitted().forEach(write -> make(write.getKey(), write.getValue()));
  }

  /** Makes a write in the store and tells the gauges how the id's state changed. */
  private void make(String id, Write write) {
    ScheduleEntry next = write.next();
    store.write(id, write.previous(), next);
    Delivery.afterward(
        () ->
            gauges.transition(
                idBytes(id), stateOf(write.previous()), next == null ? null : next.state()));
  }

  /** The state of what was stored; null for nothing, or for an entry that cannot be read. */
  private static State stateOf(Stored stored) {
    return stored == null || !stored.entry().isReadable() ? null : stored.entry().value().state();
  }

  private static Bytes idBytes(String id) {
    return Bytes.wrap(id.getBytes(StandardCharsets.UTF_8));
  }
}

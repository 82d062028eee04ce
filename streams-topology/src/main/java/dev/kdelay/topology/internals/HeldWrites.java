package dev.kdelay.topology.internals;

import dev.kdelay.topology.internals.store.MeteredScheduleStore.Due;
import dev.kdelay.topology.internals.store.MeteredScheduleStore.Stored;
import dev.kdelay.topology.internals.store.ScheduleEntry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * At least once, the writes that follow a fire, held in memory until a commit of the partition's
 * task has flushed the producer.
 *
 * <p>At least once, a fired record and the write that records the fire (a one-shot's marker, a
 * schedule's next occurrence) are separate sends, not one transaction: the write could reach the
 * store and its changelog while the record is still unsent, and a crash, or a record the broker
 * refuses, would then lose the fire for good, since nothing would fire the task again. So the write
 * waits here until a commit has flushed the producer (every one of its records acknowledged, or the
 * stream thread failed instead), and is made then ({@link #releaseIfCommitted}). A crash or failure
 * before that leaves the task pending in the store: it fires again, or is dead-lettered if the
 * broker refused it ({@link dev.kdelay.topology.internals.delivery.DeliveryQuarantine}), and a
 * consumer sees at worst a repeat with the same idempotency key.
 *
 * <p>A request for an id with a held write is not applied while it is held: the processor sends it
 * round the reroute topic, to the same partition, and applies it when it comes back. Applied at
 * once, its write would have to wait with the held one for the next commit, which also commits the
 * request's offset: a task closed after that commit and before the write (every rebalance and
 * rolling restart closes tasks so) would lose the request for good. Written to the reroute topic,
 * it is flushed by the same commit that commits its offset; it keeps its timestamp there, and
 * requests for an id apply in timestamp order (as rerouted requests always have), so the detour
 * changes no outcome but that of a tie. Exactly once nothing is held: the transaction already
 * commits the record with its write.
 *
 * <p>Runs on the stream thread only.
 */
final class HeldWrites {

  /**
   * A change of an id's entry.
   *
   * @param previous what the store holds for the id, or null
   * @param next what replaces it, or null to forget the id
   */
  record Write(Stored previous, ScheduleEntry next) {}

  /** The held writes, by id, in the order they were made. */
  private final Map<String, Write> held = new LinkedHashMap<>();

  /** The stored bytes the held writes keep (the entries they replace). */
  private long bytes;

  /** A commit of the task began since the writes now held were made. */
  private boolean committed;

  /**
   * While writes are held: the last due entry handled. The next due scan starts after it rather
   * than reading the held entries again. Null when nothing is held.
   */
  private Due lastHandled;

  /**
   * What a due batch may take while writes are held, so that what they keep in memory stays bounded
   * as one batch is.
   *
   * @param fires fires the batch may make, besides the held ones; 0 once a batch's worth is held
   * @param bytes stored bytes the batch may read, besides those the held writes keep
   * @param after where the scan starts: after the last entry handled, or null from the start
   * @param held whether writes are held: their entries are still due, and passed over
   */
  record Room(int fires, long bytes, Due after, boolean held) {

    /** A batch's worth (in count or bytes) is held: nothing more is taken until a commit. */
    boolean full() {
      return fires <= 0 || bytes <= 0;
    }
  }

  /** Holds a write that records a fire. */
  void hold(String id, Write write) {
    held.put(id, write);
    bytes += write.previous() == null ? 0 : write.previous().raw().length;
  }

  /** Whether the id has a write held: its due entry in the store was handled already. */
  boolean contains(String id) {
    return held.containsKey(id);
  }

  /**
   * What the next due batch may take, for a batch of at most {@code maxFires} fires and {@code
   * maxBytes} stored bytes; called once at the start of each due scan.
   */
  Room room(int maxFires, long maxBytes) {
    if (held.isEmpty()) {
      lastHandled = null;
      return new Room(maxFires, maxBytes, null, false);
    }
    return new Room(maxFires - held.size(), maxBytes - bytes, lastHandled, true);
  }

  /**
   * Notes a due entry handled: while writes are held, the next scan starts after the one due
   * latest. A batch is handled in {@link DueOrder}, which can put an entry due later in the index
   * before one due sooner.
   */
  void handled(Due due) {
    if (lastHandled == null || due.dueMs() >= lastHandled.dueMs()) {
      lastHandled = due;
    }
  }

  /** How many ids have a write held. */
  int count() {
    return held.size();
  }

  /** The stored bytes the held writes keep in memory: the entries they replace. */
  long bytes() {
    return bytes;
  }

  /**
   * Notes that a commit of the task began: called on the stream thread when Kafka Streams prepares
   * the store for it, just before it flushes the task's records. The next call on the task comes
   * after that flush succeeded; had it failed, the stream thread would have failed with it.
   */
  void committing() {
    committed = !held.isEmpty();
  }

  /**
   * The held writes, in the order they were made, if a commit has flushed their fires since: they
   * are no longer held, and the caller makes them. Empty otherwise.
   */
  List<Map.Entry<String, Write>> releaseIfCommitted() {
    if (!committed) {
      return List.of();
    }
    committed = false;
    List<Map.Entry<String, Write>> writes = new ArrayList<>(held.entrySet());
    held.clear();
    bytes = 0;
    return writes;
  }
}

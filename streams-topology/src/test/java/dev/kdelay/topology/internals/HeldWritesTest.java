package dev.kdelay.topology.internals;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.topology.Decoded;
import dev.kdelay.topology.internals.HeldWrites.Room;
import dev.kdelay.topology.internals.HeldWrites.Write;
import dev.kdelay.topology.internals.store.MeteredScheduleStore.Due;
import dev.kdelay.topology.internals.store.MeteredScheduleStore.Stored;
import org.junit.jupiter.api.Test;

/** The due batch's room beside the held writes, and where its scan starts. */
class HeldWritesTest {

  private final HeldWrites held = new HeldWrites();

  @Test
  void shouldGiveAWholeBatchFromTheStartWhenNothingIsHeld() {
    held.handled(due("a", 10)); // handled, but its write was not held (exactly once)

    assertThat(held.room(100, 1_000)).isEqualTo(new Room(100, 1_000, null, false));
  }

  @Test
  void shouldLeaveWhatTheHeldWritesTakeAndStartAfterTheLastEntryHandled() {
    Due a = due("a", 10);
    held.handled(a);
    held.hold("a", new Write(a.stored(), null));

    Room room = held.room(100, 1_000);

    assertThat(room).isEqualTo(new Room(99, 1_000 - 3, a, true));
    assertThat(room.full()).isFalse();
  }

  @Test
  void shouldBeFullOnceABatchsWorthIsHeldInCountOrInBytes() {
    Due a = due("a", 10);
    held.hold("a", new Write(a.stored(), null));

    assertThat(held.room(1, 1_000).full()).isTrue();
    assertThat(held.room(100, 3).full()).isTrue();
    assertThat(held.room(100, 4).full()).isFalse();
  }

  @Test
  void shouldForgetWhereTheScanStoppedOnceTheHeldWritesAreReleased() {
    Due a = due("a", 10);
    held.handled(a);
    held.hold("a", new Write(a.stored(), null));

    held.committing();
    assertThat(held.releaseIfCommitted()).hasSize(1);

    assertThat(held.room(100, 1_000)).isEqualTo(new Room(100, 1_000, null, false));
    held.hold("b", new Write(due("b", 20).stored(), null));
    assertThat(held.room(100, 1_000).after()).isNull();
  }

  private static Due due(String id, long dueMs) {
    byte[] raw = {1, 2, 3};
    return new Due(new Stored(id, raw, new Decoded.Unreadable<>("not read in this test")), dueMs);
  }
}

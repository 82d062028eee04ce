package dev.kdelay.topology.internals.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.topology.Decoded;
import dev.kdelay.topology.internals.store.ScheduleEntry.Origin;
import dev.kdelay.topology.internals.store.ScheduleEntry.State;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/**
 * The entry's two formats: 3, with the origin of its request, and 2, as earlier versions wrote and
 * a rolling upgrade writes.
 */
class ScheduleEntryTest {

  private static final byte[] TASK = {1, 2, 3};

  @Test
  void shouldReadBackWhatItWritesWithItsOrigin() {
    ScheduleEntry entry =
        new ScheduleEntry(State.SCHEDULED, 5_000, 42, new Origin(Origin.REROUTED, -7L), TASK);

    byte[] bytes = entry.toBytes();

    assertThat(bytes[0]).isEqualTo(ScheduleEntry.FORMAT_3);
    assertThat(bytes).hasSize(ScheduleEntry.FORMAT_3_HEADER_BYTES + TASK.length);
    assertThat(ScheduleEntry.decode(bytes).value()).isEqualTo(entry);
    assertThat(ScheduleEntry.timeOf(bytes)).isEqualTo(5_000);
  }

  @Test
  void shouldReadAnEntryAnEarlierVersionWroteWithAnUnknownOrigin() {
    byte[] format2 =
        ByteBuffer.allocate(ScheduleEntry.HEADER_BYTES + TASK.length)
            .put(ScheduleEntry.FORMAT_2)
            .put((byte) State.PAUSED.ordinal())
            .putLong(Long.MAX_VALUE)
            .putLong(42)
            .put(TASK)
            .array();
    byte[] marker2 =
        ByteBuffer.allocate(ScheduleEntry.HEADER_BYTES)
            .put(ScheduleEntry.FORMAT_2)
            .put((byte) State.FIRED.ordinal())
            .putLong(9_000)
            .putLong(42)
            .array();

    ScheduleEntry paused = ScheduleEntry.decode(format2).value();
    ScheduleEntry fired = ScheduleEntry.decode(marker2).value();

    assertThat(paused.origin()).isEqualTo(Origin.UNKNOWN);
    assertThat(paused.task()).isEqualTo(TASK);
    assertThat(fired.state()).isEqualTo(State.FIRED);
    assertThat(fired.timeMs()).isEqualTo(9_000);
  }

  @Test
  void shouldWriteFormatTwoForARollingUpgradeAsAnEarlierVersionWroteIt() {
    ScheduleEntry entry =
        new ScheduleEntry(State.SCHEDULED, 5_000, 42, new Origin(Origin.REQUESTS, 99L), TASK);

    byte[] bytes = entry.toBytes(ScheduleEntry.FORMAT_2);

    // byte for byte what the test above reads as an earlier version's entry
    assertThat(bytes)
        .isEqualTo(
            ByteBuffer.allocate(ScheduleEntry.HEADER_BYTES + TASK.length)
                .put(ScheduleEntry.FORMAT_2)
                .put((byte) State.SCHEDULED.ordinal())
                .putLong(5_000)
                .putLong(42)
                .put(TASK)
                .array());
    ScheduleEntry read = ScheduleEntry.decode(bytes).value();
    assertThat(read.origin()).isEqualTo(Origin.UNKNOWN);
    assertThat(read.task()).isEqualTo(TASK);
    assertThat(read.timeMs()).isEqualTo(5_000);
    assertThat(read.requestMs()).isEqualTo(42);
  }

  @Test
  void shouldFindAMarkerOfFormatThreeExactlyItsHeaderLong() {
    byte[] marker =
        ScheduleEntry.marker(State.CANCELLED, 1_000, 5, new Origin(Origin.REQUESTS, 1)).toBytes();

    assertThat(marker).hasSize(ScheduleEntry.FORMAT_3_HEADER_BYTES);
    assertThat(ScheduleEntry.decode(marker).isReadable()).isTrue();
    assertThat(ScheduleEntry.decode(java.util.Arrays.copyOf(marker, marker.length + 1)))
        .isInstanceOf(Decoded.Unreadable.class);
  }

  @Test
  void shouldCallAnUnknownOriginOrFormatDamage() {
    byte[] bytes = ScheduleEntry.marker(State.FIRED, 1, 1, Origin.UNKNOWN).toBytes();
    for (byte known : new byte[] {Origin.NONE, Origin.REQUESTS, Origin.REROUTED}) {
      bytes[ScheduleEntry.HEADER_BYTES] = known;
      assertThat(ScheduleEntry.damage(bytes)).as("origin %d", known).isNull();
    }
    for (byte unknown : new byte[] {-1, 3, 9, Byte.MIN_VALUE, Byte.MAX_VALUE}) {
      bytes[ScheduleEntry.HEADER_BYTES] = unknown;
      assertThat(ScheduleEntry.damage(bytes)).as("origin %d", unknown).contains("origin");
    }

    bytes[0] = 4;
    assertThat(ScheduleEntry.damage(bytes)).contains("format 4");
  }
}

package dev.kdelay.topology.internals.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.topology.internals.store.ScheduleEntry.State;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

/** What the change logging writes for each change of an entry, read back as a restore reads it. */
class ScheduleChangelogTest {

  private static final byte[] LIVE =
      new ScheduleEntry(State.SCHEDULED, 5_000, 1, new byte[] {7}).toBytes();
  private static final byte[] FIRED =
      ScheduleEntry.marker(State.FIRED, 90_000, 2, ScheduleEntry.Origin.UNKNOWN).toBytes();

  @Test
  void shouldLogALiveEntryAsItsValue() {
    // when
    ConsumerRecord<byte[], byte[]> record = logged(null, LIVE);

    // then
    assertThat(record.value()).isEqualTo(LIVE);
    assertThat(record.headers().lastHeader(ScheduleChangelog.MARKER_HEADER)).isNull();
    assertThat(ScheduleChangelog.entry(record)).isEqualTo(LIVE);
    assertThat(ScheduleChangelog.replaced(record)).isEqualTo(StoreKeys.positionOf(null));
  }

  @Test
  void shouldLogAMarkerAsATombstoneThatCarriesItAndSaysWhereTheLiveEntrySat() {
    // when
    ConsumerRecord<byte[], byte[]> record = logged(LIVE, FIRED);

    // then: compaction forgets the id, a restore brings the marker back
    assertThat(record.value()).isNull();
    assertThat(ScheduleChangelog.entry(record)).isEqualTo(FIRED);
    assertThat(ScheduleChangelog.replaced(record)).isEqualTo(StoreKeys.positionOf(LIVE));
  }

  @Test
  void shouldLogAForgottenIdAsAPlainTombstone() {
    // when
    ConsumerRecord<byte[], byte[]> record = logged(FIRED, null);

    // then
    assertThat(record.value()).isNull();
    assertThat(record.headers().lastHeader(ScheduleChangelog.MARKER_HEADER)).isNull();
    assertThat(ScheduleChangelog.entry(record)).isNull();
    assertThat(ScheduleChangelog.replaced(record)).isEqualTo(StoreKeys.positionOf(FIRED));
  }

  @Test
  void shouldReadARecordWithoutAReplacesHeaderAsNotSayingWhatItReplaced() {
    // given: a record written before the header existed
    ConsumerRecord<byte[], byte[]> old = new ConsumerRecord<>("changelog", 0, 0, id(), LIVE);

    // then: the restore reads the store for it
    assertThat(ScheduleChangelog.replaced(old)).isNull();
    assertThat(ScheduleChangelog.entry(old)).isEqualTo(LIVE);
  }

  /** The changelog record of a change from {@code previous} to {@code next}. */
  private static ConsumerRecord<byte[], byte[]> logged(byte[] previous, byte[] next) {
    return new ConsumerRecord<>(
        "changelog",
        0,
        0,
        0,
        TimestampType.CREATE_TIME,
        0,
        0,
        id(),
        ScheduleChangelog.value(next),
        ScheduleChangelog.headers(previous, next),
        Optional.empty());
  }

  private static byte[] id() {
    return "order-42".getBytes(StandardCharsets.UTF_8);
  }
}

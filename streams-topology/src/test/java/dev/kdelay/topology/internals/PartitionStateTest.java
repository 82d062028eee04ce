package dev.kdelay.topology.internals;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.topology.PartitionGauges;
import dev.kdelay.topology.internals.store.RocksDBScheduleStore;
import dev.kdelay.topology.internals.store.ScheduleEntry;
import dev.kdelay.topology.internals.store.ScheduleEntry.State;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Counting the schedules a partition starts with, while they change. */
class PartitionStateTest {

  @TempDir Path stateDir;
  private final RocksDBScheduleStore entries = new RocksDBScheduleStore("schedules");
  private final PartitionState state = new PartitionState(3);

  @BeforeEach
  void open() {
    entries.openDb(stateDir.toFile(), Map.of());
  }

  @AfterEach
  void close() {
    entries.close();
  }

  @Test
  void shouldCountStoredSchedulesStepByStepWhenThePartitionOpens() {
    // given: ids 00..09 scheduled, 10..12 paused, 13..14 cancelled
    for (int i = 0; i < 15; i++) {
      store(i, i < 10 ? State.SCHEDULED : i < 13 ? State.PAUSED : State.CANCELLED);
    }

    // when / then: published only once complete
    assertThat(state.countSome(entries, 4)).isFalse();
    assertThat(state.pendingTasks()).isEqualTo(PartitionGauges.COUNTING);
    assertThat(state.pausedSchedules()).isEqualTo(PartitionGauges.COUNTING);
    assertThat(state.countSome(entries, 4)).isFalse();
    assertThat(state.countSome(entries, 4)).isFalse();
    assertThat(state.countSome(entries, 4)).isTrue();
    assertThat(state.pendingTasks()).isEqualTo(10);
    assertThat(state.pausedSchedules()).isEqualTo(3);
    assertThat(state.partition()).isEqualTo(3);
  }

  @Test
  void shouldSkipAnUnreadableEntryInsteadOfFailingTheCount() {
    // given: three scheduled ids and one whose entry cannot be read
    for (int i = 0; i < 3; i++) {
      store(i, State.SCHEDULED);
    }
    entries.write(id(7).get(), null, new byte[] {1, 42});

    // when
    boolean counted = state.countSome(entries, 100);

    // then
    assertThat(counted).isTrue();
    assertThat(state.pendingTasks()).isEqualTo(3);
  }

  @Test
  void shouldCountChangesOnBothSidesOfTheScanWhileCounting() {
    // given: ten scheduled ids, the first four counted
    for (int i = 0; i < 10; i++) {
      store(i, State.SCHEDULED);
    }
    state.countSome(entries, 4);

    // when: an id behind the scan and one ahead of it fire, and a new id ahead is scheduled
    fire(1);
    fire(8);
    store(11, State.SCHEDULED);
    state.transition(id(11), null, State.SCHEDULED);
    while (!state.countSome(entries, 4)) {
      // counting on
    }

    // then
    assertThat(state.pendingTasks()).isEqualTo(9);

    // and once counted, every change counts
    fire(2);
    assertThat(state.pendingTasks()).isEqualTo(8);
  }

  @Test
  void shouldCountEachTenantsStoredSchedulesOnceCounted() {
    // given: teama holds three (one paused) and a cancelled marker, teamb one, plain ids two
    storeAs("teama", "a1", State.SCHEDULED);
    storeAs("teama", "a2", State.PAUSED);
    storeAs("teama", "a3", State.SCHEDULED);
    storeAs("teama", "a4", State.CANCELLED);
    storeAs("teamb", "b1", State.SCHEDULED);
    store(1, State.SCHEDULED);
    store(2, State.SCHEDULED);

    // when: counted in steps
    assertThat(state.countSome(entries, 3)).isFalse();
    // then: nothing is said until the count is complete
    assertThat(state.storedOf("teama")).isEmpty();
    assertThat(state.storedByTenant()).isNull();
    while (!state.countSome(entries, 3)) {
      // counting on
    }
    assertThat(state.storedOf("teama")).hasValue(3);
    assertThat(state.storedByTenant()).isEqualTo(Map.of("teama", 3L, "teamb", 1L));
    assertThat(state.storedOf("teamb")).hasValue(1);
    assertThat(state.storedOf("teamc")).hasValue(0);

    // and: a fire, a pause and a new schedule count as they happen
    state.transition(kept("teama", "a1"), State.SCHEDULED, null);
    state.transition(kept("teama", "a3"), State.SCHEDULED, State.PAUSED);
    state.transition(kept("teamb", "b2"), null, State.SCHEDULED);
    state.transition(kept("teamb", "b3"), State.CANCELLED, State.SCHEDULED);
    assertThat(state.storedOf("teama")).hasValue(2);
    assertThat(state.storedOf("teamb")).hasValue(3);
    assertThat(state.pendingTasks()).isEqualTo(5);
    // published to the metrics at the next punctuation, not at every change
    assertThat(state.storedByTenant()).isEqualTo(Map.of("teama", 3L, "teamb", 1L));
    state.punctuated(PartitionGauges.NONE, PartitionGauges.NONE);
    assertThat(state.storedByTenant()).isEqualTo(Map.of("teama", 2L, "teamb", 3L));
  }

  @Test
  void shouldCountAnEmptyPartitionAtOnce() {
    assertThat(state.countSome(entries, 4)).isTrue();
    assertThat(state.pendingTasks()).isZero();
    assertThat(state.nextDueMs()).isEqualTo(PartitionGauges.UNKNOWN);
  }

  @Test
  void shouldPublishWhatAPunctuationLearnt() {
    state.punctuated(1_000, 900);
    assertThat(state.nextDueMs()).isEqualTo(1_000);
    assertThat(state.overdueSinceMs()).isEqualTo(900);
  }

  private void store(int i, State s) {
    byte[] task = s.marker() ? new byte[0] : new byte[] {1};
    entries.write(id(i).get(), null, new ScheduleEntry(s, 1_000 + i, 0, task).toBytes());
  }

  private void fire(int i) {
    entries.write(id(i).get(), entries.get(id(i).get()), null);
    state.transition(id(i), State.SCHEDULED, null);
  }

  private void storeAs(String tenant, String id, State s) {
    byte[] task = s.marker() ? new byte[0] : new byte[] {1};
    entries.write(kept(tenant, id).get(), null, new ScheduleEntry(s, 1_000, 0, task).toBytes());
  }

  private static Bytes kept(String tenant, String id) {
    return Bytes.wrap(
        dev.kdelay.schemas.TenantIds.qualified(tenant, id).getBytes(StandardCharsets.UTF_8));
  }

  private static Bytes id(int i) {
    return Bytes.wrap(String.format("id-%02d", i).getBytes(StandardCharsets.UTF_8));
  }
}

package dev.kdelay.topology;

import dev.kdelay.topology.internals.store.ChangeLoggingScheduleStore;
import dev.kdelay.topology.internals.store.MeteredScheduleStore;
import dev.kdelay.topology.internals.store.RocksDBScheduleStore;
import dev.kdelay.topology.internals.store.ScheduleEntry;
import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.Map;
import org.apache.kafka.streams.TopologyTestDriver;

/** What a test driver's schedule store holds, for assertions; and a way to damage it. */
final class StoredSchedules {

  private StoredSchedules() {}

  static MeteredScheduleStore of(TopologyTestDriver driver) {
    return (MeteredScheduleStore) driver.getStateStore(DelayTopology.SCHEDULES_STORE);
  }

  /** How many ids have an entry. */
  static long entries(TopologyTestDriver driver) {
    return states(driver).values().stream().mapToLong(Long::longValue).sum();
  }

  /** How many entries are in each state; unreadable ones are not counted. */
  static Map<ScheduleEntry.State, Long> states(TopologyTestDriver driver) {
    Map<ScheduleEntry.State, Long> states = new EnumMap<>(ScheduleEntry.State.class);
    of(driver)
        .bytes()
        .scanEntries(
            null,
            Integer.MAX_VALUE,
            (id, entry) ->
                states.merge(ScheduleEntry.decode(entry).value().state(), 1L, Long::sum));
    return states;
  }

  /** Damages the task an id's live entry holds, its header left readable. */
  static void damageTask(TopologyTestDriver driver, String id) {
    ScheduleEntry entry = of(driver).lookup(id).orElseThrow().entry().value();
    damage(
        driver,
        id,
        new ScheduleEntry(entry.state(), entry.timeMs(), entry.requestMs(), new byte[] {0x7f, 1})
            .toBytes());
  }

  /**
   * Replaces what is stored for an id with bytes, as a corrupt store would hold them: in RocksDB,
   * under the change logging, which logs only entries it can read.
   */
  static void damage(TopologyTestDriver driver, String id, byte[] raw) {
    RocksDBScheduleStore rocksDb = ((ChangeLoggingScheduleStore) of(driver).bytes()).wrapped();
    byte[] idBytes = id.getBytes(StandardCharsets.UTF_8);
    rocksDb.write(idBytes, rocksDb.get(idBytes), raw);
  }
}

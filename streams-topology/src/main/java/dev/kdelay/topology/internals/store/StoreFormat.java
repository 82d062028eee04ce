package dev.kdelay.topology.internals.store;

import java.io.File;
import java.util.List;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The version of the schedule store's layout, and what a start says about state in another one.
 *
 * <ul>
 *   <li>Each entry starts with its format byte ({@link ScheduleEntry#FORMAT_2}), so a changelog
 *       record of another layout is unreadable, never misread.
 *   <li>The RocksDB instance holds the format under {@link StoreKeys#FORMAT_KEY}: a new store is
 *       stamped; one stamped with another format is refused with the directory to delete (Kafka
 *       Streams then restores it from the changelog).
 *   <li>The store's name carries the layout ({@link #SCHEDULES_STORE}), so its changelog is a new
 *       topic and the first layout's changelogs are never restored into it. The first layout is not
 *       migrated: a state directory of it is reported at start, with what to do (see
 *       docs/operations.md, "Upgrading from the two-store layout").
 * </ul>
 */
public final class StoreFormat {

  /**
   * The schedule store. The suffix is the layout's format ({@link ScheduleEntry#FORMAT_2}): a new
   * name means a new changelog topic, so state of the first layout (stores {@code delay-tasks} and
   * {@code delay-schedules}) is never read as this one.
   */
  public static final String SCHEDULES_STORE = "delay-schedules-v2";

  /** The changelog topic Kafka Streams keeps for the schedule store of an application. */
  public static String changelogTopic(String applicationId) {
    return applicationId + "-" + SCHEDULES_STORE + "-changelog";
  }

  /**
   * The stores of kdelay's first layout, which this version neither reads nor migrates; their
   * directories next to this store's are reported.
   */
  public static final List<String> FIRST_LAYOUT_STORES = List.of("delay-tasks", "delay-schedules");

  private static final Logger log = LoggerFactory.getLogger(StoreFormat.class);

  private StoreFormat() {}

  static void warnOfFirstLayout(File rocksdb, String name) {
    for (String old : FIRST_LAYOUT_STORES) {
      if (new File(rocksdb, old).isDirectory()) {
        log.error(
            "event=old-state-layout dir={} this kdelay keeps schedules in store '{}' and does not"
                + " read the stores of kdelay's first layout ({}): their pending tasks will not"
                + " fire. Drain them with the previous version (stop producing requests, wait"
                + " until kdelay_tasks_pending is 0), then start this one; delete the old"
                + " changelog topics <application.id>-delay-tasks-changelog and"
                + " <application.id>-delay-schedules-changelog and the directory to silence this.",
            new File(rocksdb, old),
            name,
            FIRST_LAYOUT_STORES);
        return;
      }
    }
  }

  /** Stamps a new store with its format; refuses one written in another. */
  static void check(RocksDB db, WriteOptions writeOptions, String name, File dir)
      throws RocksDBException {
    byte[] format = db.get(StoreKeys.FORMAT_KEY);
    if (format == null) {
      try (RocksIterator any = db.newIterator()) {
        any.seekToFirst();
        if (any.isValid()) {
          throw new ProcessorStateException(
              "store " + name + " in " + dir + " holds data without a format key: delete " + dir);
        }
      }
      db.put(writeOptions, StoreKeys.FORMAT_KEY, new byte[] {ScheduleEntry.FORMAT_2});
    } else if (format.length != 1 || format[0] != ScheduleEntry.FORMAT_2) {
      throw new ProcessorStateException(
          "store "
              + name
              + " in "
              + dir
              + " has format "
              + (format.length == 0 ? "(empty)" : format[0])
              + ", this kdelay reads "
              + ScheduleEntry.FORMAT_2
              + ": it was written by another version. Delete "
              + dir
              + " to restore it from the changelog");
    }
  }
}

package dev.kdelay.service;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which state-store partitions this instance is restoring from their changelogs, and how far each
 * has got. Readiness waits for it to be empty: a partition being restored has tasks that cannot
 * fire yet, however Kafka Streams' own state reads.
 *
 * <p>Called by Kafka Streams' restoring threads; read from any thread.
 */
public final class RestoreProgress implements StateRestoreListener {

  private static final Logger log = LoggerFactory.getLogger(RestoreProgress.class);

  /** One changelog partition being restored. */
  public record Restoring(String store, int partition, long restored, long total) {}

  private final Map<TopicPartition, Restoring> restoring = new ConcurrentHashMap<>();

  @Override
  public void onRestoreStart(
      TopicPartition changelog, String store, long startingOffset, long endingOffset) {
    restoring.put(
        changelog,
        new Restoring(store, changelog.partition(), 0, Math.max(0, endingOffset - startingOffset)));
    long records = endingOffset - startingOffset;
    if (records > 0) {
      log.info(
          "event=restore-started store={} partition={} records={}",
          store,
          changelog.partition(),
          records);
    }
  }

  @Override
  public void onBatchRestored(
      TopicPartition changelog, String store, long batchEndOffset, long numRestored) {
    restoring.computeIfPresent(
        changelog,
        (partition, progress) ->
            new Restoring(
                store, partition.partition(), progress.restored() + numRestored, progress.total()));
  }

  @Override
  public void onRestoreEnd(TopicPartition changelog, String store, long totalRestored) {
    Restoring progress = restoring.remove(changelog);
    if (totalRestored > 0 || (progress != null && progress.total() > 0)) {
      log.info(
          "event=restore-finished store={} partition={} records={}",
          store,
          changelog.partition(),
          totalRestored);
    }
  }

  @Override
  public void onRestoreSuspended(TopicPartition changelog, String store, long totalRestored) {
    // The partition moved away mid-restore; it is no longer this instance's to wait for.
    restoring.remove(changelog);
  }

  /** The partitions being restored now. */
  public List<Restoring> restoring() {
    return List.copyOf(restoring.values());
  }

  /** How many partitions are being restored now. */
  int count() {
    return restoring.size();
  }
}

package dev.kdelay.topology.internals.store;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.kafka.common.utils.Bytes;

/**
 * What the schedule store keeps in memory of its two indexes (layout in {@link StoreKeys}), so that
 * a punctuation with nothing due, or no marker expired, touches no disk, and a scan steps over no
 * more than one batch of tombstones:
 *
 * <ul>
 *   <li>a lower bound of the earliest due time and of the earliest expiry;
 *   <li>the index key each scan starts from: no live key of its index lies below it.
 * </ul>
 *
 * <p>Writes lower the bounds ({@link #added}); scans raise them to what they found. A due scan
 * starts where the previous one found its first key, unless every entry of the previous batch has
 * been written since (fired, its due key deleted): then past that batch, so that it does not step
 * over the batch's tombstones again. Why that skips nothing live: when the scan ends, the live due
 * keys below the one after its last are exactly those of its batch (it visited every key from its
 * start, and deleted the stale ones it met); a key written below that point since lowers the point
 * ({@link #added}); so once every key of the batch is deleted ({@link #removed}), none live is left
 * below it. A batch of which any entry is never written (a failed thread) keeps the start where it
 * was. A bound starts at the lowest value, so the first punctuation scans. Removing the index key a
 * due bound came from leaves it loose ({@link #nextDueMayBeGone}): still a lower bound, but no
 * longer a due time.
 *
 * <p>Changed by the store's writer under the store's lock; {@link #dueFrom} is read by listings
 * too, under the same lock.
 */
final class IndexBounds {

  private long nextDue = Long.MIN_VALUE;
  private long nextExpiry = Long.MIN_VALUE;
  private byte[] dueFrom = StoreKeys.indexPrefix(StoreKeys.DUE, Long.MIN_VALUE);
  private byte[] expiryFrom = StoreKeys.indexPrefix(StoreKeys.EXPIRY, Long.MIN_VALUE);
  private boolean nextDueMayBeGone;

  /** Due keys of the last scan's batch not deleted yet; while any is, scans start at dueFrom. */
  private final Set<Bytes> batchLeft = new HashSet<>();

  /** Where scans start once batchLeft is empty; null when no batch is pending. */
  private byte[] afterBatch;

  /** An index key was written: the bounds of its index go no higher than it. */
  void added(byte[] key) {
    long time = StoreKeys.timeOfIndex(key);
    if (key[0] == StoreKeys.DUE) {
      nextDue = Math.min(nextDue, time);
      if (StoreKeys.before(key, dueFrom)) {
        dueFrom = key;
      }
      if (afterBatch != null && StoreKeys.before(key, afterBatch)) {
        afterBatch = key;
      }
    } else {
      nextExpiry = Math.min(nextExpiry, time);
      if (StoreKeys.before(key, expiryFrom)) {
        expiryFrom = key;
      }
    }
  }

  /** An index key was deleted: a cancel or trigger that took the earliest due leaves it loose. */
  void removed(byte[] key) {
    if (key[0] != StoreKeys.DUE) {
      return;
    }
    if (StoreKeys.timeOfIndex(key) == nextDue) {
      nextDueMayBeGone = true;
    }
    if (afterBatch != null && batchLeft.remove(Bytes.wrap(key)) && batchLeft.isEmpty()) {
      if (StoreKeys.before(dueFrom, afterBatch)) {
        dueFrom = afterBatch;
      }
      afterBatch = null;
    }
  }

  /** Whether anything may be due at {@code nowMs}. */
  boolean mayHaveDue(long nowMs) {
    return nextDue <= nowMs;
  }

  /** Whether a marker may have expired at {@code nowMs}. */
  boolean mayHaveExpired(long nowMs) {
    return nextExpiry <= nowMs;
  }

  /** The lower bound of the earliest due time. */
  long nextDue() {
    return nextDue;
  }

  /** Whether the index key the due bound came from was deleted since: read it again. */
  boolean nextDueMayBeGone() {
    return nextDueMayBeGone;
  }

  /** Where a due scan (and a listing from the start) begins. */
  byte[] dueFrom() {
    return dueFrom;
  }

  /** Where the sweep of expired markers begins. */
  byte[] expiryFrom() {
    return expiryFrom;
  }

  /**
   * A due scan from {@link #dueFrom} ended.
   *
   * @param first the first live key it found, where the next scan starts; or, if it found none, the
   *     scan's bound (nothing below it is left)
   * @param next the earliest due time left: the scan's time if it stopped at a bound with more due
   * @param batch the due keys of the entries it returned, in key order
   */
  void dueScanned(byte[] first, long next, List<byte[]> batch) {
    dueFrom = first;
    nextDue = next;
    batchLeft.clear();
    afterBatch = null;
    if (!batch.isEmpty()) {
      for (byte[] key : batch) {
        batchLeft.add(Bytes.wrap(key));
      }
      afterBatch = StoreKeys.successor(batch.get(batch.size() - 1));
    }
  }

  /**
   * A due scan that started after entries handled but not yet written ended: those are still
   * stored, so where scans start stays.
   *
   * @param next as for {@link #dueScanned}
   * @param more whether it stopped at a bound with more due: then {@code next} is exact
   */
  void dueScannedAfterHeld(long next, boolean more) {
    nextDue = more ? next : Math.min(nextDue, next);
  }

  /** The due index was read from {@link #dueFrom}: its first key's time, or Long.MAX_VALUE. */
  void nextDueRead(long next) {
    nextDue = next;
    nextDueMayBeGone = false;
  }

  /**
   * A sweep of expired markers ended.
   *
   * @param first the first expiry key it took, or its bound if none
   * @param next the earliest expiry left: the sweep's time if it stopped with more expired
   */
  void expirySwept(byte[] first, long next) {
    expiryFrom = first;
    nextExpiry = next;
  }
}

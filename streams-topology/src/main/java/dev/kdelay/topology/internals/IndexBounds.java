package dev.kdelay.topology.internals;

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
 * <p>Writes lower the bounds ({@link #added}); scans raise them to what they found. A bound starts
 * at the lowest value, so the first punctuation scans. Removing the index key a due bound came from
 * leaves it loose ({@link #nextDueMayBeGone}): still a lower bound, but no longer a due time.
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

  /** An index key was written: the bounds of its index go no higher than it. */
  void added(byte[] key) {
    long time = StoreKeys.timeOfIndex(key);
    if (key[0] == StoreKeys.DUE) {
      nextDue = Math.min(nextDue, time);
      if (StoreKeys.before(key, dueFrom)) {
        dueFrom = key;
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
    if (key[0] == StoreKeys.DUE && StoreKeys.timeOfIndex(key) == nextDue) {
      nextDueMayBeGone = true;
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
   */
  void dueScanned(byte[] first, long next) {
    dueFrom = first;
    nextDue = next;
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

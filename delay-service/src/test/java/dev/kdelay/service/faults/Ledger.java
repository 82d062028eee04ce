package dev.kdelay.service.faults;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What was asked of kdelay, by idempotency key ({@code <id>@<due ms>}): the occurrences that must
 * fire, those that must not (cancelled, or replaced by a later request for the same id), and those
 * whose fate is open because a request's send failed (it may or may not have reached the broker).
 *
 * <p>Thread-safe: producer callbacks fill it while a test reads it.
 */
final class Ledger {

  /**
   * One occurrence that must fire exactly once.
   *
   * @param requestPartition the requests partition the schedule went to, hence its owner
   * @param requestOffset the schedule's offset there
   * @param ackedAtMs when the load's producer had the broker's acknowledgement: a task due before
   *     could not fire on time, whatever kdelay did (the broker, or the load, was stalled)
   */
  record Task(
      String id,
      String idempotencyKey,
      long dueMs,
      String target,
      int requestPartition,
      long requestOffset,
      String payload,
      long sentAtMs,
      long ackedAtMs) {

    /** Whether the broker acknowledged the request only after the task was due. */
    boolean writtenLate() {
      return ackedAtMs > dueMs;
    }
  }

  private final Map<String, Task> expected = new ConcurrentHashMap<>();

  /**
   * An occurrence that was scheduled and then cancelled or replaced.
   *
   * @param partition the requests partition of the cancel or replacement, -1 until acknowledged
   * @param offset its offset there, -1 until acknowledged
   */
  record Doomed(String idempotencyKey, long dueMs, int partition, long offset) {}

  private final Map<String, Doomed> forbidden = new ConcurrentHashMap<>();
  private final Set<String> uncertain = ConcurrentHashMap.newKeySet();

  void expect(Task task) {
    expected.put(task.idempotencyKey(), task);
  }

  /**
   * An occurrence that was scheduled and is being cancelled or replaced: it must not fire once the
   * cancel or replacement has taken effect.
   */
  void forbid(String idempotencyKey, long dueMs) {
    forbidden.put(idempotencyKey, new Doomed(idempotencyKey, dueMs, -1, -1));
  }

  /** Where the cancel or replacement of a forbidden occurrence was written. */
  void undoneAt(String idempotencyKey, int partition, long offset) {
    forbidden.computeIfPresent(
        idempotencyKey, (key, doomed) -> new Doomed(key, doomed.dueMs(), partition, offset));
  }

  /** The forbidden occurrence of a key, or null. */
  Doomed doomed(String idempotencyKey) {
    return forbidden.get(idempotencyKey);
  }

  /** An occurrence whose request may or may not have been written: fires at most once. */
  void uncertain(String idempotencyKey) {
    uncertain.add(idempotencyKey);
    expected.remove(idempotencyKey);
    forbidden.remove(idempotencyKey);
  }

  Map<String, Task> expected() {
    return Map.copyOf(expected);
  }

  /** The expected task of an idempotency key, or null. */
  Task task(String idempotencyKey) {
    return idempotencyKey == null ? null : expected.get(idempotencyKey);
  }

  Set<String> forbidden() {
    return Set.copyOf(forbidden.keySet());
  }

  Set<String> uncertainKeys() {
    return Set.copyOf(uncertain);
  }

  /** The latest due time of anything scheduled, fired or not, to place sentinels after it. */
  long maxDueMs() {
    long expectedMax = expected.values().stream().mapToLong(Task::dueMs).max().orElse(0);
    long forbiddenMax = forbidden.values().stream().mapToLong(Doomed::dueMs).max().orElse(0);
    return Math.max(expectedMax, forbiddenMax);
  }

  /** The expected tasks whose requests went to any of the given partitions. */
  List<Task> onPartitions(Collection<Integer> partitions) {
    return expected.values().stream()
        .filter(task -> partitions.contains(task.requestPartition()))
        .toList();
  }
}

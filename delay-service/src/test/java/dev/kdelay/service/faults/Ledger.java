package dev.kdelay.service.faults;

import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

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

  /**
   * The expected occurrences a final check still waits for, of those not visible yet: all but a
   * replacement whose id's replaced occurrence fired instead. The contract explains that one: a
   * replacement stamped in the same millisecond as its schedule and read after the schedule fired
   * (intake behind, as while a broker dies) is refused {@code SUPERSEDED} and never fires; {@link
   * Verdict} then holds it to that dead letter, and counts it lost without one. Every partition's
   * sentinel, due after everything, is still waited for, so anything that does fire has by then.
   */
  Set<String> awaited(Set<String> notVisible, Predicate<String> visible) {
    Set<String> ids = new HashSet<>();
    forbidden.keySet().stream().filter(visible).forEach(key -> ids.add(idOf(key)));
    Set<String> awaited = new TreeSet<>(notVisible);
    awaited.removeIf(key -> ids.contains(idOf(key)));
    return awaited;
  }

  /** The id of an idempotency key ({@code id@due}). */
  private static String idOf(String idempotencyKey) {
    int at = idempotencyKey.lastIndexOf('@');
    return at < 0 ? idempotencyKey : idempotencyKey.substring(0, at);
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

package dev.kdelay.service.faults;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.service.faults.CommittedRecords.Received;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * How long the partitions of a dead (or paused) instance went without firing: from the fault to the
 * first record fired by their new owner becoming visible to a {@code read_committed} consumer, and
 * the worst lateness of a task due in that gap.
 *
 * @param victimPartitions the requests partitions the instance owned
 * @param faultAtMs when the fault was injected
 * @param goneAtMs from when the instance could no longer fire (it had exited, or was stopped)
 */
record Failover(Set<Integer> victimPartitions, long faultAtMs, long goneAtMs) {

  /** Whether a record was fired, after the fault, for a task of the victim's partitions. */
  boolean firedByNewOwner(Ledger ledger, Received received) {
    Ledger.Task task = ledger.task(received.header(DelayHeaders.IDEMPOTENCY_KEY));
    return task != null
        && victimPartitions.contains(task.requestPartition())
        && received.headerMs(DelayHeaders.FIRED_AT) > goneAtMs;
  }

  /** The worst due-to-visible lateness of the victim's tasks due from the fault to the takeover. */
  long worstLatenessMs(Ledger ledger, List<Received> fired, long takeoverMs) {
    return fired.stream()
        .mapToLong(
            received -> {
              Ledger.Task task = ledger.task(received.header(DelayHeaders.IDEMPOTENCY_KEY));
              boolean inGap =
                  task != null
                      && victimPartitions.contains(task.requestPartition())
                      && task.dueMs() >= faultAtMs
                      && task.dueMs() <= faultAtMs + takeoverMs;
              return inGap ? received.receivedAtMs() - task.dueMs() : 0;
            })
        .max()
        .orElse(0);
  }

  /**
   * Per victim partition, from the fault to the first visible fire by its new owner. Partitions
   * differ: one whose changelog the dead instance's open transaction touched cannot be restored
   * past that transaction before the broker aborts it.
   */
  Map<Integer, Long> takeoverByPartitionMs(Ledger ledger, List<Received> fired) {
    Map<Integer, Long> takeover = new TreeMap<>();
    for (Received received : fired) {
      if (firedByNewOwner(ledger, received)) {
        int partition =
            ledger.task(received.header(DelayHeaders.IDEMPOTENCY_KEY)).requestPartition();
        takeover.merge(partition, received.receivedAtMs() - faultAtMs, Math::min);
      }
    }
    return takeover;
  }

  /**
   * The failover time as the users of the victim's tasks see it: the due-to-visible lateness of
   * every task of the victim's partitions that became visible after the fault (the ones the dead
   * instance still held, and the ones due later that its successor fired).
   */
  Verdict.Lateness victimLateness(Ledger ledger, List<Received> fired) {
    return Verdict.Lateness.of(
        fired.stream()
            .filter(received -> received.receivedAtMs() > faultAtMs)
            .flatMap(
                received -> {
                  Ledger.Task task = ledger.task(received.header(DelayHeaders.IDEMPOTENCY_KEY));
                  return task != null && victimPartitions.contains(task.requestPartition())
                      ? java.util.stream.Stream.of(received.receivedAtMs() - task.dueMs())
                      : java.util.stream.Stream.empty();
                })
            .toList());
  }

  /**
   * One line: the first takeover, the last partition's, the worst lateness in the gap, and the
   * lateness of the victim's tasks visible after the fault.
   */
  String describe(Ledger ledger, List<Received> fired) {
    Map<Integer, Long> byPartition = takeoverByPartitionMs(ledger, fired);
    if (byPartition.isEmpty()) {
      return "partitions " + victimPartitions + " not taken over (no task of them fired after)";
    }
    long first = Collections.min(byPartition.values());
    long all = Collections.max(byPartition.values());
    Verdict.Lateness victims = victimLateness(ledger, fired);
    return String.format(
        "partitions %s: first fire by the new owner %d ms after the fault, every partition firing"
            + " after %d ms %s; worst lateness of a task due in the gap %d ms; failover lateness"
            + " of the %d victim tasks visible after the fault %s",
        victimPartitions,
        first,
        all,
        byPartition,
        worstLatenessMs(ledger, fired, all),
        victims.count(),
        victims);
  }
}

package dev.kdelay.service.faults;

import static java.util.stream.Collectors.counting;
import static java.util.stream.Collectors.groupingBy;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.service.faults.CommittedRecords.Received;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The checker: holds what a {@code read_committed} consumer of every target topic received up
 * against the {@link Ledger}, and says what went wrong.
 *
 * <ul>
 *   <li><b>lost</b>: an expected occurrence that never arrived;
 *   <li><b>duplicated</b>: an idempotency key that arrived more than once;
 *   <li><b>early</b>: fired (by its {@code delay-fired-at}) or visible before its due time, or with
 *       a record timestamp or {@code delay-due-at} other than the due time;
 *   <li><b>unexpected</b>: a key that nobody scheduled, or one that was cancelled or replaced and
 *       fired after the cancel or replacement had been committed ({@link IntakeProgress});
 *   <li><b>corrupt</b>: payload, target topic or carried header not what was sent;
 *   <li><b>dead-lettered</b> (when the dead letters are given): a dead letter the contract does not
 *       explain.
 * </ul>
 *
 * <p>One dead letter is explained: a cancel or replacement stamped in the same millisecond as its
 * schedule, read after that schedule had already fired (a backlog; the contract's "only what was
 * read counts"), is {@code SUPERSEDED}, since a tie with a fire goes to the fire. The replacement
 * then never fires, and is not lost: it was refused with a reason.
 *
 * <p>Lateness is measured on the first arrival of each expected occurrence: due to visible to the
 * consumer, and due to {@code delay-fired-at}. How far behind the request intake ran is measured
 * too: from a schedule's send to the commit of its offset (sampled by {@link IntakeProgress}).
 */
final class Verdict {

  private final int checked;
  private final int sentinels;
  private final int doomed;
  private int firedBeforeUndone;
  private final List<String> lost = new ArrayList<>();
  private final Map<String, Long> duplicated = new TreeMap<>();
  private final List<String> early = new ArrayList<>();
  private final List<String> unexpected = new ArrayList<>();
  private final List<String> corrupt = new ArrayList<>();
  private final List<String> deadLettered = new ArrayList<>();
  private final int supersededAfterFire;
  private final Lateness visible;
  private final Lateness intakeDelay;
  private final Lateness firing;

  private Verdict(
      Ledger ledger, List<Received> fired, IntakeProgress intake, List<DeadLetter> deadLetters) {
    Map<String, Ledger.Task> expected = ledger.expected();
    Set<String> uncertain = ledger.uncertainKeys();
    this.checked = expected.size();
    this.sentinels =
        (int) expected.values().stream().filter(t -> t.id().startsWith("sentinel-")).count();
    Map<String, Long> times =
        fired.stream().collect(groupingBy(Verdict::idempotencyKey, counting()));
    Map<String, Received> first = new HashMap<>();
    fired.forEach(received -> first.putIfAbsent(idempotencyKey(received), received));
    this.doomed = ledger.forbidden().size();
    Set<String> firedBeforeUndoneIds = new HashSet<>();
    times.forEach(
        (key, count) -> {
          if (count > 1) {
            duplicated.put(key, count);
          }
          if (!expected.containsKey(key)
              && !uncertain.contains(key)
              && checkUndone(key, ledger.doomed(key), first.get(key), intake)) {
            firedBeforeUndoneIds.add(idOf(key));
          }
        });
    Set<String> superseded = new HashSet<>();
    for (DeadLetter letter : deadLetters) {
      if (letter.reason().equals("SUPERSEDED") && firedBeforeUndoneIds.contains(letter.id())) {
        superseded.add(letter.id());
      } else {
        deadLettered.add(letter.toString());
      }
    }
    this.supersededAfterFire = superseded.size();
    expected.values().stream()
        .filter(task -> !times.containsKey(task.idempotencyKey()))
        .filter(task -> !superseded.contains(task.id()))
        .map(Ledger.Task::idempotencyKey)
        .sorted()
        .forEach(lost::add);
    Set<String> measured = new HashSet<>();
    List<Long> visibleMs = new ArrayList<>();
    List<Long> firingMs = new ArrayList<>();
    for (Received received : fired) {
      String key = idempotencyKey(received);
      Ledger.Task task = expected.get(key);
      if (task == null) {
        continue;
      }
      check(task, received);
      if (measured.add(key)) {
        visibleMs.add(received.receivedAtMs() - task.dueMs());
        firingMs.add(received.headerMs(DelayHeaders.FIRED_AT) - task.dueMs());
      }
    }
    List<Long> intakeMs = new ArrayList<>();
    for (Ledger.Task task : expected.values()) {
      intake
          .appliedBy(task.requestPartition(), task.requestOffset())
          .ifPresent(applied -> intakeMs.add(applied - task.sentAtMs()));
    }
    this.intakeDelay = Lateness.of(intakeMs);
    this.visible = Lateness.of(visibleMs);
    this.firing = Lateness.of(firingMs);
  }

  private static String idempotencyKey(Received received) {
    String key = received.header(DelayHeaders.IDEMPOTENCY_KEY);
    return key == null ? "(no idempotency key: " + received.record() + ")" : key;
  }

  /** The id of an idempotency key ({@code id@due}). */
  private static String idOf(String idempotencyKey) {
    int at = idempotencyKey.lastIndexOf('@');
    return at < 0 ? idempotencyKey : idempotencyKey.substring(0, at);
  }

  /** Judges what was received; the dead letters were not read. */
  static Verdict of(Ledger ledger, List<Received> fired, IntakeProgress intake) {
    return new Verdict(ledger, fired, intake, List.of());
  }

  /** Judges what was received and what was dead-lettered. */
  static Verdict of(
      Ledger ledger, List<Received> fired, IntakeProgress intake, List<DeadLetter> deadLetters) {
    return new Verdict(ledger, fired, intake, deadLetters);
  }

  /**
   * A dead letter: the id it was keyed by, and its reason code.
   *
   * @param id the schedule id
   * @param reason the {@code delay-error} header
   */
  record DeadLetter(String id, String reason) {

    @Override
    public String toString() {
      return id + ": " + reason;
    }
  }

  /**
   * A cancelled or replaced occurrence fired: fine if it came due and fired before the cancel or
   * replacement took effect (the service was behind), wrong if it fired after that was committed.
   *
   * @return whether it fired before its cancel or replacement took effect
   */
  private boolean checkUndone(
      String key, Ledger.Doomed undone, Received received, IntakeProgress intake) {
    if (undone == null) {
      unexpected.add(key + " (never scheduled)");
      return false;
    }
    long firedAt = received.headerMs(DelayHeaders.FIRED_AT);
    OptionalLong appliedBy =
        undone.offset() < 0
            ? OptionalLong.empty()
            : intake.appliedBy(undone.partition(), undone.offset());
    if (appliedBy.isEmpty() || firedAt <= appliedBy.getAsLong()) {
      firedBeforeUndone++;
      return true;
    }
    unexpected.add(
        String.format(
            "%s fired at %d, %d ms after its cancel/replacement (partition %d offset %d) was"
                + " committed (by %d)",
            key,
            firedAt,
            firedAt - appliedBy.getAsLong(),
            undone.partition(),
            undone.offset(),
            appliedBy.getAsLong()));
    return false;
  }

  private void check(Ledger.Task task, Received received) {
    long due = task.dueMs();
    long firedAt = received.headerMs(DelayHeaders.FIRED_AT);
    if (firedAt < due
        || received.receivedAtMs() < due
        || received.record().timestamp() != due
        || received.headerMs(DelayHeaders.DUE_AT) != due) {
      early.add(
          String.format(
              "%s due %d fired-at %d visible %d timestamp %d",
              task.idempotencyKey(),
              due,
              firedAt,
              received.receivedAtMs(),
              received.record().timestamp()));
    }
    if (!task.payload().equals(received.value())
        || !task.target().equals(received.record().topic())
        || !("trace-" + task.id()).equals(received.header("traceparent"))
        || !task.id().equals(received.header(DelayHeaders.ID))) {
      corrupt.add(task.idempotencyKey() + " arrived as " + received.record());
    }
  }

  int checked() {
    return checked;
  }

  boolean clean() {
    return lost.isEmpty()
        && duplicated.isEmpty()
        && early.isEmpty()
        && unexpected.isEmpty()
        && corrupt.isEmpty()
        && deadLettered.isEmpty();
  }

  /** The dead letters the contract does not explain. */
  List<String> unexplainedDeadLetters() {
    return List.copyOf(deadLettered);
  }

  Lateness visibleLateness() {
    return visible;
  }

  /** One line of figures, for the test output. */
  String summary() {
    return String.format(
        "tasks checked=%d (incl. %d sentinels) lost=%d duplicated=%d early=%d unexpected=%d"
            + " corrupt=%d dead-lettered=%d; cancelled/replaced %d (%d fired before the cancel"
            + " took effect, %d of whose cancels were SUPERSEDED by the fire);"
            + " lateness due->visible %s; due->fired %s; request sent->applied %s",
        checked,
        sentinels,
        lost.size(),
        duplicated.size(),
        early.size(),
        unexpected.size(),
        corrupt.size(),
        deadLettered.size(),
        doomed,
        firedBeforeUndone,
        supersededAfterFire,
        visible,
        firing,
        intakeDelay);
  }

  /** The summary and, if anything went wrong, up to 20 examples of each kind. */
  String report() {
    StringBuilder text = new StringBuilder(summary());
    append(text, "lost", lost);
    append(
        text,
        "duplicated",
        duplicated.entrySet().stream().map(e -> e.getKey() + " x" + e.getValue()).toList());
    append(text, "early", early);
    append(text, "unexpected", unexpected);
    append(text, "corrupt", corrupt);
    append(text, "dead-lettered", deadLettered);
    return text.toString();
  }

  private static void append(StringBuilder text, String what, List<String> items) {
    if (!items.isEmpty()) {
      text.append("\n  ")
          .append(what)
          .append(" (")
          .append(items.size())
          .append("): ")
          .append(items.stream().limit(20).collect(Collectors.joining(", ")));
    }
  }

  /** Percentiles of a list of lateness values in milliseconds. */
  record Lateness(int count, long p50, long p99, long max) {

    static Lateness of(List<Long> values) {
      long[] sorted = values.stream().mapToLong(Long::longValue).sorted().toArray();
      if (sorted.length == 0) {
        return new Lateness(0, 0, 0, 0);
      }
      return new Lateness(
          sorted.length,
          percentile(sorted, 0.50),
          percentile(sorted, 0.99),
          sorted[sorted.length - 1]);
    }

    private static long percentile(long[] sorted, double quantile) {
      return sorted[Math.max(0, (int) Math.ceil(sorted.length * quantile) - 1)];
    }

    @Override
    public String toString() {
      return String.format("p50=%d p99=%d max=%d ms", p50, p99, max);
    }
  }
}

package dev.kdelay.topology;

import static dev.kdelay.schemas.RejectionReason.NOT_APPLICABLE;
import static dev.kdelay.schemas.RejectionReason.SUPERSEDED;
import static dev.kdelay.schemas.RejectionReason.TOO_FAR;
import static dev.kdelay.schemas.RejectionReason.UNREADABLE_TASK;

import dev.kdelay.schemas.Action;
import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.Misfire;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.schemas.generators.GeneratedRequest;
import dev.kdelay.schemas.generators.GeneratedRequest.Intent;
import dev.kdelay.schemas.generators.GeneratedRequest.Timing;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;
import org.apache.kafka.common.header.Header;

/**
 * A reference model of kdelay's contract for one partition, written from the README and not from
 * the code: what each request does to its id, what fires when, and what kdelay holds. Property
 * tests drive kdelay's topology and this model side by side and compare them after every step.
 *
 * <p>Where the contract leaves kdelay a choice (a request with two faults may be dead-lettered for
 * either), the model takes what kdelay answered, if the contract allows it, and goes on from there.
 * Cron schedules whose occurrences the model does not compute ({@link Timing.Cron#periodMs} 0) are
 * <em>opaque</em>: their fires are only checked for safety (never early, never twice, the right
 * content), not for completeness.
 */
final class ContractModel {

  private static final Pattern OTHERS_INTERNAL =
      Pattern.compile(
          "_.*|connect-(configs|offsets|status)|.+-(changelog|repartition)"
              + "|.+-KTABLE-FK-JOIN-SUBSCRIPTION-(REGISTRATION|RESPONSE)-\\d+-topic");

  /**
   * The settings the model needs.
   *
   * @param cancelRetentionMs how long a cancel is remembered
   * @param firedRetentionMs how long a fired one-shot is remembered
   * @param misfireThresholdMs how late an occurrence may come due before it counts as missed
   * @param catchUpWindowMs how far back fire-all catches up
   * @param horizonMs how far ahead a due time may lie
   * @param partitions the target topics that exist, with their partition counts
   * @param ownTopics kdelay's own topics
   * @param applicationPrefix the prefix of its application's internal topics
   */
  record Config(
      long cancelRetentionMs,
      long firedRetentionMs,
      long misfireThresholdMs,
      long catchUpWindowMs,
      long horizonMs,
      Map<String, Integer> partitions,
      Set<String> ownTopics,
      String applicationPrefix) {}

  /** Where an id stands. */
  enum State {
    SCHEDULED,
    PAUSED,
    CANCELLED,
    FIRED,
    /** Its entry cannot be read: what a damaged store or a newer kdelay left. */
    UNREADABLE
  }

  /** What is held for one id. */
  static final class Entry {
    State state;
    long timeMs; // SCHEDULED: due; markers: expiry; PAUSED: triggered occurrence or MAX
    long requestMs;
    Intent task; // SCHEDULED, PAUSED: what fires
    Timing timing; // SCHEDULED, PAUSED: when
    long occurrence = 1; // the number the next fire carries
    boolean opaque; // a cron whose occurrences the model does not compute
    boolean taskUnreadable; // the header is readable, the task is not
    long lastOpaqueDue = Long.MIN_VALUE; // an opaque schedule's last fired occurrence
    boolean mayHaveEnded; // opaque: a punctuation saw it, so its last occurrence may have passed
    Content content; // what the request that set this state was

    Entry copy() {
      Entry copy = new Entry();
      copy.state = state;
      copy.timeMs = timeMs;
      copy.requestMs = requestMs;
      copy.task = task;
      copy.timing = timing;
      copy.occurrence = occurrence;
      copy.opaque = opaque;
      copy.taskUnreadable = taskUnreadable;
      copy.lastOpaqueDue = lastOpaqueDue;
      copy.mayHaveEnded = mayHaveEnded;
      copy.content = content;
      return copy;
    }

    @Override
    public String toString() {
      return state
          + (state == State.SCHEDULED ? " due " + timeMs : "")
          + (state.ordinal() >= 2 && state != State.UNREADABLE ? " until " + timeMs : "")
          + " req "
          + requestMs
          + (task != null ? " #" + occurrence + " " + task.timing() : "")
          + (opaque ? " opaque" : "");
    }
  }

  /**
   * What a request is, for telling ties: its key, value and headers, kdelay's own left out.
   *
   * @param key the key
   * @param value the value
   * @param headers the headers that are not kdelay's, in order
   */
  record Content(byte[] key, byte[] value, List<Header> headers) {

    static Content of(GeneratedRequest request) {
      List<Header> headers = new ArrayList<>();
      for (Header header : request.headers()) {
        if (!DelayHeaders.OUTPUT_HEADERS.contains(header.key())) {
          headers.add(header);
        }
      }
      return new Content(request.key(), request.value(), headers);
    }

    boolean same(Content other) {
      if (other == null
          || !Arrays.equals(key, other.key)
          || !Arrays.equals(value, other.value)
          || headers.size() != other.headers.size()) {
        return false;
      }
      for (int i = 0; i < headers.size(); i++) {
        if (!headers.get(i).key().equals(other.headers.get(i).key())
            || !Arrays.equals(headers.get(i).value(), other.headers.get(i).value())) {
          return false;
        }
      }
      return true;
    }
  }

  /**
   * A record kdelay must fire.
   *
   * @param id the schedule id
   * @param dueMs the occurrence's due time
   * @param firedAtMs when it fires
   * @param occurrence its number, 0 for a one-shot
   * @param task what it delivers
   */
  record Fire(String id, long dueMs, long firedAtMs, long occurrence, Intent task) {

    String idempotencyKey() {
      return DelayHeaders.idempotencyKey(id, dueMs);
    }
  }

  /**
   * What kdelay answered a step with: its dead letters (by code) and fired records.
   *
   * @param deadLetters the dead letters, with their codes
   * @param fires the fired records
   * @param fenced whether a task put up its fence in this step (exactly once, a task that consumed
   *     nothing writes a fence and fires once it read it back; the harness brings it back at once)
   */
  record Observed(List<DeadLetter> deadLetters, List<FiredRecord> fires, boolean fenced) {}

  /** A dead letter as observed. */
  record DeadLetter(byte[] key, String code, String idHeader, String dueHeader) {}

  /** A fired record as observed. */
  record FiredRecord(String topic, byte[] key, byte[] value, List<Header> headers, long timestamp) {

    String header(String name) {
      String value = null;
      for (Header header : headers) {
        if (header.key().equals(name)) {
          value = header.value() == null ? null : new String(header.value(), UTF8);
        }
      }
      return value;
    }
  }

  private static final java.nio.charset.Charset UTF8 = StandardCharsets.UTF_8;

  private final Config config;
  private final Map<String, Entry> entries = new TreeMap<>();

  /**
   * Whether the task has consumed a record since it started: exactly once, it fires nothing before
   * (its fence, see TaskFence; a request will do as well).
   */
  private boolean fenced;

  ContractModel(Config config) {
    this.config = config;
  }

  /** What the model holds for an id, or null. */
  Entry entry(String id) {
    return entries.get(id);
  }

  /** Every id the model holds something for. */
  Set<String> ids() {
    return entries.keySet();
  }

  /** The task starts again (a crash and restore): it has consumed nothing yet. */
  void restarted() {
    fenced = false;
  }

  /** Damages what the model holds for an id, as a corrupted store would. */
  void damage(String id, boolean headerToo) {
    Entry entry = entries.get(id);
    if (entry == null) {
      return;
    }
    if (headerToo) {
      Entry unreadable = new Entry();
      unreadable.state = State.UNREADABLE;
      entries.put(id, unreadable);
    } else if (entry.state == State.SCHEDULED || entry.state == State.PAUSED) {
      entry.taskUnreadable = true;
    }
  }

  /**
   * Checks kdelay's answer to a request against the contract and applies the request as it was
   * answered.
   *
   * @throws AssertionError if the answer is not one the contract allows
   */
  void request(GeneratedRequest request, long nowMs, Observed observed) {
    fenced = true; // a consumed record: the task's commits carry its offsets
    GeneratedRequest.Expectation expected = request.expectation();
    Set<RejectionReason> allowed = EnumSet.noneOf(RejectionReason.class);
    allowed.addAll(expected.codes());
    Applied applied = null;
    if (expected.accepted().isPresent()) {
      Intent intent = expected.accepted().get();
      Verdict verdict = judge(intent, Content.of(request), nowMs);
      allowed.addAll(verdict.codes);
      applied = verdict.applied;
    }
    List<DeadLetter> deadLetters = observed.deadLetters();
    check(deadLetters.size() <= 1, "at most one dead letter per request, got %s", deadLetters);
    if (deadLetters.size() == 1) {
      String code = deadLetters.get(0).code();
      check(
          allowed.stream().anyMatch(reason -> reason.name().equals(code)),
          "dead letter %s for %s; the contract allows %s%s",
          code,
          request,
          allowed,
          applied == null ? "" : " or applying it");
      check(
          Arrays.equals(deadLetters.get(0).key(), request.key()),
          "a request's dead letter keeps its key");
      check(observed.fires().isEmpty(), "a rejected request fires nothing: %s", observed.fires());
      return;
    }
    check(
        applied != null,
        "%s was applied; the contract says %s",
        request,
        allowed.isEmpty() ? "nothing" : "dead-letter it with one of " + allowed);
    if (applied.opaqueFire) {
      check(observed.fires().size() == 1, "a trigger fires once: %s", observed.fires());
      String id = observed.fires().get(0).header(DelayHeaders.ID);
      checkOpaqueFire(id, observed.fires().get(0), nowMs, true);
    } else {
      checkFires(applied.fires, observed.fires(), "fires of " + request);
    }
    applied.commit.run();
  }

  /** The model's answer to an accepted request: codes it may get, or how it applies. */
  private static final class Verdict {
    final Set<RejectionReason> codes = EnumSet.noneOf(RejectionReason.class);
    Applied applied;
  }

  /**
   * How an accepted request changes the model, and what it fires at once.
   *
   * @param commit the change
   * @param fires the records it fires
   * @param opaqueFire whether it fires one record of an opaque schedule instead, whose due time the
   *     model does not know
   */
  private record Applied(Runnable commit, List<Fire> fires, boolean opaqueFire) {
    Applied(Runnable commit, List<Fire> fires) {
      this(commit, fires, false);
    }
  }

  private Verdict judge(Intent intent, Content content, long nowMs) {
    Verdict verdict = new Verdict();
    if (intent.action() == Action.SCHEDULE) {
      Optional<RejectionReason> refused = refusedTarget(intent);
      if (refused.isPresent()) {
        verdict.codes.add(refused.get());
        return verdict;
      }
    }
    Entry current = entries.get(intent.id());
    if (current != null
        && (current.state == State.CANCELLED || current.state == State.FIRED)
        && current.timeMs <= nowMs) {
      current = null; // expired: whether swept yet or not, it orders nothing
    }
    if (current != null && current.state == State.UNREADABLE) {
      if (intent.action() != Action.SCHEDULE && intent.action() != Action.CANCEL) {
        verdict.codes.add(UNREADABLE_TASK);
        return verdict;
      }
      current = null; // replaced whole
    }
    if (current != null) {
      int order = order(current, intent.stampedMs(), content);
      if (order < 0) {
        verdict.codes.add(SUPERSEDED);
        return verdict;
      }
      if (order == 0) {
        verdict.applied = new Applied(() -> {}, List.of()); // the same request again: nothing
        return verdict;
      }
    }
    this.content = content;
    final Entry now = current;
    switch (intent.action()) {
      case SCHEDULE -> schedule(intent.id(), intent, intent.timing(), nowMs, 1, verdict);
      case CANCEL ->
          verdict.applied =
              new Applied(
                  () -> putMarker(intent.id(), State.CANCELLED, nowMs, intent.stampedMs(), content),
                  List.of());
      case PAUSE -> pause(intent, now, verdict);
      case RESUME -> resume(intent, now, nowMs, verdict);
      case TRIGGER -> trigger(intent, now, nowMs, verdict);
      case RESCHEDULE -> reschedule(intent, now, nowMs, verdict);
    }
    return verdict;
  }

  /** Why a schedule's target is refused at intake, if it is. */
  private Optional<RejectionReason> refusedTarget(Intent intent) {
    String topic = intent.target();
    if (topic.startsWith("__")
        || config.ownTopics().contains(topic)
        || topic.startsWith(config.applicationPrefix())
        || OTHERS_INTERNAL.matcher(topic).matches()) {
      return Optional.of(RejectionReason.TARGET_NOT_ALLOWED);
    }
    Integer partitions = config.partitions().get(topic);
    if (partitions == null) {
      return Optional.of(RejectionReason.UNKNOWN_TOPIC);
    }
    if (intent.partition() >= partitions) {
      return Optional.of(RejectionReason.BAD_PARTITION);
    }
    return Optional.empty();
  }

  /**
   * Orders a request against the one that set its id's state: -1 older (SUPERSEDED), 0 the same
   * request again (a duplicate: applied as nothing), 1 newer. By timestamp; a tie with a fire or a
   * cancel goes to them; a tie with a live schedule to the request, unless it has the same content.
   */
  private static int order(Entry current, long requestMs, Content content) {
    if (requestMs != current.requestMs) {
      return requestMs < current.requestMs ? -1 : 1;
    }
    if (current.state == State.CANCELLED || current.state == State.FIRED) {
      return -1;
    }
    return current.content != null && current.content.same(content) ? 0 : 1;
  }

  /** The request being judged, for the entries it writes. */
  private Content content;

  /** Stamps an entry with the request that sets its state. */
  private void stamp(Entry entry, long requestMs) {
    entry.requestMs = requestMs;
    entry.content = content;
  }

  private void schedule(
      String id, Intent task, Timing timing, long nowMs, long occurrence, Verdict verdict) {
    Entry next = new Entry();
    next.state = State.SCHEDULED;
    stamp(next, task.stampedMs());
    next.task = task;
    next.timing = timing;
    next.occurrence = occurrence;
    if (timing instanceof Timing.Once once) {
      next.timeMs = once.dueMs();
      verdict.applied = new Applied(() -> entries.put(id, next), List.of());
      return;
    }
    Timing.Cron cron = (Timing.Cron) timing;
    if (cron.periodMs() == 0) {
      // Opaque: kdelay finds the first occurrence with cron-utils; none in range is TOO_FAR.
      next.opaque = true;
      next.timeMs = Long.MIN_VALUE;
      verdict.codes.add(TOO_FAR);
      verdict.applied = new Applied(() -> entries.put(id, next), List.of());
      return;
    }
    OptionalLong first = after(cron, nowMs - 1, nowMs);
    if (first.isEmpty()) {
      verdict.codes.add(TOO_FAR);
      return;
    }
    next.timeMs = first.getAsLong();
    verdict.applied = new Applied(() -> entries.put(id, next), List.of());
  }

  private void pause(Intent intent, Entry current, Verdict verdict) {
    if (notLive(current, verdict) || unreadableTask(current, verdict)) {
      return;
    }
    if (!(current.timing instanceof Timing.Cron)) {
      verdict.codes.add(NOT_APPLICABLE);
      return;
    }
    verdict.applied =
        new Applied(
            () -> {
              Entry paused = current.copy();
              if (current.state == State.SCHEDULED) {
                // Every occurrence before the next due time fired or was passed over (a trigger
                // fires ahead of its time): a resume starts at that due time at the earliest.
                paused.timeMs = current.opaque ? Long.MAX_VALUE : current.timeMs - 1;
              }
              paused.state = State.PAUSED;
              stamp(paused, intent.stampedMs());
              entries.put(intent.id(), paused);
            },
            List.of());
  }

  private void resume(Intent intent, Entry current, long nowMs, Verdict verdict) {
    if (notLive(current, verdict) || unreadableTask(current, verdict)) {
      return;
    }
    if (!(current.timing instanceof Timing.Cron cron)) {
      verdict.codes.add(NOT_APPLICABLE);
      return;
    }
    if (current.state == State.SCHEDULED) {
      verdict.applied = new Applied(() -> {}, List.of()); // running: nothing to do
      return;
    }
    if (current.opaque) {
      verdict.applied =
          new Applied(
              () -> {
                Entry resumed = current.copy();
                resumed.state = State.SCHEDULED;
                stamp(resumed, intent.stampedMs());
                resumed.timeMs = Long.MIN_VALUE;
                entries.put(intent.id(), resumed);
              },
              List.of());
      return;
    }
    OptionalLong next = nextWhilePaused(current, cron, nowMs);
    verdict.applied =
        new Applied(
            () -> {
              if (next.isEmpty()) {
                entries.remove(intent.id());
                return;
              }
              Entry resumed = current.copy();
              resumed.state = State.SCHEDULED;
              resumed.timeMs = next.getAsLong();
              stamp(resumed, intent.stampedMs());
              entries.put(intent.id(), resumed);
            },
            List.of());
  }

  private OptionalLong nextWhilePaused(Entry paused, Timing.Cron cron, long nowMs) {
    long from = paused.timeMs == Long.MAX_VALUE ? nowMs : Math.max(nowMs, paused.timeMs + 1);
    return after(cron, from - 1, nowMs);
  }

  private void trigger(Intent intent, Entry current, long nowMs, Verdict verdict) {
    if (notLive(current, verdict) || unreadableTask(current, verdict)) {
      return;
    }
    String id = intent.id();
    if (current.timing instanceof Timing.Once) {
      Fire fire = new Fire(id, current.timeMs, nowMs, 0, current.task);
      verdict.applied =
          new Applied(
              () -> putMarker(id, State.FIRED, nowMs, intent.stampedMs(), content), List.of(fire));
      return;
    }
    Timing.Cron cron = (Timing.Cron) current.timing;
    if (current.opaque) {
      verdict.codes.add(NOT_APPLICABLE); // a paused opaque schedule may have nothing left
      verdict.applied =
          new Applied(
              () -> {
                Entry after = entries.get(id);
                if (after != null) { // null: the triggered occurrence was its last
                  stamp(after, intent.stampedMs());
                }
              },
              List.of(),
              true);
      return;
    }
    boolean paused = current.state == State.PAUSED;
    OptionalLong occurrence =
        paused ? nextWhilePaused(current, cron, nowMs) : OptionalLong.of(current.timeMs);
    if (occurrence.isEmpty()) {
      verdict.codes.add(NOT_APPLICABLE);
      return;
    }
    long due = occurrence.getAsLong();
    Fire fire = new Fire(id, due, nowMs, current.occurrence, current.task);
    boolean last = cron.maxFires() != 0 && current.occurrence >= cron.maxFires();
    OptionalLong next = last ? OptionalLong.empty() : after(cron, due, nowMs);
    verdict.applied =
        new Applied(
            () -> {
              if (next.isEmpty()) {
                entries.remove(id);
                return;
              }
              Entry after = current.copy();
              stamp(after, intent.stampedMs());
              after.occurrence = current.occurrence + 1;
              if (paused) {
                after.timeMs = due;
              } else {
                after.timeMs = next.getAsLong();
              }
              entries.put(id, after);
            },
            List.of(fire));
  }

  private void reschedule(Intent intent, Entry current, long nowMs, Verdict verdict) {
    if (notLive(current, verdict) || unreadableTask(current, verdict)) {
      return;
    }
    Intent moved =
        new Intent(
            Action.SCHEDULE,
            intent.id(),
            intent.stampedMs(),
            current.task.target(),
            current.task.targetKey(),
            current.task.partition(),
            intent.timing(),
            current.task.payload(),
            current.task.carried());
    boolean recurring = intent.timing() instanceof Timing.Cron;
    if (current.state == State.PAUSED && !recurring) {
      verdict.codes.add(NOT_APPLICABLE);
      return;
    }
    if (current.state == State.PAUSED) {
      Entry paused = new Entry();
      paused.state = State.PAUSED;
      paused.timeMs = Long.MAX_VALUE;
      stamp(paused, intent.stampedMs());
      paused.task = moved;
      paused.timing = intent.timing();
      paused.occurrence = 1;
      paused.opaque = ((Timing.Cron) intent.timing()).periodMs() == 0;
      verdict.applied = new Applied(() -> entries.put(intent.id(), paused), List.of());
      return;
    }
    schedule(intent.id(), moved, intent.timing(), nowMs, 1, verdict);
  }

  private static boolean notLive(Entry current, Verdict verdict) {
    if (current == null || current.state == State.CANCELLED || current.state == State.FIRED) {
      verdict.codes.add(NOT_APPLICABLE);
      return true;
    }
    return false;
  }

  private static boolean unreadableTask(Entry current, Verdict verdict) {
    if (current.taskUnreadable) {
      verdict.codes.add(UNREADABLE_TASK);
      return true;
    }
    return false;
  }

  private void putMarker(String id, State state, long nowMs, long requestMs, Content by) {
    long retention =
        state == State.CANCELLED ? config.cancelRetentionMs() : config.firedRetentionMs();
    if (state == State.FIRED && retention == 0) {
      entries.remove(id);
      return;
    }
    Entry marker = new Entry();
    marker.state = state;
    marker.timeMs = nowMs + retention;
    marker.requestMs = requestMs;
    marker.content = by;
    entries.put(id, marker);
  }

  /**
   * The first occurrence of a periodic cron strictly after {@code afterMs}, not before its start,
   * no later than its end and the horizon; empty if none.
   */
  OptionalLong after(Timing.Cron cron, long afterMs, long nowMs) {
    long from =
        cron.startAtMs() == Long.MIN_VALUE ? afterMs : Math.max(afterMs, cron.startAtMs() - 1);
    long period = cron.periodMs();
    long next = Math.floorDiv(from, period) * period + period;
    long limit = Math.min(cron.endAtMs(), saturatedAdd(nowMs, config.horizonMs()));
    return next <= limit ? OptionalLong.of(next) : OptionalLong.empty();
  }

  private static long saturatedAdd(long a, long b) {
    long sum = a + b;
    return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
  }

  /**
   * One punctuation at {@code nowMs}: expired markers go, then every entry due by now is handled
   * once, in due order. Checks what kdelay fired and dead-lettered against it.
   */
  void punctuate(long nowMs, Observed observed) {
    entries
        .entrySet()
        .removeIf(
            e ->
                (e.getValue().state == State.CANCELLED || e.getValue().state == State.FIRED)
                    && e.getValue().timeMs <= nowMs);
    if (!fenced && observed.fenced()) {
      // Something was due, and the task put up its fence instead of firing: it fires next time.
      check(
          observed.fires().isEmpty() && observed.deadLetters().isEmpty(),
          "a task fires nothing before its fence is read back: %s %s",
          observed.fires(),
          observed.deadLetters());
      fenced = true;
      return;
    }
    check(fenced || !observed.fenced(), "a fenced task put up its fence again");
    List<Fire> fires = new ArrayList<>();
    List<String> unreadable = new ArrayList<>();
    List<String> mayBeUnreadable = new ArrayList<>(); // opaque: due at a time the model cannot say
    List<String> opaqueFired = new ArrayList<>();
    for (String id : List.copyOf(entries.keySet())) {
      Entry entry = entries.get(id);
      if (entry.state == State.UNREADABLE) {
        unreadable.add(id);
        continue;
      }
      if (entry.state != State.SCHEDULED) {
        continue;
      }
      if (entry.opaque) {
        (entry.taskUnreadable ? mayBeUnreadable : opaqueFired).add(id);
        entry.mayHaveEnded = true;
        continue;
      }
      if (entry.timeMs > nowMs) {
        continue;
      }
      if (entry.taskUnreadable) {
        unreadable.add(id);
        continue;
      }
      onDue(id, entry, nowMs, fires);
    }
    // Dead letters: entries that cannot be read, each once, and nothing else.
    List<String> deadLettered = new ArrayList<>();
    for (DeadLetter letter : observed.deadLetters()) {
      check(
          letter.code().equals(UNREADABLE_TASK.name()),
          "a punctuation dead-letters only what it cannot read; got %s",
          letter.code());
      String id = new String(letter.key(), UTF8);
      check(
          unreadable.contains(id) || mayBeUnreadable.contains(id),
          "dead letter for %s, which is readable",
          id);
      deadLettered.add(id);
      entries.remove(id);
    }
    check(
        deadLettered.containsAll(unreadable),
        "entries that cannot be read come due and are dead-lettered: %s, got %s",
        unreadable,
        deadLettered);
    // Fires: exactly the model's, plus safe fires of opaque schedules.
    List<FiredRecord> known = new ArrayList<>();
    for (FiredRecord record : observed.fires()) {
      String id = record.header(DelayHeaders.ID);
      if (opaqueFired.contains(id)) {
        checkOpaqueFire(id, record, nowMs, false);
      } else {
        known.add(record);
      }
    }
    checkFires(fires, known, "punctuation at " + nowMs);
  }

  /** Handles a due entry of a computed schedule: fires it and moves it on, as the README says. */
  private void onDue(String id, Entry entry, long nowMs, List<Fire> fires) {
    if (entry.timing instanceof Timing.Once) {
      fires.add(new Fire(id, entry.timeMs, nowMs, 0, entry.task));
      putMarker(id, State.FIRED, nowMs, entry.requestMs, entry.content);
      return;
    }
    Timing.Cron cron = (Timing.Cron) entry.timing;
    long due = entry.timeMs;
    boolean missed = nowMs - due > config.misfireThresholdMs();
    boolean fire =
        !missed
            || cron.misfire() == Misfire.FIRE_ONCE
            || (cron.misfire() == Misfire.FIRE_ALL && nowMs - due <= config.catchUpWindowMs());
    if (fire) {
      fires.add(new Fire(id, due, nowMs, entry.occurrence, entry.task));
    }
    long fired = entry.occurrence - 1 + (fire ? 1 : 0);
    OptionalLong next;
    if (cron.maxFires() != 0 && fired >= cron.maxFires()) {
      next = OptionalLong.empty();
    } else if (!missed) {
      next = after(cron, due, nowMs);
    } else {
      long from = cron.misfire() == Misfire.FIRE_ALL ? nowMs - config.catchUpWindowMs() : nowMs;
      next = after(cron, Math.max(due, from - 1), nowMs);
    }
    if (next.isEmpty()) {
      entries.remove(id);
      return;
    }
    entry.timeMs = next.getAsLong();
    entry.occurrence += fire ? 1 : 0;
  }

  /**
   * A fire of an opaque schedule: at this punctuation, never early unless triggered, with its
   * content, as its next occurrence, and never the same occurrence twice.
   */
  private void checkOpaqueFire(String id, FiredRecord record, long nowMs, boolean triggered) {
    Entry entry = entries.get(id);
    check(entry != null && entry.opaque, "%s fired, which the model holds as %s", id, entry);
    long due = Long.parseLong(record.header(DelayHeaders.DUE_AT));
    long firedAt = Long.parseLong(record.header(DelayHeaders.FIRED_AT));
    check(firedAt == nowMs, "opaque %s fired at %d, not now (%d)", id, firedAt, nowMs);
    check(triggered || due <= firedAt, "opaque %s fired early: due %d at %d", id, due, firedAt);
    check(due > entry.lastOpaqueDue, "opaque %s fired %d again or out of order", id, due);
    checkContent(new Fire(id, due, nowMs, entry.occurrence, entry.task), record);
    entry.lastOpaqueDue = due;
    entry.occurrence++;
    long maxFires = ((Timing.Cron) entry.timing).maxFires();
    if (maxFires != 0 && entry.occurrence > maxFires) {
      entries.remove(id); // its last occurrence: the schedule ends, as a computed one does
    }
  }

  /** Compares the fires kdelay made with the model's, in any order. */
  private static void checkFires(List<Fire> expected, List<FiredRecord> observed, String what) {
    List<FiredRecord> left = new ArrayList<>(observed);
    for (Fire fire : expected) {
      FiredRecord match = null;
      for (FiredRecord record : left) {
        if (fire.idempotencyKey().equals(record.header(DelayHeaders.IDEMPOTENCY_KEY))) {
          match = record;
          break;
        }
      }
      check(
          match != null,
          "%s: expected %s to fire (key %s), got %s",
          what,
          fire.id(),
          fire.idempotencyKey(),
          describe(observed));
      left.remove(match);
      checkContent(fire, match);
    }
    check(left.isEmpty(), "%s: unexpected fires %s", what, describe(left));
  }

  private static String describe(List<FiredRecord> records) {
    return records.stream()
        .sorted(Comparator.comparing(r -> r.header(DelayHeaders.IDEMPOTENCY_KEY)))
        .map(r -> r.header(DelayHeaders.IDEMPOTENCY_KEY) + "@" + r.header(DelayHeaders.FIRED_AT))
        .toList()
        .toString();
  }

  /** A fired record holds what the contract says: key, payload, headers, timestamp. */
  private static void checkContent(Fire fire, FiredRecord record) {
    Intent task = fire.task();
    check(record.topic().equals(task.target()), "%s fired to %s", fire, record.topic());
    byte[] key = task.targetKey() != null ? task.targetKey() : fire.id().getBytes(UTF8);
    check(Arrays.equals(record.key(), key), "%s fired with another key", fire);
    check(Arrays.equals(record.value(), task.payload()), "%s fired another payload", fire);
    check(
        record.timestamp() == Math.min(fire.dueMs(), fire.firedAtMs()) && record.timestamp() >= 0,
        "%s fired stamped %d",
        fire,
        record.timestamp());
    List<Header> expected = new ArrayList<>(task.carried());
    List<Header> carried =
        record.headers().subList(0, Math.min(expected.size(), record.headers().size()));
    check(carried.equals(expected), "%s carried %s, not %s", fire, carried, expected);
    check(
        String.valueOf(fire.dueMs()).equals(record.header(DelayHeaders.DUE_AT))
            && String.valueOf(fire.firedAtMs()).equals(record.header(DelayHeaders.FIRED_AT))
            && fire.id().equals(record.header(DelayHeaders.ID)),
        "%s fired with headers %s",
        fire,
        record.headers());
    String occurrence = record.header(DelayHeaders.OCCURRENCE);
    if (task.timing() instanceof Timing.Cron && fire.occurrence() > 0) {
      check(
          String.valueOf(fire.occurrence()).equals(occurrence),
          "%s fired as occurrence %s",
          fire,
          occurrence);
    }
  }

  /**
   * Compares what kdelay holds for an id with what the model holds. A marker past its expiry may
   * still be held until the next punctuation sweeps it (a restore brings expired markers back).
   */
  void checkStore(String id, Decoded<ScheduleView> view, long nowMs) {
    Entry entry = entries.get(id);
    if (entry == null
        && view instanceof Decoded.Readable<ScheduleView> expired
        && (expired.value().status() == ScheduleView.Status.CANCELLED
            || expired.value().status() == ScheduleView.Status.FIRED)
        && expired.value().forgottenAtMs().orElse(Long.MAX_VALUE) <= nowMs) {
      return;
    }
    if (entry == null) {
      check(
          view instanceof Decoded.Readable<ScheduleView> r
              && r.value().status() == ScheduleView.Status.UNKNOWN,
          "%s: kdelay holds %s, the model nothing",
          id,
          view);
      return;
    }
    if (entry.state == State.UNREADABLE
        || (entry.taskUnreadable
            && (entry.state == State.SCHEDULED || entry.state == State.PAUSED))) {
      check(view instanceof Decoded.Unreadable, "%s: kdelay reads %s, the model cannot", id, view);
      return;
    }
    check(view instanceof Decoded.Readable, "%s: kdelay cannot read what the model holds", id);
    ScheduleView held = view.value();
    switch (entry.state) {
      case SCHEDULED -> {
        if (entry.opaque && held.status() == ScheduleView.Status.UNKNOWN) {
          // Its last occurrence in range came and went: the model cannot say when that is, so it
          // takes kdelay's word, but only after a punctuation that could have ended it.
          check(entry.mayHaveEnded, "%s: opaque schedule gone before it could come due", id);
          entries.remove(id);
          return;
        }
        if (entry.opaque) {
          check(
              held.status() == ScheduleView.Status.PENDING,
              "%s: opaque schedule held as %s",
              id,
              held);
          return;
        }
        check(
            held.status() == ScheduleView.Status.PENDING
                && held.nextDueMs().orElse(-1) == entry.timeMs
                && held.task().orElseThrow().occurrence() == entry.occurrence,
            "%s: kdelay holds %s, the model %s",
            id,
            held,
            entry);
      }
      case PAUSED ->
          check(
              held.status() == ScheduleView.Status.PAUSED
                  && (entry.opaque || held.task().orElseThrow().occurrence() == entry.occurrence),
              "%s: kdelay holds %s, the model %s",
              id,
              held,
              entry);
      case CANCELLED, FIRED ->
          check(
              held.status().name().equals(entry.state.name())
                  && held.forgottenAtMs().orElse(-1) == entry.timeMs,
              "%s: kdelay holds %s, the model %s",
              id,
              held,
              entry);
      default -> throw new AssertionError(entry.state);
    }
  }

  static void check(boolean condition, String message, Object... args) {
    if (!condition) {
      throw new AssertionError(String.format(message, args));
    }
  }

  @Override
  public String toString() {
    return entries.toString();
  }
}

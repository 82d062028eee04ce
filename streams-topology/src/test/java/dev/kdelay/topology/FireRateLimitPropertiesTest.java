package dev.kdelay.topology;

import static dev.kdelay.topology.DelayDriver.START;
import static dev.kdelay.topology.DelayDriver.header;
import static dev.kdelay.topology.DelayDriver.headerText;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.generators.Choices;
import dev.kdelay.schemas.generators.PropertyCheck;
import dev.kdelay.topology.internals.limits.FireSlots;
import dev.kdelay.topology.internals.store.ChangelogReplay;
import dev.kdelay.topology.internals.store.StoreFormat;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fire-rate limits on generated interleavings of schedules, replacements, cancels, triggers, clock
 * steps and restarts (exactly once, each restart restoring both stores from their changelogs), with
 * at most one, two or 2,000 fires per punctuation, checked against what the contract promises
 * rather than against a full model. Two properties: one where the stream thread punctuates on time,
 * one where it also comes back late (a long clock step in one go: a pause, a long commit).
 *
 * <p>What is checked:
 *
 * <ul>
 *   <li>each live one-shot fires exactly once, never before its due time, with the due time and
 *       idempotency key of the schedule that was live when it fired, to its own topic; a cancelled
 *       or already fired one never fires;
 *   <li>a trigger fires its task at once, as it was due;
 *   <li>the limited topic receives, in any second, at most its rate and its burst (triggers, which
 *       are not limited, aside), also after the thread came back late;
 *   <li>no task of the limited topic fires before one that both came due earlier (the later of its
 *       due time and the moment its request applied, with the 5 ms a punctuation spans as slack)
 *       and is due earlier (due time, then id). Each order alone is not promised: tasks wait for
 *       the limit in the order they came due, but a task a punctuation's cap left over waits in the
 *       store by due time, where an overdue request that applies meanwhile takes its place by its
 *       own due time. After a restart the new owner fires nothing until its fence has come back;
 *       every task that came due meanwhile (or in the punctuation before the restart) comes due,
 *       for this order, at the new owner's first fire;
 *   <li>no request is dead-lettered but a trigger of an id with nothing live.
 * </ul>
 */
class FireRateLimitPropertiesTest {

  private static final String LIMITED = "limited";
  private static final String FREE = "free";
  private static final int IDS = 8;

  /** The span of one punctuation: the order of tasks that came due within it is by due, then id. */
  private static final long PUNCTUATION_MS = 5;

  @TempDir Path tempDir;

  /**
   * A generated case: a limit, the most fires a punctuation may make (small ones leave due tasks to
   * the next punctuations), and the steps.
   */
  record Case(double rate, int burst, int firesPerPunctuation, List<Step> steps) {}

  /** One step of a case. */
  sealed interface Step {}

  /** A one-shot for an id, due {@code dueInMs} from now (negative: overdue), to a topic. */
  record Schedule(int id, boolean limited, long dueInMs) implements Step {}

  /** A cancel of an id. */
  record Cancel(int id) implements Step {}

  /** A trigger of an id. */
  record Trigger(int id) implements Step {}

  /** The wall clock moved on, in punctuation-sized steps. */
  record Advance(long ms) implements Step {}

  /**
   * The wall clock moved on in one step: the stream thread came back late (a long commit, a GC
   * pause), and its next punctuation finds everything that came due meanwhile, deferred slots that
   * passed included.
   */
  record Stall(long ms) implements Step {}

  /** The instance stopped, and another took the partition over from the changelogs. */
  record Restart() implements Step {}

  /**
   * Found by a long run (seed -8450361163418285148): t1 came due before a restart, t0's overdue
   * request applied after it, before the new owner's first fire; that fire took both in due order,
   * t0 first (same due time, lower id). What the model wrongly called a reordering.
   */
  @Test
  void shouldTakeWhatCameDueWhileTheNewOwnerWaitedForItsFenceInDueOrder() {
    check(
        new Case(
            1.0,
            1,
            2_000,
            List.of(
                new Schedule(1, true, 0),
                new Schedule(0, false, 0),
                new Schedule(0, false, 0),
                new Schedule(0, false, 0),
                new Restart(),
                new Schedule(0, false, 0),
                new Schedule(0, false, 0),
                new Schedule(0, true, -6))));
  }

  /**
   * Found by a long run (seed 2104263030048026400): a restart 1 ms after the release of the one
   * before it; t1, applied just after that release's punctuation, was held by the second restart
   * with t0, and the model took t1's time from the first window.
   */
  @Test
  void shouldTakeWhatCameDueAtARestartsReleaseAsHeldByTheNextRestart() {
    check(
        new Case(
            1.0,
            1,
            2_000,
            List.of(
                new Schedule(0, false, 0),
                new Schedule(0, false, 0),
                new Cancel(0),
                new Restart(),
                new Schedule(0, false, 0),
                new Schedule(1, true, 0),
                new Schedule(0, true, -15),
                new Restart())));
  }

  /**
   * Found by the generator once it made long clock steps and small punctuations (seed
   * -2609422326906031366, against the code before the fix of fire-rate order): t1 was deferred to
   * its slot behind t3; t2, due after t1 but before that slot, was still waiting when the stream
   * thread came back after the slot had passed, met first in the due index, and fired before t1.
   */
  @Test
  void shouldKeepDueOrderWhenTheClockStepsPastADeferredSlot() {
    check(
        new Case(
            5.0,
            1,
            1,
            List.of(
                new Schedule(3, true, 0),
                new Schedule(2, true, 9),
                new Cancel(0),
                new Schedule(1, true, 0),
                new Advance(3),
                new Schedule(0, false, 0),
                new Schedule(0, false, 0),
                new Schedule(0, false, 0),
                new Stall(392))));
  }

  /**
   * Found by the generator (seed -7899523296294887047): t1 came due while the punctuation's cap of
   * one fire was spent on t0's free task, and waited in the store; t0's overdue request for the
   * limited topic then applied, due with t1, and took the one token ahead of it (same due time,
   * lower id). Due order; what the model wrongly called a reordering.
   */
  @Test
  void shouldLetAnOverdueRequestWaitByItsDueTimeBehindAPunctuationsCap() {
    check(
        new Case(
            1.0,
            1,
            1,
            List.of(
                new Schedule(0, false, 255),
                new Schedule(1, true, 445),
                new Advance(65),
                new Stall(385),
                new Schedule(0, true, -6))));
  }

  /**
   * Found by the generator (seed 3186433907219729166): two deferred slots passed while the stream
   * thread was away for 1.5 s, and both went out at once when it came back, with the next slot's
   * fire three within 995 ms at a limit of one a second. A deferred fire whose slot came late now
   * asks the limit again.
   */
  @Test
  void shouldKeepTheRateWhenDeferredSlotsPassWhileTheThreadIsAway() {
    check(
        new Case(
            1.0,
            1,
            1,
            List.of(
                new Schedule(0, true, 0),
                new Cancel(1),
                new Schedule(2, true, 0),
                new Schedule(1, true, 0),
                new Schedule(0, true, 0),
                new Advance(501),
                new Stall(1504))));
  }

  /**
   * Found by the generator (seed -2439959959243643093), with late deferred fires settled again: t0
   * was settled behind a fire settled again, and t1, due after t0 but taken later, got a slot from
   * the limit's burst ahead of t0's. A task due before the latest deferred slot now takes a slot an
   * interval after it.
   */
  @Test
  void shouldPutATaskDueBeforeTheLatestDeferredSlotBehindIt() {
    check(
        new Case(
            1.0,
            3,
            1,
            List.of(
                new Cancel(0),
                new Schedule(0, true, 0),
                new Stall(1133),
                new Schedule(3, true, 0),
                new Schedule(1, true, 0),
                new Schedule(2, false, 0),
                new Restart(),
                new Schedule(0, false, 0),
                new Schedule(0, false, 0),
                new Stall(992),
                new Advance(16),
                new Schedule(0, true, 0),
                new Schedule(1, true, 299))));
  }

  @Test
  void shouldFireEveryTaskOnceInOrderAndWithinTheLimit() {
    PropertyCheck.forAll(
        "fire-rate limits: interleavings with restarts",
        150,
        choices -> generate(choices, false),
        this::check);
  }

  @Test
  void shouldFireEveryTaskOnceInOrderWhenTheStreamThreadComesBackLate() {
    PropertyCheck.forAll(
        "fire-rate limits: a stream thread that comes back late",
        100,
        choices -> generate(choices, true),
        this::check);
  }

  /**
   * @param stalls whether the clock may also move on in one long step
   */
  private static Case generate(Choices choices, boolean stalls) {
    // Slow enough that deferred tasks are still waiting when the next steps come
    double rate = choices.pick(List.of(1.0, 2.0, 5.0, 20.0));
    int burst = choices.intBetween(1, 3);
    int firesPerPunctuation = choices.pick(List.of(1, 2, 2_000));
    List<Step> steps =
        choices.list(
            24,
            90,
            c ->
                switch (c.weighted(6, 1, 1, 3, stalls ? 1 : 0, 2)) {
                  case 0 -> new Schedule(c.below(IDS), c.chance(80), c.between(-300, 1_000));
                  case 1 -> new Cancel(c.below(IDS));
                  case 2 -> new Trigger(c.below(IDS));
                  case 3 -> new Advance(c.between(0, 800));
                  // a few slots of the slowest limits to several of the fastest one's
                  case 4 -> new Stall(c.between(PUNCTUATION_MS + 1, 2_500));
                  default -> new Restart();
                });
    return new Case(rate, burst, firesPerPunctuation, steps);
  }

  /** What is live for an id. */
  private record Live(String topic, long dueMs, long appliedMs) {}

  /** A fire seen by a consumer of the limited or the free topic. */
  private record Fire(String id, String topic, long dueMs, long firedMs, boolean triggered) {}

  /** The store's order of due tasks: due time, then id. */
  private static final Comparator<Fire> DUE_ORDER =
      Comparator.comparingLong(Fire::dueMs).thenComparing(Fire::id);

  private void check(Case c) {
    Map<String, Object> overrides =
        Map.of(
            DelayConfig.FIRE_RATE_LIMITS_CONFIG,
            LIMITED + "=" + c.rate() + "/" + c.burst(),
            DelayConfig.MAX_FIRES_PER_PUNCTUATION_CONFIG,
            c.firesPerPunctuation());
    Run run = new Run(overrides);
    try {
      for (Step step : c.steps()) {
        if (step instanceof Schedule s) {
          run.schedule(s);
        } else if (step instanceof Cancel x) {
          run.cancel(x);
        } else if (step instanceof Trigger t) {
          run.trigger(t);
        } else if (step instanceof Advance a) {
          run.advance(a.ms());
        } else if (step instanceof Stall s) {
          run.stall(s.ms());
        } else {
          run.restart();
        }
      }
      // then: everything live fires, at the limit's pace at most
      long latestDue = run.live.values().stream().mapToLong(Live::dueMs).max().orElse(run.nowMs());
      // every schedule may have taken a slot, cancelled and replaced ones too
      long schedules = c.steps().stream().filter(s -> s instanceof Schedule).count();
      long drain = (long) (schedules / c.rate() * 1000) + 1_000;
      run.advance(Math.max(0, latestDue - run.nowMs()) + drain);
      assertThat(run.live).as("every live task fired").isEmpty();

      List<Fire> limited =
          run.fires.stream().filter(f -> f.topic().equals(LIMITED) && !f.triggered()).toList();
      int allowed = c.burst() + (int) Math.ceil(c.rate());
      for (int from = 0, to = 0; to < limited.size(); to++) {
        while (limited.get(to).firedMs() - limited.get(from).firedMs() >= 1_000) {
          from++;
        }
        assertThat(to - from + 1)
            .as("fires to the limited topic within a second, up to %s", limited.get(to))
            .isLessThanOrEqualTo(allowed);
      }
      for (int i = 1; i < limited.size(); i++) {
        Fire before = limited.get(i - 1);
        Fire after = limited.get(i);
        boolean cameDueFirst = run.cameDue.get(after) + PUNCTUATION_MS < run.cameDue.get(before);
        boolean dueFirst = DUE_ORDER.compare(after, before) < 0;
        assertThat(cameDueFirst && dueFirst)
            .as("%s fired after %s, which came due later and is due later", before, after)
            .isFalse();
      }
    } finally {
      run.close();
    }
  }

  /** One case's driver, the contract's expectations, and what consumers saw. */
  private final class Run implements AutoCloseable {

    private final Map<String, Object> overrides;
    private DelayDriver driver;
    private final Map<String, Live> live = new HashMap<>();
    private final List<Fire> fires = new ArrayList<>();
    private final Map<Fire, Long> cameDue = new HashMap<>();
    private final List<TestRecord<byte[], byte[]>> scheduleLog = new ArrayList<>();
    private final List<TestRecord<byte[], byte[]>> slotLog = new ArrayList<>();

    /**
     * Since restarts, until the new owner's first fire: {@code [from, released]}, where a task that
     * came due in it came due, for the order, at {@code released}; {@code released} unknown
     * (Long.MAX_VALUE) until that fire is seen.
     */
    private final List<long[]> held = new ArrayList<>();

    Run(Map<String, Object> overrides) {
      this.overrides = overrides;
      this.driver = DelayDriver.exactlyOnce(newStateDir(), overrides);
    }

    long nowMs() {
      return driver.now().toEpochMilli();
    }

    void schedule(Schedule s) {
      String id = id(s.id());
      String topic = s.limited() ? LIMITED : FREE;
      long due = nowMs() + 1 + s.dueInMs();
      request(
          id,
          "p",
          header(DelayHeaders.TARGET_TOPIC, topic),
          header(DelayHeaders.FIRE_AT, Long.toString(due)));
      live.put(id, new Live(topic, due, nowMs()));
      observe(null);
    }

    void cancel(Cancel x) {
      String id = id(x.id());
      request(id, null, header(DelayHeaders.ACTION, "cancel"));
      live.remove(id);
      observe(null);
    }

    void trigger(Trigger t) {
      String id = id(t.id());
      boolean wasLive = live.containsKey(id);
      request(id, null, header(DelayHeaders.ACTION, "trigger"));
      observe(wasLive ? id : null);
      assertThat(live).as("a triggered task fires at once").doesNotContainKey(id);
    }

    void advance(long ms) {
      driver.advanceTo(driver.now().plusMillis(ms));
      observe(null);
    }

    void stall(long ms) {
      driver.advance(Duration.ofMillis(ms));
      observe(null);
    }

    /** Each request gets a millisecond of its own: ties between requests are another matter. */
    private void request(
        String id, String value, org.apache.kafka.common.header.Header... headers) {
      driver.advance(Duration.ofMillis(1));
      observe(null);
      driver.request(id, value, headers);
    }

    /** Reads what the driver wrote, and holds each fire against what was live. */
    private void observe(String triggered) {
      Map<String, List<TestRecord<byte[], byte[]>>> read = new HashMap<>();
      long firstFired = Long.MAX_VALUE;
      for (String topic : List.of(LIMITED, FREE)) {
        read.put(topic, driver.output(topic).readRecordsToList());
        for (TestRecord<byte[], byte[]> record : read.get(topic)) {
          firstFired =
              Math.min(
                  firstFired, Long.parseLong(headerText(record.headers(), DelayHeaders.FIRED_AT)));
        }
      }
      if (!held.isEmpty() && held.get(held.size() - 1)[1] == Long.MAX_VALUE) {
        held.get(held.size() - 1)[1] = firstFired;
      }
      for (String topic : List.of(LIMITED, FREE)) {
        for (TestRecord<byte[], byte[]> record : read.get(topic)) {
          String id = headerText(record.headers(), DelayHeaders.ID);
          long due = Long.parseLong(headerText(record.headers(), DelayHeaders.DUE_AT));
          long fired = Long.parseLong(headerText(record.headers(), DelayHeaders.FIRED_AT));
          Live expected = live.remove(id);
          assertThat(expected)
              .as("a live task for %s fired (to %s, due %d)", id, topic, due)
              .isNotNull();
          assertThat(topic).as("the topic of %s", id).isEqualTo(expected.topic());
          assertThat(due).as("the due time %s fired with", id).isEqualTo(expected.dueMs());
          assertThat(headerText(record.headers(), DelayHeaders.IDEMPOTENCY_KEY))
              .isEqualTo(DelayHeaders.idempotencyKey(id, due));
          boolean byTrigger = id.equals(triggered);
          if (!byTrigger) {
            assertThat(fired).as("%s not early", id).isGreaterThanOrEqualTo(due);
          }
          Fire fire = new Fire(id, topic, due, fired, byTrigger);
          fires.add(fire);
          cameDue.put(fire, cameDue(Math.max(due, expected.appliedMs())));
        }
      }
      for (TestRecord<byte[], byte[]> letter : driver.deadLetters()) {
        assertThat(headerText(letter.headers(), DelayHeaders.ERROR))
            .as("the only dead letter expected: a trigger of nothing live")
            .isEqualTo("NOT_APPLICABLE");
      }
      scheduleLog.addAll(
          driver
              .output(StoreFormat.changelogTopic(driver.config.applicationId()))
              .readRecordsToList());
      slotLog.addAll(driver.output(slotsChangelog()).readRecordsToList());
    }

    /**
     * When a task that came due at {@code ms} came due for the order: see {@link #held}. Windows
     * may overlap (a restart soon after a release: the punctuation before it may not have run
     * either); the latest that holds the time decides.
     */
    private long cameDue(long ms) {
      long at = ms;
      for (long[] window : held) {
        if (ms > window[0] && ms <= window[1]) {
          at = Math.max(at, window[1]);
        }
      }
      return at;
    }

    void restart() {
      Instant stopped = driver.now();
      if (held.isEmpty() || held.get(held.size() - 1)[1] != Long.MAX_VALUE) {
        // the punctuation before the restart may not have run either
        held.add(new long[] {stopped.toEpochMilli() - PUNCTUATION_MS, Long.MAX_VALUE});
      }
      driver.close();
      driver = DelayDriver.exactlyOnce(newStateDir(), overrides);
      ChangelogReplay.restore(StoredSchedules.of(driver.driver), scheduleLog);
      KeyValueStore<String, Long> clocks = driver.driver.getKeyValueStore(FireSlots.STORE);
      try (StringDeserializer keys = new StringDeserializer();
          LongDeserializer values = new LongDeserializer()) {
        for (TestRecord<byte[], byte[]> record : slotLog) {
          clocks.put(keys.deserialize("", record.key()), values.deserialize("", record.value()));
        }
      }
      driver.advance(Duration.between(START, stopped));
      observe(null);
    }

    private String slotsChangelog() {
      return driver.config.applicationId() + "-" + FireSlots.STORE + "-changelog";
    }

    private Path newStateDir() {
      try {
        return Files.createTempDirectory(tempDir, "state-");
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    private String id(int index) {
      return "t" + index;
    }

    @Override
    public void close() {
      driver.close();
    }
  }
}

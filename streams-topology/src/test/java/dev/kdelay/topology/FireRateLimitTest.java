package dev.kdelay.topology;

import static dev.kdelay.topology.DelayDriver.START;
import static dev.kdelay.topology.DelayDriver.header;
import static dev.kdelay.topology.DelayDriver.headerText;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.topology.internals.limits.FireSlots;
import dev.kdelay.topology.internals.store.ChangelogReplay;
import dev.kdelay.topology.internals.store.StoreFormat;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fire-rate limits ({@code delay.fire.rate.limits}): a limited topic receives at most its rate, its
 * tasks in the order they came due, each exactly once with the due time and idempotency key it
 * would have had on time, while other topics' tasks fire on time; a deferred task stays cancellable
 * and triggerable; and a restart in the middle of a drain keeps both the order and the rate.
 */
class FireRateLimitTest {

  private static final String LIMITED = "limited";
  private static final String FREE = "free";
  private static final Instant DUE = START.plusSeconds(10);

  /** Five a second, one at a time: a slot every 200 ms. */
  private static final Map<String, Object> FIVE_A_SECOND =
      Map.of(DelayConfig.FIRE_RATE_LIMITS_CONFIG, LIMITED + "=5/1");

  private static final long INTERVAL_MS = 200;

  /** How much later than its slot a task may fire: the punctuation interval. */
  private static final long PUNCTUATION_MS = 5;

  @TempDir Path stateDir;
  @TempDir Path restartedDir;

  @Test
  void shouldFireALimitedTopicAtItsRateInDueOrderWhileOtherTopicsFireOnTime() {
    try (DelayDriver driver = new DelayDriver(stateDir, FIVE_A_SECOND)) {
      // given: 20 tasks for the limited topic due within 20 ms, and 5 for another topic
      for (int i = 0; i < 20; i++) {
        schedule(driver, "task-" + i, LIMITED, DUE.plusMillis(i));
      }
      for (int i = 0; i < 5; i++) {
        schedule(driver, "free-" + i, FREE, DUE.plusMillis(i));
      }

      // when: the clock runs past their due time
      driver.advanceTo(DUE.plusSeconds(6));

      // then: the other topic's tasks fired on time
      List<Fire> free = fires(driver, FREE);
      assertThat(free).hasSize(5);
      assertThat(free).allSatisfy(fire -> assertThat(fire.lateMs()).isLessThan(25));

      // and the limited topic's, once each, in due order, one slot apart, each as it was due
      List<Fire> limited = fires(driver, LIMITED);
      assertThat(limited).extracting(Fire::id).containsExactlyElementsOf(ids("task-", 0, 20));
      assertThat(limited)
          .allSatisfy(
              fire -> {
                long due = DUE.toEpochMilli() + Long.parseLong(fire.id().substring(5));
                assertThat(fire.dueMs()).isEqualTo(due);
                assertThat(fire.idempotencyKey())
                    .isEqualTo(DelayHeaders.idempotencyKey(fire.id(), due));
              });
      assertSpacedAtTheRate(limited);
      // 20 at 5 a second: the last is 19 slots after the first
      assertThat(limited.get(19).firedMs() - limited.get(0).firedMs())
          .isBetween(19 * INTERVAL_MS, 19 * INTERVAL_MS + PUNCTUATION_MS);
      assertThat(driver.deadLetters()).isEmpty();
    }
  }

  /**
   * A deferred task waits in the due index at its slot, so a task due after it but before that slot
   * comes first in the index: when the stream thread comes back after the slot has passed (a
   * commit, a pause), the later task must not take the limit's free slot and fire first.
   */
  @Test
  void shouldKeepDueOrderWhenTheStreamThreadComesBackAfterADeferredSlotPassed() {
    try (DelayDriver driver = new DelayDriver(stateDir, FIVE_A_SECOND)) {
      // given: x takes the one token, a (due just after) is deferred a slot, b is due before a's
      // slot
      schedule(driver, "x", LIMITED, DUE);
      schedule(driver, "a", LIMITED, DUE.plusMillis(1));
      schedule(driver, "b", LIMITED, DUE.plusMillis(20));
      driver.advanceTo(DUE.plusMillis(5));

      // when: the next punctuation comes three slots later
      driver.advance(Duration.ofMillis(3 * INTERVAL_MS));
      driver.advanceTo(DUE.plusSeconds(3));

      // then: a before b, each once, none early, as it was due, and a slot apart: a's slot passed
      // while the thread was away, so a goes out when it comes back and b a slot later
      List<Fire> limited = fires(driver, LIMITED);
      assertThat(limited).extracting(Fire::id).containsExactly("x", "a", "b");
      assertSpacedAtTheRate(limited);
      assertThat(limited)
          .allSatisfy(fire -> assertThat(fire.firedMs()).isGreaterThanOrEqualTo(fire.dueMs()));
      assertThat(limited.get(1).dueMs()).isEqualTo(DUE.toEpochMilli() + 1);
      assertThat(limited.get(2).dueMs()).isEqualTo(DUE.toEpochMilli() + 20);
    }
  }

  /**
   * Two tasks due before a deferred task's slot, met when the stream thread comes back after it,
   * both within the limit's burst: each waits one punctuation behind the deferred one, at the same
   * slot, where the index orders them by id. They must still fire in due order.
   */
  @Test
  void shouldKeepDueOrderAmongTasksThatWaitedBehindADeferredOne() {
    Map<String, Object> fiveASecondTwoAtOnce =
        Map.of(DelayConfig.FIRE_RATE_LIMITS_CONFIG, LIMITED + "=5/2");
    try (DelayDriver driver = new DelayDriver(stateDir, fiveASecondTwoAtOnce)) {
      // given: p and q take the burst, a (due just after) is deferred a slot; z and b are due
      // before a's slot, z first, though its id sorts last
      schedule(driver, "p", LIMITED, DUE);
      schedule(driver, "q", LIMITED, DUE);
      schedule(driver, "a", LIMITED, DUE.plusMillis(1));
      schedule(driver, "z", LIMITED, DUE.plusMillis(20));
      schedule(driver, "b", LIMITED, DUE.plusMillis(30));
      driver.advanceTo(DUE.plusMillis(5));

      // when: the next punctuation comes five slots later, with the burst free again
      driver.advance(Duration.ofMillis(5 * INTERVAL_MS));
      driver.advanceTo(DUE.plusSeconds(3));

      // then: in due order, each once, none early
      List<Fire> limited = fires(driver, LIMITED);
      assertThat(limited).extracting(Fire::id).containsExactly("p", "q", "a", "z", "b");
      assertThat(limited)
          .allSatisfy(fire -> assertThat(fire.firedMs()).isGreaterThanOrEqualTo(fire.dueMs()));
      assertThat(driver.deadLetters()).isEmpty();
    }
  }

  /**
   * Deferred slots that all passed while the stream thread was away (a pause, a long commit) do not
   * go out together when it comes back: each asks the limit again, and they leave at its rate.
   */
  @Test
  void shouldKeepTheRateForDeferredSlotsThatPassedWhileTheThreadWasAway() {
    try (DelayDriver driver = new DelayDriver(stateDir, FIVE_A_SECOND)) {
      // given: six due at once, one fires, five deferred a slot apart
      for (int i = 0; i < 6; i++) {
        schedule(driver, "task-" + i, LIMITED, DUE);
      }
      driver.advanceTo(DUE.plusMillis(5));
      assertThat(fires(driver, LIMITED)).extracting(Fire::id).containsExactly("task-0");

      // when: the next punctuation comes after all five slots have passed
      driver.advance(Duration.ofMillis(6 * INTERVAL_MS));
      driver.advanceTo(DUE.plusSeconds(5));

      // then: the five go out a slot apart, in due order, each once, as it was due
      List<Fire> limited = fires(driver, LIMITED);
      assertThat(limited).extracting(Fire::id).containsExactlyElementsOf(ids("task-", 1, 6));
      assertSpacedAtTheRate(limited);
      assertThat(limited)
          .allSatisfy(fire -> assertThat(fire.dueMs()).isEqualTo(DUE.toEpochMilli()));
      assertThat(driver.deadLetters()).isEmpty();
    }
  }

  @Test
  void shouldHoldATenantToItsLimitAcrossItsTopicsWhileTheOtherTenantFiresOnTime() {
    Map<String, Object> teamaFiveASecond =
        Map.of(
            DelayConfig.TENANTS_CONFIG,
            "teama,teamb",
            DelayConfig.FIRE_RATE_LIMITS_CONFIG,
            "tenant:teama=5/1");
    try (DelayDriver driver = new DelayDriver(stateDir, teamaFiveASecond)) {
      // given: teama's ten tasks due at once, half to each of its topics; teamb's five, same time
      for (int i = 0; i < 10; i++) {
        driver.requestAs(
            "teama",
            "task-" + i,
            "a",
            header(DelayHeaders.TARGET_TOPIC, i % 2 == 0 ? "teama.x" : "teama.y"),
            header(DelayHeaders.FIRE_AT, Long.toString(DUE.toEpochMilli())));
      }
      for (int i = 0; i < 5; i++) {
        driver.requestAs(
            "teamb",
            "task-" + i,
            "b",
            header(DelayHeaders.TARGET_TOPIC, "teamb.x"),
            header(DelayHeaders.FIRE_AT, Long.toString(DUE.toEpochMilli())));
      }

      // when
      driver.advanceTo(DUE.plusSeconds(3));

      // then: teamb's fired on time, though teama's came due with them
      List<Fire> teamb = fires(driver, "teamb.x");
      assertThat(teamb).hasSize(5).allSatisfy(fire -> assertThat(fire.lateMs()).isLessThan(25));
      // and teama's went out over both its topics at its rate, in due order (then by id), each as
      // it was due
      List<Fire> teama = new ArrayList<>(fires(driver, "teama.x"));
      teama.addAll(fires(driver, "teama.y"));
      teama.sort(java.util.Comparator.comparingLong(Fire::firedMs));
      assertThat(teama).extracting(Fire::id).containsExactlyElementsOf(ids("task-", 0, 10));
      assertThat(teama).allSatisfy(fire -> assertThat(fire.dueMs()).isEqualTo(DUE.toEpochMilli()));
      assertSpacedAtTheRate(teama);
      assertThat(teama.get(9).firedMs() - DUE.toEpochMilli())
          .isBetween(9 * INTERVAL_MS, 9 * INTERVAL_MS + PUNCTUATION_MS);
    }
  }

  @Test
  void shouldNeverFireADeferredTaskThatWasCancelledAndFireATriggeredOneOnceAsItWasDue() {
    try (DelayDriver driver = new DelayDriver(stateDir, FIVE_A_SECOND)) {
      for (int i = 0; i < 10; i++) {
        schedule(driver, "task-" + i, LIMITED, DUE);
      }
      driver.advanceTo(DUE.plusMillis(50)); // the first fired, the other nine deferred
      assertThat(fires(driver, LIMITED)).extracting(Fire::id).containsExactly("task-0");

      // when: a deferred task is cancelled, and another triggered
      driver.request("task-5", null, header(DelayHeaders.ACTION, "cancel"));
      driver.request("task-8", null, header(DelayHeaders.ACTION, "trigger"));
      driver.advanceTo(DUE.plusSeconds(4));

      // then: the cancelled one never fires; the triggered one fired at once, as it was due, and
      // not again at its slot
      List<Fire> fires = fires(driver, LIMITED);
      assertThat(fires)
          .extracting(Fire::id)
          .containsExactly(
              "task-8", "task-1", "task-2", "task-3", "task-4", "task-6", "task-7", "task-9")
          .doesNotContain("task-5");
      Fire triggered = fires.get(0);
      assertThat(triggered.dueMs()).isEqualTo(DUE.toEpochMilli());
      assertThat(triggered.idempotencyKey())
          .isEqualTo(DelayHeaders.idempotencyKey("task-8", DUE.toEpochMilli()));
      assertThat(triggered.firedMs()).isLessThan(DUE.toEpochMilli() + 100);
      assertThat(driver.deadLetters()).isEmpty();
    }
  }

  @Test
  void shouldKeepTheOrderAndTheRateWhenRestartedInTheMiddleOfADrain() {
    List<Fire> before;
    List<TestRecord<byte[], byte[]>> schedules;
    List<TestRecord<byte[], byte[]>> clocks;
    Instant stopped = DUE.plusMillis(1_000);
    // Exactly once, as the service runs: at least once, a restart fires the last batch again.
    try (DelayDriver driver = DelayDriver.exactlyOnce(stateDir, FIVE_A_SECOND)) {
      // given: 20 tasks due at once, drained for a second, then the instance stops
      for (int i = 0; i < 20; i++) {
        schedule(driver, "task-" + (char) ('a' + i), LIMITED, DUE);
      }
      driver.advanceTo(stopped);
      before = fires(driver, LIMITED);
      schedules =
          driver.output(StoreFormat.changelogTopic(applicationId(driver))).readRecordsToList();
      clocks = driver.output(slotsChangelog(driver)).readRecordsToList();
    }
    assertThat(before).hasSize(6); // at DUE, then one every 200 ms up to a second later
    assertThat(clocks).as("the clocks' changelog").isNotEmpty();

    // when: another instance takes the partition over, its stores restored from their changelogs,
    // and a task for the limited topic comes due at once
    try (DelayDriver driver = DelayDriver.exactlyOnce(restartedDir, FIVE_A_SECOND)) {
      ChangelogReplay.restore(StoredSchedules.of(driver.driver), schedules);
      restoreClocks(driver, clocks);
      driver.advance(Duration.between(START, stopped));
      schedule(driver, "came-due-later", LIMITED, stopped);
      driver.advanceTo(stopped.plusSeconds(4));
      List<Fire> after = fires(driver, LIMITED);

      // then: the 14 left fire in their order, one slot apart from the last fire before the stop,
      // and the task that came due later waits behind them
      List<Fire> all = new ArrayList<>(before);
      all.addAll(after);
      List<String> expected = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        expected.add("task-" + (char) ('a' + i));
      }
      expected.add("came-due-later");
      assertThat(all).extracting(Fire::id).containsExactlyElementsOf(expected);
      assertSpacedAtTheRate(all);
      assertThat(driver.deadLetters()).isEmpty();
    }
  }

  @Test
  void shouldFireEachOccurrenceOfACronScheduleFasterThanItsLimitOnceAndInOrder() {
    // a schedule every second, for a topic limited to one fire every two seconds
    try (DelayDriver driver =
        new DelayDriver(stateDir, Map.of(DelayConfig.FIRE_RATE_LIMITS_CONFIG, LIMITED + "=0.5"))) {
      driver.request(
          "every-second",
          "tick",
          header(DelayHeaders.TARGET_TOPIC, LIMITED),
          header(DelayHeaders.CRON, "* * * * * ?"));
      driver.advanceTo(START.plusSeconds(20));

      // then: each occurrence fires once, in order, with its own due time, two seconds apart
      List<Fire> fires = fires(driver, LIMITED);
      assertThat(fires).hasSizeBetween(9, 11);
      long first = fires.get(0).dueMs();
      for (int i = 0; i < fires.size(); i++) {
        Fire fire = fires.get(i);
        assertThat(fire.occurrence()).isEqualTo(i + 1);
        assertThat(fire.dueMs()).isEqualTo(first + i * 1_000L);
        if (i > 0) {
          assertThat(fire.firedMs() - fires.get(i - 1).firedMs()).isGreaterThanOrEqualTo(2_000);
        }
      }
      assertThat(driver.deadLetters()).isEmpty();
    }
  }

  @Test
  void shouldFireATriggeredDeferredOccurrenceOnceAndSkipOneDeferredBeforeAPause() {
    // two schedules every second, each for a topic limited to one fire every two seconds
    try (DelayDriver driver =
        new DelayDriver(
            stateDir, Map.of(DelayConfig.FIRE_RATE_LIMITS_CONFIG, "limited=0.5,paced=0.5"))) {
      driver.request(
          "triggered",
          "t",
          header(DelayHeaders.TARGET_TOPIC, LIMITED),
          header(DelayHeaders.CRON, "* * * * * ?"));
      driver.request(
          "paused",
          "p",
          header(DelayHeaders.TARGET_TOPIC, "paced"),
          header(DelayHeaders.CRON, "* * * * * ?"));
      // each fires its first occurrence at START; the second, due at START + 1 s, is deferred to
      // START + 2 s, and the third, due then, to START + 4 s
      driver.advanceTo(START.plusMillis(2_500));

      // when: one schedule is triggered and the other paused while their third occurrences wait
      driver.request("triggered", null, header(DelayHeaders.ACTION, "trigger"));
      driver.request("paused", null, header(DelayHeaders.ACTION, "pause"));
      driver.advanceTo(START.plusSeconds(6));
      driver.request("paused", null, header(DelayHeaders.ACTION, "resume"));
      driver.advanceTo(START.plusMillis(9_500));

      // then: the triggered occurrence fired at once as the one due at START + 2 s, and not again
      // at its slot; the schedule goes on from the next occurrence, deferred behind it
      long start = START.toEpochMilli();
      List<Fire> triggered = fires(driver, LIMITED);
      assertThat(triggered).extracting(Fire::occurrence).startsWith(1L, 2L, 3L, 4L);
      assertThat(triggered)
          .extracting(Fire::dueMs)
          .startsWith(start, start + 1_000, start + 2_000, start + 3_000);
      assertThat(triggered.get(2).firedMs()).isBetween(start + 2_500, start + 2_600);
      assertThat(triggered.get(3).firedMs()).isGreaterThanOrEqualTo(start + 6_000);
      // and the occurrence deferred before the pause was skipped by it, as any occurrence that
      // falls in a pause: the resumed schedule fires its next occurrence after the resume
      List<Fire> paused = fires(driver, "paced");
      assertThat(paused).extracting(Fire::occurrence).startsWith(1L, 2L, 3L);
      assertThat(paused).extracting(Fire::dueMs).startsWith(start, start + 1_000);
      assertThat(paused.get(2).dueMs()).isGreaterThanOrEqualTo(start + 6_000);
      assertThat(driver.deadLetters()).isEmpty();
    }
  }

  /** Each fire at least one slot after the one before it, less the punctuation's granularity. */
  private static void assertSpacedAtTheRate(List<Fire> fires) {
    for (int i = 1; i < fires.size(); i++) {
      assertThat(fires.get(i).firedMs() - fires.get(i - 1).firedMs())
          .as("%s after %s", fires.get(i).id(), fires.get(i - 1).id())
          .isGreaterThanOrEqualTo(INTERVAL_MS - PUNCTUATION_MS);
    }
  }

  private static void schedule(DelayDriver driver, String id, String topic, Instant due) {
    driver.request(
        id,
        "payload of " + id,
        header(DelayHeaders.TARGET_TOPIC, topic),
        header(DelayHeaders.FIRE_AT, Long.toString(due.toEpochMilli())));
  }

  private static List<String> ids(String prefix, int from, int to) {
    List<String> ids = new ArrayList<>();
    for (int i = from; i < to; i++) {
      ids.add(prefix + i);
    }
    return ids;
  }

  /** A fired record, as its consumer sees it. */
  private record Fire(String id, long dueMs, long firedMs, String idempotencyKey, long occurrence) {

    long lateMs() {
      return firedMs - dueMs;
    }
  }

  private static List<Fire> fires(DelayDriver driver, String topic) {
    return driver.output(topic).readRecordsToList().stream()
        .map(
            record -> {
              String occurrence = headerText(record.headers(), DelayHeaders.OCCURRENCE);
              return new Fire(
                  headerText(record.headers(), DelayHeaders.ID),
                  Long.parseLong(headerText(record.headers(), DelayHeaders.DUE_AT)),
                  Long.parseLong(headerText(record.headers(), DelayHeaders.FIRED_AT)),
                  headerText(record.headers(), DelayHeaders.IDEMPOTENCY_KEY),
                  occurrence == null ? 1 : Long.parseLong(occurrence));
            })
        .toList();
  }

  private static String applicationId(DelayDriver driver) {
    return driver.config.applicationId();
  }

  private static String slotsChangelog(DelayDriver driver) {
    return applicationId(driver) + "-" + FireSlots.STORE + "-changelog";
  }

  /** Restores the clocks' store from its changelog, as Kafka Streams does before processing. */
  private static void restoreClocks(DelayDriver driver, List<TestRecord<byte[], byte[]>> records) {
    KeyValueStore<String, Long> store = driver.driver.getKeyValueStore(FireSlots.STORE);
    try (StringDeserializer keys = new StringDeserializer();
        LongDeserializer values = new LongDeserializer()) {
      for (TestRecord<byte[], byte[]> record : records) {
        store.put(keys.deserialize("", record.key()), values.deserialize("", record.value()));
      }
    }
  }
}

package dev.kdelay.topology;

import static dev.kdelay.topology.DelayDriver.START;
import static dev.kdelay.topology.DelayDriver.TARGET;
import static dev.kdelay.topology.DelayDriver.bytes;
import static dev.kdelay.topology.DelayDriver.header;
import static dev.kdelay.topology.DelayDriver.headerText;
import static dev.kdelay.topology.DelayDriver.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.TenantIds;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Schedules moved from one deployment to another ({@link ScheduleMove}): the entries of the old
 * deployment's store, taken in by a new one as imports, fire there as they would have in the old,
 * and requests sent to the new deployment order against them by timestamp.
 */
class ScheduleMoveTest {

  private static final String EVERY_10_SECONDS = "*/10 * * * * ?";
  private static final Header TO_TARGET = header(DelayHeaders.TARGET_TOPIC, TARGET);
  private static final Map<String, Object> TAKES_FROM_OLD =
      Map.of(DelayConfig.IMPORT_FROM_CONFIG, "old");

  @TempDir Path oldDir;
  @TempDir Path newDir;

  @Test
  void shouldFireMovedSchedulesInTheNewDeploymentAsTheOldWouldHave() {
    // given: the old deployment's state at 12:00:25: a one-shot due at 12:01, a cron schedule that
    // fired three times, one paused after three fires, a cancelled one-shot, and a one-shot that
    // fired
    Map<String, byte[]> moved;
    try (DelayDriver old =
        new DelayDriver(oldDir, Map.of(DelayConfig.APPLICATION_ID_CONFIG, "old"))) {
      old.scheduleAt("once", START.plusSeconds(60), "once-payload", header("carried", "yes"));
      old.request("every", "tick", TO_TARGET, header(DelayHeaders.CRON, EVERY_10_SECONDS));
      old.request("paused", "tock", TO_TARGET, header(DelayHeaders.CRON, EVERY_10_SECONDS));
      old.scheduleAt("gone", START.plusSeconds(100), "never");
      old.scheduleAt("done", START.plusSeconds(5), "fired-in-old");
      old.advanceTo(START.plusSeconds(21));
      old.request("paused", null, action("pause"));
      old.request("gone", null, action("cancel"));
      old.advanceTo(START.plusSeconds(25));
      assertThat(old.fired())
          .extracting(ScheduleMoveTest::idempotencyKey)
          .containsExactlyInAnyOrder(
              "done@" + at(5),
              "every@" + at(0),
              "every@" + at(10),
              "every@" + at(20),
              "paused@" + at(0),
              "paused@" + at(10),
              "paused@" + at(20));
      moved = entries(old);
    }
    assertThat(moved).containsOnlyKeys("once", "every", "paused", "gone", "done");

    try (DelayDriver next = new DelayDriver(newDir, TAKES_FROM_OLD)) {
      // when: the new deployment takes them in at 12:00:26
      next.advanceTo(START.plusSeconds(26));
      moved.forEach((id, entry) -> next.request(bytes(id), entry, next.now(), from("old")));
      next.advanceTo(START.plusSeconds(61));

      // then: what was due meanwhile fired once, with the keys and payloads it had in the old
      List<TestRecord<byte[], byte[]>> fired = next.fired();
      assertThat(fired)
          .extracting(ScheduleMoveTest::idempotencyKey)
          .containsExactlyInAnyOrder(
              "every@" + at(30),
              "every@" + at(40),
              "every@" + at(50),
              "every@" + at(60),
              "once@" + at(60));
      TestRecord<byte[], byte[]> once =
          fired.stream().filter(r -> "once".equals(text(r.key()))).findFirst().orElseThrow();
      assertThat(text(once.value())).isEqualTo("once-payload");
      assertThat(headerText(once.headers(), "carried")).isEqualTo("yes");
      TestRecord<byte[], byte[]> firstHere =
          fired.stream().filter(r -> "every".equals(text(r.key()))).findFirst().orElseThrow();
      assertThat(headerText(firstHere.headers(), DelayHeaders.OCCURRENCE)).isEqualTo("4");
      assertThat(next.deadLetters()).isEmpty();

      // when: the paused one is resumed, and a schedule stamped before the cancel arrives late
      next.request("paused", null, action("resume"));
      next.request(
          bytes("gone"),
          bytes("late"),
          START.plusSeconds(20),
          TO_TARGET,
          header(DelayHeaders.AFTER, "PT1S"));
      next.advanceTo(START.plusSeconds(71));

      // then: it goes on after its third occurrence; the cancel still holds
      assertThat(next.fired())
          .extracting(ScheduleMoveTest::idempotencyKey)
          .containsExactlyInAnyOrder("every@" + at(70), "paused@" + at(70));
      assertThat(next.deadLetters())
          .extracting(ScheduleMoveTest::error)
          .containsExactly("SUPERSEDED");
    }
  }

  @Test
  void shouldLetACancelSentToTheNewDeploymentWinWhetherItArrivesBeforeOrAfterTheMove() {
    Map<String, byte[]> moved = oldOneShots("early", "late");
    try (DelayDriver next = new DelayDriver(newDir, TAKES_FROM_OLD)) {
      next.advanceTo(START.plusSeconds(2));
      // the cancel of "early" arrives before its entry, the one of "late" after
      next.request("early", null, action("cancel"));
      moved.forEach((id, entry) -> next.request(bytes(id), entry, next.now(), from("old")));
      next.request("late", null, action("cancel"));
      next.advanceTo(START.plusSeconds(40));

      assertThat(next.fired()).isEmpty();
      // the moved entry of "early", older than its cancel, is superseded, never dropped silently
      assertThat(next.deadLetters())
          .extracting(ScheduleMoveTest::error)
          .containsExactly("SUPERSEDED");
    }
  }

  @Test
  void shouldTakeInTheSameEntryOnceWhenItIsMovedTwice() {
    Map<String, byte[]> moved = oldOneShots("twice");
    try (DelayDriver next = new DelayDriver(newDir, TAKES_FROM_OLD)) {
      next.advanceTo(START.plusSeconds(2));
      moved.forEach((id, entry) -> next.request(bytes(id), entry, next.now(), from("old")));
      moved.forEach((id, entry) -> next.request(bytes(id), entry, next.now(), from("old")));
      next.advanceTo(START.plusSeconds(40));
      // and once more after it fired: its fired marker orders it out
      moved.forEach((id, entry) -> next.request(bytes(id), entry, next.now(), from("old")));
      next.advanceTo(START.plusSeconds(41));

      assertThat(next.fired()).extracting(ScheduleMoveTest::idempotencyKey).hasSize(1);
      assertThat(next.deadLetters())
          .extracting(ScheduleMoveTest::error)
          .containsExactly("SUPERSEDED");
    }
  }

  @Test
  void shouldRefuseMovedSchedulesFromAnApplicationItDoesNotTakeFrom() {
    Map<String, byte[]> moved = oldOneShots("a", "b");
    try (DelayDriver closed = new DelayDriver(newDir, Map.of())) {
      closed.request(bytes("a"), moved.get("a"), closed.now(), from("old"));
      closed.request(bytes("b"), moved.get("b"), closed.now(), from("someone-else"));
      closed.advanceTo(START.plusSeconds(40));

      assertThat(closed.fired()).isEmpty();
      List<TestRecord<byte[], byte[]>> deadLetters = closed.deadLetters();
      assertThat(deadLetters)
          .extracting(ScheduleMoveTest::error)
          .containsExactly("IMPORT_REFUSED", "IMPORT_REFUSED");
      // the dead letter keeps the import as it came, so that a replay can take it in later
      assertThat(deadLetters.get(0).value()).isEqualTo(moved.get("a"));
      assertThat(headerText(deadLetters.get(0).headers(), DelayHeaders.IMPORT)).isEqualTo("old");
      assertThat(StoredSchedules.entries(closed.driver)).isZero();
    }
  }

  @Test
  void shouldCheckAMovedScheduleAgainstTheNewDeploymentsTargetPolicy() {
    Map<String, byte[]> moved = oldOneShots("elsewhere");
    Map<String, Object> settings = new LinkedHashMap<>(TAKES_FROM_OLD);
    settings.put(DelayConfig.TARGET_TOPIC_ALLOW_CONFIG, "^orders\\..*");
    try (DelayDriver next = new DelayDriver(newDir, settings)) {
      moved.forEach((id, entry) -> next.request(bytes(id), entry, next.now(), from("old")));
      next.request(bytes("broken"), new byte[] {3, 0}, next.now(), from("old"));
      next.advanceTo(START.plusSeconds(40));

      assertThat(next.fired()).isEmpty();
      assertThat(next.deadLetters())
          .extracting(ScheduleMoveTest::error)
          .containsExactly("TARGET_NOT_ALLOWED", "UNREADABLE_TASK");
    }
  }

  @Test
  void shouldMoveEachTenantsSchedulesAsItsOwnAndRefuseATenantTheNewDeploymentLacks() {
    // given: two tenants' schedules of the same id in the old deployment
    Map<String, byte[]> moved;
    try (DelayDriver old =
        new DelayDriver(
            oldDir,
            Map.of(
                DelayConfig.APPLICATION_ID_CONFIG,
                "old",
                DelayConfig.TENANTS_CONFIG,
                "teama,teamb"))) {
      for (String tenant : List.of("teama", "teamb")) {
        old.requestAs(
            tenant,
            "x",
            tenant + "'s",
            header(DelayHeaders.TARGET_TOPIC, tenant + ".out"),
            header(DelayHeaders.FIRE_AT, Long.toString(at(30))));
      }
      old.advance(Duration.ofMillis(10));
      moved = entries(old);
    }
    assertThat(moved)
        .containsOnlyKeys(TenantIds.qualified("teama", "x"), TenantIds.qualified("teamb", "x"));
    Map<String, Object> onlyTeama = new LinkedHashMap<>(TAKES_FROM_OLD);
    onlyTeama.put(DelayConfig.TENANTS_CONFIG, "teama");

    // when: a deployment with teama alone takes them in (kdelay move writes them to its shared
    // request topic, keyed as they were kept)
    try (DelayDriver next = new DelayDriver(newDir, onlyTeama)) {
      moved.forEach((id, entry) -> next.request(bytes(id), entry, next.now(), from("old")));
      next.advanceTo(START.plusSeconds(31));

      // then: teama's fires as teama's, with the id as teama sent it
      List<TestRecord<byte[], byte[]>> fired = next.output("teama.out").readRecordsToList();
      assertThat(fired).hasSize(1);
      assertThat(text(fired.get(0).key())).isEqualTo("x");
      assertThat(text(fired.get(0).value())).isEqualTo("teama's");
      assertThat(headerText(fired.get(0).headers(), DelayHeaders.TENANT)).isEqualTo("teama");
      assertThat(idempotencyKey(fired.get(0))).isEqualTo("x@" + at(30));
      // and teamb's, of a tenant the new deployment does not have, is a dead letter, not lost
      assertThat(next.output("teamb.out").readRecordsToList()).isEmpty();
      List<TestRecord<byte[], byte[]>> dead = next.deadLetters();
      assertThat(dead).extracting(ScheduleMoveTest::error).containsExactly("BAD_ID");
      assertThat(dead.get(0).value()).isEqualTo(moved.get(TenantIds.qualified("teamb", "x")));
    }
  }

  /** One-shots due at 12:00:30 in an old deployment, and its store's entries. */
  private Map<String, byte[]> oldOneShots(String... ids) {
    try (DelayDriver old =
        new DelayDriver(oldDir, Map.of(DelayConfig.APPLICATION_ID_CONFIG, "old"))) {
      for (String id : ids) {
        old.scheduleAt(id, START.plusSeconds(30), "payload of " + id);
      }
      old.advance(Duration.ofMillis(10));
      return entries(old);
    }
  }

  /** What a driver's store holds, id by id: what its changelog holds, which a move reads. */
  private static Map<String, byte[]> entries(DelayDriver driver) {
    Map<String, byte[]> entries = new LinkedHashMap<>();
    StoredSchedules.of(driver.driver)
        .bytes()
        .scanEntries(
            null,
            Integer.MAX_VALUE,
            (id, entry) -> entries.put(new String(id, StandardCharsets.UTF_8), entry));
    return entries;
  }

  private static Header from(String application) {
    return header(DelayHeaders.IMPORT, application);
  }

  private static Header action(String action) {
    return header(DelayHeaders.ACTION, action);
  }

  private static long at(int seconds) {
    return START.plusSeconds(seconds).toEpochMilli();
  }

  private static String idempotencyKey(TestRecord<byte[], byte[]> record) {
    return headerText(record.headers(), DelayHeaders.IDEMPOTENCY_KEY);
  }

  private static String error(TestRecord<byte[], byte[]> record) {
    return headerText(record.headers(), DelayHeaders.ERROR);
  }
}

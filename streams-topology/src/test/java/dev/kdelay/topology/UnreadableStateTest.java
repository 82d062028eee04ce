package dev.kdelay.topology;

import static dev.kdelay.topology.DelayDriver.TARGET;
import static dev.kdelay.topology.DelayDriver.header;
import static dev.kdelay.topology.DelayDriver.headerText;
import static dev.kdelay.topology.DelayDriver.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.topology.internals.store.MeteredScheduleStore;
import dev.kdelay.topology.internals.store.ScheduleEntry;
import dev.kdelay.topology.internals.store.ScheduleEntry.State;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Requests that meet damaged state (an entry or a stored task that cannot be read) are
 * dead-lettered as UNREADABLE_TASK when they need what is damaged; a schedule or a cancel, which
 * replace the whole entry, clear it. The stream thread keeps running and the other schedules keep
 * firing.
 */
class UnreadableStateTest {

  private static final byte[] GARBAGE = {(byte) 0x7f, 1, 2, 3};
  private static final Header TO_TARGET = header(DelayHeaders.TARGET_TOPIC, TARGET);
  private static final Header EVERY_10_SECONDS = header(DelayHeaders.CRON, "*/10 * * * * ?");

  @TempDir Path stateDir;
  private DelayDriver delay;
  private MeteredScheduleStore store;

  @BeforeEach
  void start() {
    delay = new DelayDriver(stateDir);
    store = StoredSchedules.of(delay.driver);
  }

  @AfterEach
  void stop() {
    delay.close();
  }

  @Test
  void shouldDeadLetterAPauseWhoseStoredTaskIsUnreadable() {
    // given: a running cron schedule whose task is corrupted in the store
    delay.request("cron", "v", TO_TARGET, EVERY_10_SECONDS);
    ScheduleEntry entry = store.lookup("cron").orElseThrow().entry().value();
    byte[] damaged =
        new ScheduleEntry(entry.state(), entry.timeMs(), entry.requestMs(), GARBAGE).toBytes();
    StoredSchedules.damage(delay.driver, "cron", damaged);

    // when
    delay.request("cron", null, action("pause"));

    // then: the pause is a dead letter; the corrupted bytes stay for the fire path to report
    assertOnlyDeadLetter("cron", RejectionReason.UNREADABLE_TASK);
    assertThat(store.lookup("cron").orElseThrow().raw()).isEqualTo(damaged);
    assertThatOtherSchedulesStillFire();
  }

  @Test
  void shouldDeadLetterAResumeWhosePausedTaskIsUnreadableAndLetACancelClearIt() {
    // given: a paused cron schedule whose task is corrupted in the store
    delay.request("cron", "v", TO_TARGET, EVERY_10_SECONDS);
    delay.request("cron", null, action("pause"));
    ScheduleEntry paused = store.lookup("cron").orElseThrow().entry().value();
    StoredSchedules.damage(
        delay.driver,
        "cron",
        new ScheduleEntry(State.PAUSED, paused.timeMs(), paused.requestMs(), GARBAGE).toBytes());

    // when
    delay.request("cron", null, action("resume"));

    // then
    assertOnlyDeadLetter("cron", RejectionReason.UNREADABLE_TASK);

    // and: a cancel needs no decoding and replaces it with its marker
    delay.request("cron", null);
    assertThat(delay.deadLetters()).isEmpty();
    assertThat(store.lookup("cron").orElseThrow().entry().value().state())
        .isEqualTo(State.CANCELLED);
    assertThatOtherSchedulesStillFire();
  }

  @Test
  void shouldRefuseAPauseForAnIdWhoseEntryIsUnreadableAndLetAReplacementClearIt() {
    // given: an id whose entry is corrupted beyond its header
    Instant due = delay.now().plusSeconds(2);
    delay.scheduleAt("damaged", due, "first");
    StoredSchedules.damage(delay.driver, "damaged", GARBAGE);

    // when: a pause, which needs the entry
    delay.request("damaged", null, action("pause"));

    // then: refused
    assertOnlyDeadLetter("damaged", RejectionReason.UNREADABLE_TASK);
    assertThat(store.view("damaged")).isInstanceOf(Decoded.Unreadable.class);

    // when: a replacement, which needs nothing of it
    delay.scheduleAt("damaged", due.plusSeconds(1), "replacement");
    delay.advanceTo(due.plusSeconds(2));

    // then: the replacement fires once; what the damaged entry held never does
    assertThat(delay.fired()).extracting(r -> text(r.value())).containsExactly("replacement");
    assertThat(delay.deadLetters()).isEmpty();
  }

  private void assertOnlyDeadLetter(String id, RejectionReason reason) {
    List<TestRecord<byte[], byte[]>> dead = delay.deadLetters();
    assertThat(dead).hasSize(1);
    assertThat(text(dead.get(0).key())).isEqualTo(id);
    assertThat(headerText(dead.get(0).headers(), DelayHeaders.ERROR)).isEqualTo(reason.name());
    assertThat(headerText(dead.get(0).headers(), DelayHeaders.ERROR_MESSAGE)).isNotBlank();
  }

  private void assertThatOtherSchedulesStillFire() {
    Instant due = delay.now().plusSeconds(1);
    delay.scheduleAt("healthy", due, "ok");
    delay.advanceTo(due.plusMillis(10));
    assertThat(delay.fired())
        .filteredOn(r -> "healthy".equals(headerText(r.headers(), DelayHeaders.ID)))
        .extracting(r -> text(r.value()))
        .containsExactly("ok");
  }

  private static Header action(String action) {
    return header(DelayHeaders.ACTION, action);
  }
}

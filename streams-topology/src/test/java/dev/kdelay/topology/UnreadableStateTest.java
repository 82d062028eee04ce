package dev.kdelay.topology;

import static dev.kdelay.topology.DelayDriver.TARGET;
import static dev.kdelay.topology.DelayDriver.header;
import static dev.kdelay.topology.DelayDriver.headerText;
import static dev.kdelay.topology.DelayDriver.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.topology.internals.Names;
import dev.kdelay.topology.internals.TaskKey;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Requests that meet damaged state (a schedules-store entry or a stored task that cannot be read)
 * are dead-lettered as UNREADABLE_TASK; the stream thread keeps running and the other schedules
 * keep firing.
 */
class UnreadableStateTest {

  private static final byte[] GARBAGE = {(byte) 0x7f, 1, 2, 3};
  private static final Header TO_TARGET = header(DelayHeaders.TARGET_TOPIC, TARGET);
  private static final Header EVERY_10_SECONDS = header(DelayHeaders.CRON, "*/10 * * * * ?");

  @TempDir Path stateDir;
  private DelayDriver delay;
  private KeyValueStore<Bytes, byte[]> tasks;
  private KeyValueStore<Bytes, byte[]> schedules;

  @BeforeEach
  void start() {
    delay = new DelayDriver(stateDir);
    tasks = delay.driver.getKeyValueStore(Names.TASKS_STORE);
    schedules = delay.driver.getKeyValueStore(Names.SCHEDULES_STORE);
  }

  @AfterEach
  void stop() {
    delay.close();
  }

  @Test
  void shouldDeadLetterAPauseWhoseStoredTaskIsUnreadable() {
    // given: a running cron schedule whose next occurrence is corrupted in the store
    delay.request("cron", "v", TO_TARGET, EVERY_10_SECONDS);
    TaskKey next = onlyFireEntry("cron");
    tasks.put(next.toBytes(), GARBAGE);

    // when
    delay.request("cron", null, action("pause"));

    // then: the pause is a dead letter; the corrupted bytes stay for the fire path to report
    assertOnlyDeadLetter("cron", RejectionReason.UNREADABLE_TASK);
    assertThat(tasks.get(next.toBytes())).isEqualTo(GARBAGE);
    assertThatOtherSchedulesStillFire();
  }

  @Test
  void shouldDeadLetterAResumeWhosePausedTaskIsUnreadableAndLetACancelClearIt() {
    // given: a paused cron schedule whose paused task is corrupted in the store
    delay.request("cron", "v", TO_TARGET, EVERY_10_SECONDS);
    delay.request("cron", null, action("pause"));
    tasks.put(TaskKey.paused("cron").toBytes(), GARBAGE);

    // when
    delay.request("cron", null, action("resume"));

    // then
    assertOnlyDeadLetter("cron", RejectionReason.UNREADABLE_TASK);

    // and: a cancel needs no decoding and removes it
    delay.request("cron", null);
    assertThat(delay.deadLetters()).isEmpty();
    assertThat(tasks.get(TaskKey.paused("cron").toBytes())).isNull();
    assertThatOtherSchedulesStillFire();
  }

  @Test
  void shouldForgetAPausedScheduleWhosePausedTaskIsMissing() {
    // given: the schedules store says paused, the task store holds nothing for it
    delay.request("cron", "v", TO_TARGET, EVERY_10_SECONDS);
    delay.request("cron", null, action("pause"));
    tasks.delete(TaskKey.paused("cron").toBytes());

    // when
    delay.request("cron", null, action("resume"));

    // then: refused, and the id is forgotten rather than stuck in a state that holds nothing
    assertOnlyDeadLetter("cron", RejectionReason.NOT_APPLICABLE);
    assertThat(schedules.get(idBytes("cron"))).isNull();
    assertThatOtherSchedulesStillFire();
  }

  @Test
  void shouldRefuseRequestsForAnIdWhoseEntryIsUnreadableUntilItsTaskFires() {
    // given: a one-shot whose schedules-store entry is corrupted
    Instant due = delay.now().plusSeconds(2);
    delay.scheduleAt("damaged", due, "first");
    schedules.put(
        idBytes("damaged"), new byte[] {1, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});

    // when: a replacement arrives, which cannot find the old task to replace it
    delay.scheduleAt("damaged", due.plusSeconds(10), "replacement");

    // then: refused, so that the id never has two tasks
    assertOnlyDeadLetter("damaged", RejectionReason.UNREADABLE_TASK);

    // when: the pending task comes due
    delay.advanceTo(due.plusMillis(10));

    // then: it fires once, and its entry is rewritten from it, so the id takes requests again
    assertThat(delay.fired()).extracting(r -> text(r.value())).containsExactly("first");
    Instant later = delay.now().plusSeconds(1);
    delay.scheduleAt("damaged", later, "again");
    delay.advanceTo(later.plusMillis(10));
    assertThat(delay.fired()).extracting(r -> text(r.value())).containsExactly("again");
    assertThat(delay.deadLetters()).isEmpty();
  }

  private TaskKey onlyFireEntry(String id) {
    List<TaskKey> keys = new java.util.ArrayList<>();
    try (var all = tasks.all()) {
      all.forEachRemaining(
          entry -> {
            TaskKey key = TaskKey.fromBytes(entry.key);
            if (key.id().equals(id) && key.kind() == TaskKey.KIND_FIRE) {
              keys.add(key);
            }
          });
    }
    assertThat(keys).hasSize(1);
    return keys.get(0);
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

  private static Bytes idBytes(String id) {
    return Bytes.wrap(id.getBytes(StandardCharsets.UTF_8));
  }
}

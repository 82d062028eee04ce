package dev.kdelay.topology;

import static dev.kdelay.topology.DelayDriver.headerText;
import static dev.kdelay.topology.DelayDriver.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.topology.internals.store.ScheduleEntry;
import dev.kdelay.topology.internals.store.ScheduleEntry.State;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A stored task that cannot be decoded is dead-lettered when due; the others still fire. */
class UnreadableTaskTest {

  private static final byte[] GARBAGE = {(byte) 0x7f, 1, 2, 3};

  @TempDir Path stateDir;

  @Test
  void shouldDeadLetterTheStoredBytesOfAnUnreadableTaskAndKeepFiring() {
    try (DelayDriver delay = new DelayDriver(stateDir)) {
      // given: two tasks due at the same time, one of them corrupted in the store
      Instant due = delay.now().plusSeconds(1);
      delay.scheduleAt("broken", due, "lost?");
      delay.scheduleAt("fine", due, "ok");
      StoredSchedules.damage(
          delay.driver,
          "broken",
          new ScheduleEntry(State.SCHEDULED, due.toEpochMilli(), 0, GARBAGE).toBytes());

      // when
      delay.advanceTo(due.plusMillis(10));

      // then: the corrupted one is a dead letter with its stored bytes; the other one fired
      List<TestRecord<byte[], byte[]>> dead = delay.deadLetters();
      assertThat(dead).hasSize(1);
      TestRecord<byte[], byte[]> letter = dead.get(0);
      assertThat(text(letter.key())).isEqualTo("broken");
      assertThat(letter.value()).isEqualTo(GARBAGE);
      // stamped when written, not with its due time, which the dead-letter topic may refuse
      assertThat(letter.timestamp()).isBetween(due.toEpochMilli(), due.toEpochMilli() + 10);
      assertThat(headerText(letter.headers(), DelayHeaders.DUE_AT))
          .isEqualTo(Long.toString(due.toEpochMilli()));
      assertThat(headerText(letter.headers(), DelayHeaders.ERROR))
          .isEqualTo(RejectionReason.UNREADABLE_TASK.name());
      assertThat(headerText(letter.headers(), DelayHeaders.ID)).isEqualTo("broken");
      assertThat(headerText(letter.headers(), DelayHeaders.ERROR_MESSAGE)).isNotBlank();
      assertThat(delay.fired()).extracting(r -> text(r.value())).containsExactly("ok");

      // and: the broken task is gone from the store, so it is not dead-lettered again
      assertThat(StoredSchedules.of(delay.driver).lookup("broken")).isEmpty();
      delay.advance(Duration.ofSeconds(5));
      assertThat(delay.deadLetters()).isEmpty();

      // and: its id is free for a new schedule
      Instant later = delay.now().plusSeconds(1);
      delay.scheduleAt("broken", later, "again");
      delay.advanceTo(later.plusMillis(10));
      assertThat(delay.fired()).extracting(r -> text(r.value())).containsExactly("again");
    }
  }
}

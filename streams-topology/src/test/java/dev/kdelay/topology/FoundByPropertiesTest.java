package dev.kdelay.topology;

import static dev.kdelay.topology.DelayDriver.TARGET;
import static dev.kdelay.topology.DelayDriver.bytes;
import static dev.kdelay.topology.DelayDriver.header;
import static dev.kdelay.topology.DelayDriver.headerText;
import static dev.kdelay.topology.DelayDriver.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.schemas.generators.GeneratedRequest;
import dev.kdelay.schemas.generators.RequestSpec;
import dev.kdelay.schemas.generators.TimeTexts;
import dev.kdelay.topology.ContractModel.Observed;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cases {@link TopologyPropertiesTest} found, shrunk, each kept as the test that failed before
 * its fix. The property that found it and its shrunk case are in each test's comment.
 */
class FoundByPropertiesTest {

  private static final long START = 1_772_366_400_000L; // 2026-03-01T12:00:00Z

  @TempDir Path stateDir;

  /**
   * "topology: sequences with crashes" and "topology: odd requests", shrunk to a bare tombstone for
   * id "a" stamped -1 (no timestamp, as clients that predate record timestamps write it): Kafka
   * Streams' default timestamp extractor failed the stream thread on it, for good.
   */
  @Test
  void shouldTakeARequestWithoutATimestampAsStampedWhenRead() {
    try (DelayDriver delay = DelayDriver.exactlyOnce(stateDir)) {
      // given
      delay.scheduleAt("a", delay.now().plusSeconds(1), "v");

      // when: its cancel, and a new schedule counting 500 ms from when it is read, both stamped -1
      delay.request(bytes("a"), null, Instant.ofEpochMilli(-1));
      delay.request(
          bytes("b"),
          bytes("w"),
          Instant.ofEpochMilli(-1),
          header(DelayHeaders.TARGET_TOPIC, TARGET),
          header(DelayHeaders.AFTER, "500"));
      delay.advanceTo(delay.now().plusSeconds(2));

      // then: the cancel applied (nothing of "a" fires) and "b" fired 500 ms after it was read
      List<TestRecord<byte[], byte[]>> fired = delay.fired();
      assertThat(fired).extracting(r -> text(r.key())).containsExactly("b");
      assertThat(fired.get(0).timestamp()).isEqualTo(START + 500);
      assertThat(delay.deadLetters()).isEmpty();
    }
  }

  /**
   * "topology: sequences with crashes", shrunk to: schedule "a", damage its stored entry's header,
   * advance. An entry whose header cannot be read had no place in the due index, so it never came
   * due and was never dead-lettered: stored, and silently left behind.
   */
  @Test
  void shouldDeadLetterAnEntryWhoseHeaderCannotBeRead() {
    try (DelayDriver delay = DelayDriver.exactlyOnce(stateDir)) {
      // given
      delay.scheduleAt("a", delay.now().plusSeconds(60), "v");
      byte[] damaged = {9, 9, 9};
      StoredSchedules.damage(delay.driver, "a", damaged);

      // when
      delay.advance(Duration.ofMillis(10));

      // then: at the next punctuation, its bytes go to the dead-letter topic, stamped when written
      List<TestRecord<byte[], byte[]>> dead = delay.deadLetters();
      assertThat(dead).hasSize(1);
      assertThat(text(dead.get(0).key())).isEqualTo("a");
      assertThat(dead.get(0).value()).isEqualTo(damaged);
      assertThat(dead.get(0).timestamp()).isEqualTo(START + 10);
      assertThat(headerText(dead.get(0).headers(), DelayHeaders.ERROR))
          .isEqualTo(RejectionReason.UNREADABLE_TASK.name());
      assertThat(headerText(dead.get(0).headers(), DelayHeaders.DUE_AT)).isNull();
      assertThat(StoredSchedules.of(delay.driver).lookup("a")).isEmpty();
    }
  }

  /**
   * "topology: sequences with crashes", shrunk to: cancel "a", advance 2,000 ms (the cancel
   * retention), crash. The restore brought the expired marker back until the next punctuation swept
   * it, and until then it still superseded requests stamped before it.
   */
  @Test
  void shouldLetAnExpiredMarkerOrderNothingAfterARestore() {
    try (TopologyHarness harness =
        new TopologyHarness(stateDir, START, StreamsConfig.EXACTLY_ONCE_V2, Map.of())) {
      // given: a cancel, remembered for 2 s, and the partition restored right after that
      long cancelledAt = harness.now();
      send(harness, cancel("a", 0));
      harness.advance(2_000);
      harness.crash();

      // when: a schedule stamped at the time of the cancel, before any punctuation
      Observed observed = send(harness, schedule("a", cancelledAt - harness.now()));

      // then: it applies
      assertThat(observed.deadLetters()).isEmpty();
      assertThat(harness.store().view("a").value().status()).isEqualTo(ScheduleView.Status.PENDING);
    }
  }

  /**
   * "topology: sequences with crashes" (a random seed, case 1,618 of 20,000), shrunk to: a cron
   * schedule "b", pause, its stored task damaged, pause. The second pause was applied, re-stamping
   * the unreadable entry, where the README says a pause of a schedule whose task cannot be read is
   * dead-lettered UNREADABLE_TASK.
   */
  @Test
  void shouldDeadLetterAPauseOfAPausedScheduleWhoseTaskCannotBeRead() {
    try (DelayDriver delay = DelayDriver.exactlyOnce(stateDir)) {
      // given
      delay.request(
          "b",
          "v",
          header(DelayHeaders.TARGET_TOPIC, TARGET),
          header(DelayHeaders.CRON, "*/1 * * * * ?"));
      delay.request("b", null, header(DelayHeaders.ACTION, "pause"));
      StoredSchedules.damageTask(delay.driver, "b");

      // when
      delay.request("b", null, header(DelayHeaders.ACTION, "pause"));

      // then
      assertThat(delay.deadLetters())
          .extracting(r -> headerText(r.headers(), DelayHeaders.ERROR))
          .containsExactly(RejectionReason.UNREADABLE_TASK.name());
    }
  }

  /**
   * "topology: sequences with crashes" (a random seed, case 30,560 of 50,000), shrunk to: a cron
   * schedule "a" of the spring flavour (replacing a one-shot), its stored task damaged. kdelay was
   * right: it dead-lettered the schedule UNREADABLE_TASK when it came due. The model was wrong: it
   * did not compute the occurrences of such a schedule, and took it for one that fires. Kept as
   * what kdelay must do.
   */
  @Test
  void shouldDeadLetterAScheduleOfAnyCronFlavourWhoseTaskCannotBeReadWhenItComesDue() {
    try (DelayDriver delay = DelayDriver.exactlyOnce(stateDir)) {
      // given
      delay.request(
          "a",
          "w",
          header(DelayHeaders.TARGET_TOPIC, TARGET),
          header(DelayHeaders.CRON, "*/1 * * * * ?"),
          header(DelayHeaders.CRON_TYPE, "spring"));
      StoredSchedules.damageTask(delay.driver, "a");

      // when
      delay.advance(Duration.ofSeconds(2));

      // then
      assertThat(delay.fired()).isEmpty();
      assertThat(delay.deadLetters())
          .extracting(r -> headerText(r.headers(), DelayHeaders.ERROR))
          .containsExactly(RejectionReason.UNREADABLE_TASK.name());
    }
  }

  /**
   * "topology: sequences with crashes" (seed -4361006743106503925, case 10,705 of 20,000), shrunk
   * to: a spring cron schedule "b" every 10 s whose end bound is now, on one of its occurrences;
   * 6,577 ms later, a reschedule of "b". kdelay was right: the end bound is the last instant the
   * schedule may fire at, so it fired that one occurrence and ended, and the reschedule found no
   * schedule. The model was wrong: it kept a cron it does not compute alive after kdelay ended it.
   * Kept as what kdelay must do.
   */
  @Test
  void shouldFireACronWhoseEndBoundIsOneOfItsOccurrencesThereAndEndIt() {
    try (DelayDriver delay = DelayDriver.exactlyOnce(stateDir)) {
      // given: START is on a 10 s boundary
      delay.request(
          "b",
          "v",
          header(DelayHeaders.TARGET_TOPIC, TARGET),
          header(DelayHeaders.CRON, "*/10 * * * * ?"),
          header(DelayHeaders.CRON_TYPE, "spring"),
          header(DelayHeaders.END_AT, Long.toString(START)));
      delay.advance(Duration.ofMillis(6_577));

      // when
      delay.request(
          "b",
          null,
          header(DelayHeaders.ACTION, "reschedule"),
          header(DelayHeaders.FIRE_AT, Long.toString(delay.now().toEpochMilli())));

      // then: its one occurrence in bounds fired, and nothing was left to move
      assertThat(delay.fired())
          .extracting(r -> headerText(r.headers(), DelayHeaders.DUE_AT))
          .containsExactly(Long.toString(START));
      assertThat(delay.deadLetters())
          .extracting(r -> headerText(r.headers(), DelayHeaders.ERROR))
          .containsExactly(RejectionReason.NOT_APPLICABLE.name());
      assertThat(StoredSchedules.of(delay.driver).lookup("b")).isEmpty();
    }
  }

  private static Observed send(TopologyHarness harness, RequestSpec spec) {
    GeneratedRequest request = spec.render(harness.now(), harness.limits());
    return harness.send(request);
  }

  private static RequestSpec cancel(String id, long stampOffset) {
    return new RequestSpec(
        id.getBytes(StandardCharsets.UTF_8),
        null,
        null,
        null,
        null,
        null,
        new RequestSpec.Time.None(),
        RequestSpec.CronOptions.NONE,
        List.of(),
        null,
        stampOffset);
  }

  private static RequestSpec schedule(String id, long stampOffset) {
    return new RequestSpec(
        id.getBytes(StandardCharsets.UTF_8),
        null,
        bytes("v"),
        "target",
        null,
        null,
        new RequestSpec.Time.FireAt(
            new TimeTexts.Moment(true, 60_000, TimeTexts.Style.EPOCH_MS, 0, null, null)),
        RequestSpec.CronOptions.NONE,
        List.of(),
        null,
        stampOffset);
  }
}

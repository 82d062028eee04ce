package dev.kdelay.topology;

import static dev.kdelay.topology.DelayDriver.START;
import static dev.kdelay.topology.DelayDriver.TARGET;
import static dev.kdelay.topology.DelayDriver.bytes;
import static dev.kdelay.topology.DelayDriver.header;
import static dev.kdelay.topology.DelayDriver.headerText;
import static dev.kdelay.topology.DelayDriver.text;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.topology.internals.store.ScheduleChangelog;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class DelayTopologyTest {

  @TempDir Path stateDir;
  private DelayDriver delay;

  @BeforeEach
  void start() {
    delay = new DelayDriver(stateDir);
  }

  @AfterEach
  void stop() {
    delay.close();
  }

  @Test
  void shouldFireAtDueTimeAndNeverBefore() {
    // given
    Instant due = START.plusSeconds(10);
    delay.scheduleAt("order-1", due, "payload-1");

    // when
    delay.advanceTo(due.minusMillis(1));

    // then
    assertThat(delay.fired()).isEmpty();

    delay.advanceTo(due);
    List<TestRecord<byte[], byte[]>> fired = delay.fired();
    assertThat(fired).hasSize(1);
    TestRecord<byte[], byte[]> record = fired.get(0);
    assertThat(text(record.key())).isEqualTo("order-1");
    assertThat(text(record.value())).isEqualTo("payload-1");
    assertThat(record.timestamp()).isEqualTo(due.toEpochMilli());
    assertThat(headerText(record.headers(), DelayHeaders.ID)).isEqualTo("order-1");
    assertThat(headerText(record.headers(), DelayHeaders.IDEMPOTENCY_KEY))
        .isEqualTo("order-1@" + due.toEpochMilli());
    assertThat(headerText(record.headers(), DelayHeaders.DUE_AT))
        .isEqualTo(Long.toString(due.toEpochMilli()));
    assertThat(Long.parseLong(headerText(record.headers(), DelayHeaders.FIRED_AT)))
        .isEqualTo(due.toEpochMilli());
    assertThat(record.headers().lastHeader(DelayHeaders.OCCURRENCE)).isNull();
  }

  @Test
  void shouldFireOnceWhenTimeGoesOn() {
    delay.scheduleAt("once", START.plusSeconds(1), "x");
    delay.advanceTo(START.plusSeconds(2));
    delay.advance(Duration.ofMinutes(10));
    assertThat(delay.fired()).hasSize(1);
  }

  @Test
  void shouldFireInDueOrderAcrossBuckets() {
    // given: due times spread over several one-minute buckets, scheduled out of order
    long[] offsetsSeconds = {300, 5, 125, 61, 59, 240, 60, 1};
    for (long offset : offsetsSeconds) {
      delay.scheduleAt("task-" + offset, START.plusSeconds(offset), "v" + offset);
    }

    // when: one punctuation sees everything due
    delay.advance(Duration.ofMinutes(6));

    // then
    List<String> order = delay.fired().stream().map(r -> text(r.key())).toList();
    assertThat(order)
        .containsExactly(
            "task-1",
            "task-5",
            "task-59",
            "task-60",
            "task-61",
            "task-125",
            "task-240",
            "task-300");
  }

  @Test
  void shouldFireNothingDueLaterThanNow() {
    delay.scheduleAt("early", START.plusSeconds(1), "a");
    delay.scheduleAt("late", START.plusSeconds(30), "b");
    delay.advanceTo(START.plusSeconds(29));
    assertThat(delay.fired()).extracting(r -> text(r.key())).containsExactly("early");
  }

  @Test
  void shouldReplaceWhenTheSameIdIsScheduledAgain() {
    delay.scheduleAt("job", START.plusSeconds(10), "first");
    delay.advance(Duration.ofMillis(1));
    delay.scheduleAt("job", START.plusSeconds(20), "second");

    delay.advanceTo(START.plusSeconds(15));
    assertThat(delay.fired()).isEmpty();

    delay.advanceTo(START.plusSeconds(20));
    List<TestRecord<byte[], byte[]>> fired = delay.fired();
    assertThat(fired).extracting(r -> text(r.value())).containsExactly("second");
  }

  @Test
  void shouldNotDuplicateWhenTheSameRequestIsSentTwice() {
    delay.scheduleAt("retry", START.plusSeconds(5), "v");
    delay.scheduleAt("retry", START.plusSeconds(5), "v");
    delay.advanceTo(START.plusSeconds(6));
    assertThat(delay.fired()).hasSize(1);
  }

  @Test
  void shouldCancelWhenATombstoneArrives() {
    delay.scheduleAt("order-7", START.plusSeconds(10), "timeout");
    delay.advance(Duration.ofMillis(1));
    delay.request("order-7", null);

    delay.advanceTo(START.plusSeconds(11));
    assertThat(delay.fired()).isEmpty();
    assertThat(delay.deadLetters()).isEmpty();
  }

  @Test
  void shouldCancelWhenTheCancelActionArrives() {
    delay.scheduleAt("order-8", START.plusSeconds(10), "timeout");
    delay.advance(Duration.ofMillis(1));
    delay.request("order-8", "ignored", header(DelayHeaders.ACTION, "cancel"));

    delay.advanceTo(START.plusSeconds(11));
    assertThat(delay.fired()).isEmpty();
  }

  @Test
  void shouldScheduleAgainAfterACancel() {
    delay.scheduleAt("again", START.plusSeconds(10), "old");
    delay.advance(Duration.ofMillis(1));
    delay.request("again", null);
    delay.advance(Duration.ofMillis(1));
    delay.scheduleAt("again", START.plusSeconds(12), "new");

    delay.advanceTo(START.plusSeconds(12));
    assertThat(delay.fired()).extracting(r -> text(r.value())).containsExactly("new");
  }

  @Test
  void shouldFireAtOnceWhenTheDueTimeHasPassed() {
    Instant due = START.minus(Duration.ofHours(1));
    delay.scheduleAt("late", due, "x");

    delay.advance(delay.config.punctuateInterval());

    List<TestRecord<byte[], byte[]>> fired = delay.fired();
    assertThat(fired).hasSize(1);
    assertThat(fired.get(0).timestamp()).isEqualTo(due.toEpochMilli());
    assertThat(Long.parseLong(headerText(fired.get(0).headers(), DelayHeaders.FIRED_AT)))
        .isGreaterThan(due.toEpochMilli());
  }

  @ParameterizedTest(name = "exactly once: {0}")
  @ValueSource(booleans = {false, true})
  void shouldLetACancelRightBehindAPastDueScheduleWin(boolean exactlyOnce) {
    runAs(exactlyOnce);

    // when: a schedule and its cancel, sent in the same millisecond, both taken in after the
    // task's due time (delivered late, after an outage)
    delay.scheduleAt("late", START.minusSeconds(1), "x");
    delay.request("late", null, header(DelayHeaders.ACTION, "cancel"));
    delay.advance(Duration.ofSeconds(1));

    // then: the cancel wins, as it would have on time
    assertThat(delay.fired()).isEmpty();
    assertThat(delay.deadLetters()).isEmpty();
  }

  @ParameterizedTest(name = "exactly once: {0}")
  @ValueSource(booleans = {false, true})
  void shouldFireOnlyTheReplacementWhenBothArriveAfterTheirDueTimes(boolean exactlyOnce) {
    runAs(exactlyOnce);

    // when: a schedule and its replacement with an earlier due time, sent in the same
    // millisecond, both taken in after both due times
    delay.scheduleAt("moved", START.minusMillis(500), "old");
    delay.scheduleAt("moved", START.minusSeconds(1), "new");
    delay.advance(Duration.ofSeconds(1));

    // then
    assertThat(delay.fired()).extracting(r -> text(r.value())).containsExactly("new");
    assertThat(delay.deadLetters()).isEmpty();
  }

  /** Replaces the at-least-once driver of the setup by an exactly-once one, if asked. */
  private void runAs(boolean exactlyOnce) {
    if (exactlyOnce) {
      delay.close();
      delay = DelayDriver.exactlyOnce(stateDir);
    }
  }

  @Test
  void shouldCountDelayAfterFromTheRequestTimestamp() {
    Instant requestTime = START.minusSeconds(2);
    delay.request(
        bytes("rel"),
        bytes("v"),
        requestTime,
        header(DelayHeaders.TARGET_TOPIC, TARGET),
        header(DelayHeaders.AFTER, "PT5S"));

    delay.advanceTo(START.plusSeconds(3).minusMillis(1));
    assertThat(delay.fired()).isEmpty();
    delay.advanceTo(START.plusSeconds(3));
    assertThat(delay.fired())
        .extracting(TestRecord::timestamp)
        .containsExactly(START.plusSeconds(3).toEpochMilli());
  }

  @Test
  void shouldCarryHeadersInOrderAndDropSpoofedOutputHeaders() {
    delay.scheduleAt(
        "traced",
        START.plusSeconds(1),
        "v",
        header("traceparent", "00-abc-def-01"),
        header(DelayHeaders.ID, "spoofed"),
        header("x-attempt", "1"),
        header("x-attempt", "2"));

    delay.advanceTo(START.plusSeconds(1));

    Header[] headers = delay.fired().get(0).headers().toArray();
    assertThat(headers)
        .extracting(Header::key)
        .containsExactly(
            "traceparent",
            "x-attempt",
            "x-attempt",
            DelayHeaders.ID,
            DelayHeaders.IDEMPOTENCY_KEY,
            DelayHeaders.DUE_AT,
            DelayHeaders.FIRED_AT);
    assertThat(text(headers[0].value())).isEqualTo("00-abc-def-01");
    assertThat(text(headers[1].value())).isEqualTo("1");
    assertThat(text(headers[2].value())).isEqualTo("2");
    assertThat(text(headers[3].value())).isEqualTo("traced");
  }

  @Test
  void shouldUseTheTargetKeyWhenGiven() {
    delay.scheduleAt(
        "keyed", START.plusSeconds(1), "v", header(DelayHeaders.TARGET_KEY, "customer-9"));
    delay.advanceTo(START.plusSeconds(1));
    assertThat(delay.fired()).extracting(r -> text(r.key())).containsExactly("customer-9");
  }

  @Test
  void shouldFireATombstoneWhenAScheduleHasANullValue() {
    delay.scheduleAt(
        "delete-later", START.plusSeconds(1), null, header(DelayHeaders.ACTION, "schedule"));
    delay.advanceTo(START.plusSeconds(1));
    List<TestRecord<byte[], byte[]>> fired = delay.fired();
    assertThat(fired).hasSize(1);
    assertThat(fired.get(0).value()).isNull();
  }

  @Test
  void shouldDeadLetterEveryRejectionAndGoOn() {
    // given: one bad request per reason the topology decides, then a good one
    Header target = header(DelayHeaders.TARGET_TOPIC, TARGET);
    Header soon = header(DelayHeaders.AFTER, "1000");
    delay.request("no-target", "v", soon);
    delay.request("bad-time", "v", target, header(DelayHeaders.FIRE_AT, "tomorrow"));
    delay.request("two-times", "v", target, soon, header(DelayHeaders.FIRE_AT, "0"));
    delay.request("bad-action", "v", target, soon, header(DelayHeaders.ACTION, "postpone"));
    delay.request("internal", "v", header(DelayHeaders.TARGET_TOPIC, "__consumer_offsets"), soon);
    delay.request("own-topic", "v", header(DelayHeaders.TARGET_TOPIC, "delay-dlq"), soon);
    delay.request("pause-one-shot", null, header(DelayHeaders.ACTION, "pause"));
    delay.request(null, bytes("v"), delay.now(), target, soon);
    delay.scheduleAt("good", START.plusSeconds(1), "fine");

    // when
    delay.advanceTo(START.plusSeconds(2));

    // then
    List<TestRecord<byte[], byte[]>> dead = delay.deadLetters();
    assertThat(dead)
        .extracting(r -> headerText(r.headers(), DelayHeaders.ERROR))
        .containsExactly(
            "MISSING_TARGET",
            "BAD_TIME",
            "CONFLICTING_TIMES",
            "UNKNOWN_ACTION",
            "TARGET_NOT_ALLOWED",
            "TARGET_NOT_ALLOWED",
            "NOT_APPLICABLE",
            "BAD_ID");
    assertThat(dead)
        .allSatisfy(
            r -> assertThat(headerText(r.headers(), DelayHeaders.ERROR_MESSAGE)).isNotBlank());
    TestRecord<byte[], byte[]> badTime = dead.get(1);
    assertThat(text(badTime.key())).isEqualTo("bad-time");
    assertThat(text(badTime.value())).isEqualTo("v");
    assertThat(headerText(badTime.headers(), DelayHeaders.FIRE_AT)).isEqualTo("tomorrow");
    assertThat(headerText(badTime.headers(), DelayHeaders.ERROR_MESSAGE)).contains("tomorrow");
    assertThat(delay.fired()).extracting(r -> text(r.key())).containsExactly("good");
  }

  @Test
  void shouldRefuseTargetsOutsideTheAllowlist() {
    delay.close();
    delay =
        new DelayDriver(
            stateDir.resolve("allow"),
            Map.of(DelayConfig.TARGET_TOPIC_ALLOW_CONFIG, "target|orders\\..*"));
    delay.request(
        "refused",
        "v",
        header(DelayHeaders.TARGET_TOPIC, "payments"),
        header(DelayHeaders.AFTER, "0"));
    delay.scheduleAt("allowed", START, "v");
    delay.advance(Duration.ofMillis(10));

    assertThat(delay.deadLetters())
        .extracting(r -> headerText(r.headers(), DelayHeaders.ERROR_MESSAGE))
        .singleElement()
        .asString()
        .contains("payments", "target|orders");
    assertThat(delay.fired()).hasSize(1);
  }

  @Test
  void shouldRerouteARequestThatArrivedOnAnotherPartition() {
    delay.close();
    delay =
        new DelayDriver(
            stateDir.resolve("reroute"), Map.of(DelayConfig.REQUESTS_PARTITIONS_CONFIG, 4));
    String id = idOwnedByAnotherPartitionThan(0, 4);

    // when: the driver delivers on partition 0, which does not own the id
    delay.scheduleAt(id, START.plusSeconds(1), "v");

    // then: it moves to the reroute topic (which the driver feeds back in, as Kafka would) and is
    // applied once when it comes back from there
    assertThat(delay.reroutes()).extracting(r -> text(r.key())).containsExactly(id);
    delay.advanceTo(START.plusSeconds(2));
    assertThat(delay.fired()).extracting(r -> text(r.key())).containsExactly(id);
    assertThat(delay.reroutes()).isEmpty();
  }

  @Test
  void shouldApplyARequestCarryingAFenceHeaderWhenItComesBackFromTheRerouteTopic() {
    // given: a request that happens to carry kdelay's fence header, on a partition that does not
    // own its id
    delay.close();
    delay =
        new DelayDriver(
            stateDir.resolve("reroute-fence"), Map.of(DelayConfig.REQUESTS_PARTITIONS_CONFIG, 4));
    String id = idOwnedByAnotherPartitionThan(0, 4);

    // when
    delay.request(
        bytes(id),
        bytes("v"),
        START,
        header(DelayHeaders.TARGET_TOPIC, DelayDriver.TARGET),
        header(DelayHeaders.FIRE_AT, Long.toString(START.plusSeconds(1).toEpochMilli())),
        header("kdelay-fence", "0"));

    // then: its copy goes without the header, so it is not taken for a fence when it comes back
    assertThat(delay.reroutes())
        .allSatisfy(r -> assertThat(r.headers().lastHeader("kdelay-fence")).isNull());
    delay.advanceTo(START.plusSeconds(2));
    assertThat(delay.fired()).extracting(r -> text(r.key())).containsExactly(id);
  }

  @Test
  void shouldNotReviveACancelledScheduleWhenTheScheduleArrivesLate() {
    // given: a schedule sent first through another partitioner, its cancel sent second directly
    Instant scheduledAt = START;
    Instant cancelledAt = START.plusMillis(3);
    TestRecord<byte[], byte[]> lateSchedule =
        new TestRecord<>(
            bytes("meet"),
            bytes("v"),
            new org.apache.kafka.common.header.internals.RecordHeaders(
                new Header[] {
                  header(DelayHeaders.TARGET_TOPIC, TARGET), header(DelayHeaders.AFTER, "PT5S")
                }),
            scheduledAt);
    delay.request(bytes("meet"), null, cancelledAt);

    // when: the schedule arrives after the cancel
    delay.advance(Duration.ofMillis(10));
    delay.rerouted(lateSchedule);
    delay.advanceTo(START.plusSeconds(10));

    // then
    assertThat(delay.fired()).isEmpty();
    assertThat(delay.deadLetters())
        .extracting(r -> headerText(r.headers(), DelayHeaders.ERROR))
        .containsExactly("SUPERSEDED");
  }

  @Test
  void shouldKeepNothingOfACancelMarkerAfterItsRetention() {
    delay.request("forgotten", null);
    assertThat(StoredSchedules.entries(delay.driver)).isEqualTo(1);
    delay.advance(Duration.ofMillis(delay.config.cancelRetentionMs() + 10));
    assertThat(StoredSchedules.entries(delay.driver)).isZero();
    assertThat(delay.fired()).isEmpty();
  }

  @Test
  void shouldForgetAFiredScheduleAfterItsRetentionSoTheStoresStayBounded() {
    // given: fired tasks remembered for 10 s
    delay.close();
    delay = new DelayDriver(stateDir, Map.of(DelayConfig.FIRED_RETENTION_CONFIG, 10_000L));
    for (int i = 0; i < 100; i++) {
      delay.scheduleAt("bounded-" + i, START.plusSeconds(1 + i), "v");
    }

    // when: all fired (due 1 s to 100 s after the start), the last one 6 s ago
    delay.advanceTo(START.plusSeconds(106));

    // then: those fired less than 10 s ago (due at 97 s to 100 s) are remembered, the others not
    assertThat(delay.fired()).hasSize(100);
    assertThat(StoredSchedules.entries(delay.driver)).isEqualTo(4);

    // and when every retention passed, nothing is left
    delay.advanceTo(START.plusSeconds(120));
    assertThat(StoredSchedules.entries(delay.driver)).isZero();
  }

  @Test
  void shouldForgetAFiredScheduleAtOnceWhenTheFiredRetentionIsZero() {
    delay.close();
    delay = new DelayDriver(stateDir, Map.of(DelayConfig.FIRED_RETENTION_CONFIG, 0L));
    delay.scheduleAt("once", START.plusSeconds(1), "v");
    delay.advanceTo(START.plusSeconds(2));
    assertThat(delay.fired()).hasSize(1);
    assertThat(StoredSchedules.entries(delay.driver)).isZero();
  }

  @Test
  void shouldSupersedeAnOlderScheduleThatArrivesAfterItsIdFired() {
    // given: a task that fired
    delay.scheduleAt("late", START.plusSeconds(1), "first");
    delay.advanceTo(START.plusSeconds(2));
    assertThat(delay.fired()).hasSize(1);

    // when: an older schedule for the id arrives late (it took the reroute topic's detour)
    delay.request(
        bytes("late"),
        bytes("stale"),
        START.minusSeconds(1),
        header(DelayHeaders.TARGET_TOPIC, DelayDriver.TARGET),
        header(DelayHeaders.AFTER, "0"));
    // and a newer one re-uses the id
    delay.scheduleAt("late", START.plusSeconds(3), "second");
    delay.advanceTo(START.plusSeconds(4));

    // then: the stale one is dead-lettered, the newer one fires
    assertThat(delay.deadLetters())
        .extracting(r -> headerText(r.headers(), DelayHeaders.ERROR))
        .containsExactly("SUPERSEDED");
    assertThat(delay.fired()).extracting(r -> text(r.value())).containsExactly("second");
  }

  @Test
  void shouldNotFireAgainWhenTheRequestThatFiredArrivesAgainWithItsTimestamp() {
    // given: a request that fired, as a dead letter's replay sends it: stamped in the past
    Instant stamped = START.minusSeconds(60);
    delay.request(
        bytes("replayed"),
        bytes("once"),
        stamped,
        header(DelayHeaders.TARGET_TOPIC, DelayDriver.TARGET),
        header(DelayHeaders.FIRE_AT, Long.toString(START.toEpochMilli())));
    delay.advanceTo(START.plusSeconds(1));
    assertThat(delay.fired()).hasSize(1);

    // when: the same request again, with the same timestamp (the replay sent twice)
    delay.request(
        bytes("replayed"),
        bytes("once"),
        stamped,
        header(DelayHeaders.TARGET_TOPIC, DelayDriver.TARGET),
        header(DelayHeaders.FIRE_AT, Long.toString(START.toEpochMilli())));
    delay.advanceTo(START.plusSeconds(2));

    // then: the same request, after it fired: dead-lettered, not fired again
    assertThat(delay.deadLetters())
        .extracting(r -> headerText(r.headers(), DelayHeaders.ERROR))
        .containsExactly("SUPERSEDED");
    assertThat(delay.fired()).isEmpty();
    assertThat(StoredSchedules.of(delay.driver).view("replayed").value().status())
        .isEqualTo(ScheduleView.Status.FIRED);
  }

  @Test
  void shouldFireOnceWithoutADeadLetterWhenTheSameRequestArrivesTwiceBeforeItFires() {
    // given: a producer's retry: the same request twice, the same timestamp
    for (int copy = 0; copy < 2; copy++) {
      delay.request(
          bytes("retried"),
          bytes("once"),
          START,
          header(DelayHeaders.TARGET_TOPIC, DelayDriver.TARGET),
          header(DelayHeaders.AFTER, "1000"));
    }

    // when
    delay.advanceTo(START.plusSeconds(2));

    // then: the copy applied as nothing
    assertThat(delay.deadLetters()).isEmpty();
    assertThat(delay.fired()).hasSize(1);
  }

  @Test
  void shouldDeadLetterACancelStampedLikeTheScheduleThatFiredJustBeforeItAsSuperseded() {
    // given: a schedule due already and its cancel, sent one behind the other in the same
    // millisecond; Kafka Streams may run a punctuation between them, and here it does
    delay.request(
        bytes("late"),
        bytes("v"),
        START,
        header(DelayHeaders.TARGET_TOPIC, DelayDriver.TARGET),
        header(DelayHeaders.FIRE_AT, Long.toString(START.minusSeconds(1).toEpochMilli())));
    delay.advance(Duration.ofMillis(5));
    assertThat(delay.fired()).hasSize(1);

    // when
    delay.request(bytes("late"), null, START);

    // then: the cancel lost the tie to the fire, and says so; the status says what happened
    assertThat(delay.deadLetters())
        .extracting(r -> headerText(r.headers(), DelayHeaders.ERROR))
        .containsExactly("SUPERSEDED");
    assertThat(StoredSchedules.of(delay.driver).view("late").value().status())
        .isEqualTo(ScheduleView.Status.FIRED);
  }

  @Test
  void shouldWriteEntriesAnEarlierVersionReadsWhileARollingUpgradeAsksForFormatTwo() {
    // given
    delay.close();
    delay = new DelayDriver(stateDir, Map.of(DelayConfig.STORE_FORMAT_CONFIG, 2));
    String changelog =
        delay.config.applicationId() + "-" + DelayTopology.SCHEDULES_STORE + "-changelog";

    // when
    delay.scheduleAt("upgrading", START.plusSeconds(1), "v");
    delay.advanceTo(START.plusSeconds(2));

    // then: the entry in format 2, and the task fired as ever
    List<TestRecord<byte[], byte[]>> changes = delay.output(changelog).readRecordsToList();
    assertThat(changes.get(0).value()[0]).isEqualTo((byte) 2);
    assertThat(delay.fired()).hasSize(1);
  }

  @Test
  void shouldProduceAtMostThreeRecordsPerOneShotTaskIncludingTheExpiryOfItsMarker() {
    // given: 100 one-shot tasks, remembered for 10 s after they fire
    delay.close();
    delay = new DelayDriver(stateDir, Map.of(DelayConfig.FIRED_RETENTION_CONFIG, 10_000L));
    String changelog =
        delay.config.applicationId() + "-" + DelayTopology.SCHEDULES_STORE + "-changelog";
    for (int i = 0; i < 100; i++) {
      delay.scheduleAt("task-" + i, START.plusSeconds(1 + i % 10), "v");
    }

    // when: all fire, and every marker expires and is swept
    delay.advanceTo(START.plusSeconds(30));

    // then: per task, the fired record, its entry and its fired marker; nothing for the expiry
    List<TestRecord<byte[], byte[]>> changes = delay.output(changelog).readRecordsToList();
    assertThat(delay.fired()).hasSize(100);
    assertThat(changes).hasSize(200);
    assertThat(StoredSchedules.entries(delay.driver)).isZero();

    // and: the fired marker is a tombstone (compaction drops it) that carries the marker
    List<TestRecord<byte[], byte[]>> tombstones =
        changes.stream().filter(record -> record.value() == null).toList();
    assertThat(tombstones).hasSize(100);
    assertThat(tombstones)
        .allSatisfy(
            record ->
                assertThat(record.headers().lastHeader(ScheduleChangelog.MARKER_HEADER))
                    .isNotNull());

    // and: each change says where the entry it replaced sat, so a restore need not read it: a new
    // id nowhere, a fire its task's place in the due index (kind, then the due time, sign flipped)
    assertThat(changes)
        .allSatisfy(
            record -> {
              byte[] replaced =
                  record.headers().lastHeader(ScheduleChangelog.REPLACES_HEADER).value();
              if (record.value() != null) {
                assertThat(replaced).isEmpty();
              } else {
                int task = Integer.parseInt(new String(record.key(), UTF_8).substring(5));
                long due = START.plusSeconds(1 + task % 10).toEpochMilli();
                assertThat(replaced)
                    .isEqualTo(
                        ByteBuffer.allocate(9).put((byte) 1).putLong(due ^ Long.MIN_VALUE).array());
              }
            });
  }

  private static String idOwnedByAnotherPartitionThan(int partition, int partitions) {
    for (int i = 0; ; i++) {
      String id = "id-" + i;
      if (Utils.toPositive(Utils.murmur2(bytes(id))) % partitions != partition) {
        return id;
      }
    }
  }
}

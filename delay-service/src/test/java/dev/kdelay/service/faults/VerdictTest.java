package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.service.faults.CommittedRecords.Received;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

/** The checker's reading of dead letters: which ones the contract explains. */
class VerdictTest {

  private static final long DUE = 1_000_000;

  @Test
  void aCancelReadAfterItsScheduleFiredIsExplainedBySupersededAndNothingElseIs() {
    // given: task-1 was scheduled and cancelled, and fired before the cancel was read
    Ledger ledger = new Ledger();
    ledger.forbid(key("task-1"), DUE);
    List<Received> fired = List.of(fire("task-1"));

    // then: its cancel's SUPERSEDED dead letter is what the contract says happens
    Verdict explained =
        Verdict.of(
            ledger, fired, noSamples(), List.of(new Verdict.DeadLetter("task-1", "SUPERSEDED")));
    assertThat(explained.clean()).as(explained.report()).isTrue();
    assertThat(explained.summary()).contains("1 of whose cancels were SUPERSEDED by the fire");

    // and: any other reason, or an id that did not fire first, is not
    Verdict otherReason =
        Verdict.of(
            ledger, fired, noSamples(), List.of(new Verdict.DeadLetter("task-1", "BAD_HEADER")));
    assertThat(otherReason.clean()).isFalse();
    assertThat(otherReason.report()).contains("dead-lettered (1): task-1: BAD_HEADER");
    Verdict otherId =
        Verdict.of(
            ledger, fired, noSamples(), List.of(new Verdict.DeadLetter("task-2", "SUPERSEDED")));
    assertThat(otherId.clean()).isFalse();
  }

  @Test
  void aReplacementSupersededByTheFireItCameTooLateForIsNotLostButOneWithoutADeadLetterIs() {
    // given: task-1 scheduled, then replaced by an occurrence due later; the first one fired
    // before the replacement was read
    Ledger ledger = new Ledger();
    ledger.forbid(key("task-1"), DUE);
    ledger.expect(
        new Ledger.Task(
            "task-1",
            "task-1@" + (DUE + 5_000),
            DUE + 5_000,
            "t",
            0,
            1,
            "payload",
            DUE - 9_000,
            DUE - 8_990));
    List<Received> fired = List.of(fire("task-1"));

    // then: the replacement dead-lettered SUPERSEDED was refused with a reason, not lost
    Verdict refused =
        Verdict.of(
            ledger, fired, noSamples(), List.of(new Verdict.DeadLetter("task-1", "SUPERSEDED")));
    assertThat(refused.clean()).as(refused.report()).isTrue();

    // and: without that dead letter it is lost
    Verdict lost = Verdict.of(ledger, fired, noSamples());
    assertThat(lost.clean()).isFalse();
    assertThat(lost.report()).contains("lost (1): task-1@" + (DUE + 5_000));
  }

  @Test
  void theFinalWaitDoesNotWaitForAReplacementWhoseReplacedOccurrenceFired() {
    // given: task-1's replacement (due later) and task-2 not visible; task-1's replaced one fired
    Ledger ledger = new Ledger();
    ledger.forbid(key("task-1"), DUE);
    Set<String> notVisible = Set.of("task-1@" + (DUE + 5_000), key("task-2"));

    // then: only task-2 is waited for; the replacement is Verdict's to judge (above)
    assertThat(ledger.awaited(notVisible, key("task-1")::equals)).containsExactly(key("task-2"));
    // and: while the replaced one has not fired either, both are
    assertThat(ledger.awaited(notVisible, visible -> false))
        .containsExactlyInAnyOrderElementsOf(notVisible);
  }

  private static String key(String id) {
    return DelayHeaders.idempotencyKey(id, DUE);
  }

  private static Received fire(String id) {
    RecordHeaders headers = new RecordHeaders();
    headers.add(DelayHeaders.IDEMPOTENCY_KEY, bytes(key(id)));
    headers.add(DelayHeaders.FIRED_AT, bytes(Long.toString(DUE + 10)));
    ConsumerRecord<byte[], byte[]> record =
        new ConsumerRecord<>(
            "t",
            0,
            0,
            DUE,
            TimestampType.CREATE_TIME,
            0,
            0,
            bytes(id),
            bytes("payload"),
            headers,
            java.util.Optional.empty());
    return new Received(record, DUE + 20);
  }

  /** Intake progress never sampled: no cancel is known to have been committed before a fire. */
  private static IntakeProgress noSamples() {
    return new IntakeProgress(null, "kdelay", "delay-requests");
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}

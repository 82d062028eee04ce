package dev.kdelay.topology;

import static dev.kdelay.topology.DelayDriver.TARGET;
import static dev.kdelay.topology.DelayDriver.header;
import static dev.kdelay.topology.DelayDriver.headerText;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.topology.ScheduleView.Status;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * At least once, the write that records a fire waits for the commit that flushes the fired record,
 * so that a record the producer never delivered leaves its task pending, to fire again. Exactly
 * once it is written at once: the transaction commits both together.
 *
 * <p>The test driver commits after every punctuation and every request, as a stream thread does
 * when asked to; the write is made at the first call on the task after that commit.
 */
class AtLeastOnceFiresTest {

  private static final Header TO_TARGET = header(DelayHeaders.TARGET_TOPIC, TARGET);
  private static final Instant NOON = Instant.parse("2026-06-01T12:00:00Z");

  @TempDir Path stateDir;
  private CronDriver delay;

  @AfterEach
  void stop() {
    if (delay != null) {
      delay.close();
    }
  }

  @Test
  void shouldKeepAFiredOneShotPendingUntilTheCommitThatFlushedItsRecord() {
    // when: the punctuation that fires a one-shot due in a second, and the commit after it
    fireOneShotDueInASecond(StreamsConfig.AT_LEAST_ONCE);

    // then: fired, and still pending in the store
    assertThat(delay.fired()).hasSize(1);
    assertThat(delay.view("order-1").status()).isEqualTo(Status.PENDING);

    // when: the next punctuation, after that commit
    delay.advance(Duration.ofMillis(5));

    // then: recorded as fired, and it fires no more
    assertThat(delay.view("order-1").status()).isEqualTo(Status.FIRED);
    delay.runUntil(NOON.plusSeconds(10), Duration.ofMillis(500));
    assertThat(delay.fired()).isEmpty();
  }

  @Test
  void shouldRecordAFireAtOnceExactlyOnce() {
    // when
    fireOneShotDueInASecond(StreamsConfig.EXACTLY_ONCE_V2);

    // then
    assertThat(delay.fired()).hasSize(1);
    assertThat(delay.view("order-1").status()).isEqualTo(Status.FIRED);
  }

  @Test
  void shouldLetARequestAfterTheFireSeeIt() {
    // given: fired, its write held
    fireOneShotDueInASecond(StreamsConfig.AT_LEAST_ONCE);
    assertThat(delay.fired()).hasSize(1);

    // when: a trigger arrives before the next punctuation
    delay.request("order-1", null, header(DelayHeaders.ACTION, "trigger"));
    delay.runUntil(NOON.plusSeconds(5), Duration.ofMillis(5));

    // then: refused as already fired, never fired twice
    assertThat(delay.fired()).isEmpty();
    assertThat(delay.deadLetters())
        .extracting(letter -> headerText(letter.headers(), DelayHeaders.ERROR))
        .containsExactly("NOT_APPLICABLE");
  }

  @Test
  void shouldFireEveryTaskOfABacklogOnceWhileHoldingEachBatch() {
    // given: more tasks due than one punctuation fires
    delay = new CronDriver(stateDir, NOON, StreamsConfig.AT_LEAST_ONCE);
    int tasks = 5_000;
    for (int i = 0; i < tasks; i++) {
      delay.request("t-" + i, "v", TO_TARGET, header(DelayHeaders.AFTER, "PT1S"));
    }

    // when
    delay.runUntil(NOON.plusSeconds(2), Duration.ofMillis(5));

    // then
    assertThat(delay.fired())
        .extracting(record -> headerText(record.headers(), DelayHeaders.IDEMPOTENCY_KEY))
        .hasSize(tasks)
        .doesNotHaveDuplicates();
    assertThat(delay.view("t-0").status()).isEqualTo(Status.FIRED);
    assertThat(delay.view("t-" + (tasks - 1)).status()).isEqualTo(Status.FIRED);
  }

  /**
   * Starts a driver, schedules {@code order-1} a second ahead, and runs the punctuation past it.
   */
  private void fireOneShotDueInASecond(String guarantee) {
    delay = new CronDriver(stateDir, NOON, guarantee);
    delay.request("order-1", "v", TO_TARGET, header(DelayHeaders.AFTER, "PT1S"));
    delay.advance(Duration.ofSeconds(2));
  }
}

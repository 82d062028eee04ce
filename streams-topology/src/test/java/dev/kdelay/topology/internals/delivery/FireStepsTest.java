package dev.kdelay.topology.internals.delivery;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.topology.DelayConfig;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

/** Small steps after a refusal, each waiting for its commit, doubling as commits succeed. */
class FireStepsTest {

  private final long[] now = {1_000_000};
  private final DeliveryQuarantine quarantine =
      new DeliveryQuarantine(new DelayConfig(Map.of()), () -> now[0]);

  @Test
  void shouldFireWholeBatchesWhenNothingWasRefused() {
    FireSteps steps = new FireSteps(quarantine, 2_000);

    assertThat(steps.allowed()).isEqualTo(2_000);
    assertThat(steps.fired(2_000)).isFalse();
    assertThat(steps.allowed()).isEqualTo(2_000);
  }

  @Test
  void shouldFireOneEntryPerCommitAfterARefusalAndDoubleAsCommitsSucceed() {
    // given: a task that starts just after the instance learned a refusal
    refuse("bad");
    FireSteps steps = new FireSteps(quarantine, 8);

    // then: one entry, its commit asked for, nothing more until that commit began and ended
    assertThat(steps.allowed()).isEqualTo(1);
    assertThat(steps.fired(1)).isTrue();
    assertThat(steps.allowed()).isZero();
    FireCommits.committed(); // the thread began the commit; being called again, it ended
    assertThat(steps.allowed()).isEqualTo(2);
    assertThat(steps.fired(2)).isTrue();
    FireCommits.committed();
    assertThat(steps.allowed()).isEqualTo(4);
    assertThat(steps.fired(4)).isTrue();
    FireCommits.committed();
    assertThat(steps.allowed()).isEqualTo(8);
    assertThat(steps.stepping()).isFalse();
    assertThat(steps.fired(8)).isFalse();
  }

  @Test
  void shouldStartOverWhenAnotherRefusalIsLearnedWhileItRuns() {
    FireSteps steps = new FireSteps(quarantine, 8);
    assertThat(steps.allowed()).isEqualTo(8);

    refuse("bad");

    assertThat(steps.allowed()).isEqualTo(1);
  }

  @Test
  void shouldFireWholeBatchesOnceTheRecoveryIsOver() {
    refuse("bad");
    now[0] += DeliveryQuarantine.RECOVERY_MS;

    assertThat(new FireSteps(quarantine, 8).allowed()).isEqualTo(8);
  }

  private void refuse(String id) {
    RecordHeaders headers = new RecordHeaders();
    headers.add(DelayHeaders.IDEMPOTENCY_KEY, (id + "@1").getBytes(StandardCharsets.UTF_8));
    quarantine.recordRefused(
        new ProducerRecord<>("t", null, 1L, new byte[0], new byte[0], headers),
        new InvalidRecordException("no"));
  }
}

package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.service.KafkaClusterExtension;
import dev.kdelay.service.KafkaTestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A producer whose clock runs 50 minutes fast cannot pin a schedule id, over a real broker: its
 * schedule counts as stamped when kdelay reads it, so a cancel from a correct clock sent after that
 * applies, and the task never fires. The healthy tasks due around it show that its due time has
 * passed, and that nothing else was disturbed.
 */
@Tag("integration")
@ExtendWith(KafkaClusterExtension.class)
class ClockSkewIT {

  @TempDir Path stateDir;

  @Test
  void shouldApplyANormalCancelAfterAFutureStampedSchedule(KafkaTestCluster kafka)
      throws Exception {
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.bootstrapServers()));
        IsolationScenario scenario =
            new IsolationScenario("skew", kafka.bootstrapServers(), admin, stateDir, Map.of())) {
      // given: a schedule stamped 50 minutes ahead (Kafka 4 brokers refuse records stamped more
      // than message.timestamp.after.max.ms, one hour by default, ahead of their own clock)
      long now = System.currentTimeMillis();
      long dueMs = now + 8_000;
      ProducerRecord<byte[], byte[]> stamped =
          scenario.request("pinned", scenario.topic("open"), dueMs, IsolationScenario.utf8("v"));
      ProducerRecord<byte[], byte[]> future =
          new ProducerRecord<>(
              stamped.topic(),
              null,
              now + Duration.ofMinutes(50).toMillis(),
              stamped.key(),
              stamped.value(),
              stamped.headers());
      scenario.sendAround(dueMs, List.of(future));
      scenario.awaitApplied();

      // when: a correct clock cancels it
      scenario.send(new ProducerRecord<>(stamped.topic(), stamped.key(), null));

      // then: the healthy tasks due after it fired exactly once, "pinned" did not fire (finish
      // checks the target holds the healthy tasks and nothing else), and nothing was refused
      assertThat(scenario.finish(0)).as("dead letters").isEmpty();
      assertThat(scenario.threadFailures()).isZero();
    }
  }
}

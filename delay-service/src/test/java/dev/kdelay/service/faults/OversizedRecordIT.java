package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.service.KafkaClusterExtension;
import dev.kdelay.service.KafkaTestCluster;
import dev.kdelay.service.faults.CommittedRecords.Received;
import dev.kdelay.topology.DelayConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Records too large for where they go, among 1,000 healthy tasks due around them, over a real
 * broker: a payload larger than its target topic takes, and a rejected request whose dead letter
 * would be larger than the dead-letter topic takes, are dead-lettered once and stop nothing; so are
 * the records of a target that shrank after intake, which the producer rescues when the broker
 * refuses them.
 */
@Tag("integration")
@ExtendWith(KafkaClusterExtension.class)
class OversizedRecordIT {

  @TempDir Path stateDir;

  private Admin admin;

  @BeforeEach
  void connect(KafkaTestCluster kafka) {
    admin = Admin.create(Map.of("bootstrap.servers", kafka.bootstrapServers()));
  }

  @AfterEach
  void disconnect() {
    admin.close();
  }

  @Test
  void shouldDeadLetterOversizedRecordsOnceAndFireTheOthersWithoutAThreadFailure(
      KafkaTestCluster kafka) throws Exception {
    try (IsolationScenario scenario = scenario(kafka, "oversized", Duration.ofSeconds(30))) {
      // given: a target that takes records of at most 1,000 bytes
      String small = scenario.topic("small");
      createTopic(small, Map.of("max.message.bytes", "1000"));
      long dueMs = System.currentTimeMillis() + 4_000;
      // a 2,000-byte payload for it
      ProducerRecord<byte[], byte[]> tooLarge =
          scenario.request("too-large", small, dueMs, bytes(2_000));
      // a request rejected for a 600 KB garbage delay-fire-at, with a payload that brings it near
      // 1 MiB: echoed whole, its dead letter would outgrow the dead-letter topic
      ProducerRecord<byte[], byte[]> garbage =
          scenario.request(
              "garbage", scenario.topic("open"), dueMs, bytes(1_048_576 - 600_000 - 400));
      garbage.headers().remove(DelayHeaders.FIRE_AT);
      garbage.headers().add(DelayHeaders.FIRE_AT, bytes(600_000));

      // when
      scenario.sendAround(dueMs, List.of(tooLarge, garbage));

      // then
      List<Received> dead = scenario.finish(2);
      assertThat(dead)
          .extracting(IsolationScenario::key)
          .containsExactlyInAnyOrder("too-large", "garbage");
      Received large = byKey(dead, "too-large");
      assertThat(large.header(DelayHeaders.ERROR)).isEqualTo("TOO_LARGE");
      assertThat(large.header(DelayHeaders.ERROR_MESSAGE)).contains("max.message.bytes");
      assertThat(large.record().value()).hasSize(2_000);
      Received echoed = byKey(dead, "garbage");
      assertThat(echoed.header(DelayHeaders.ERROR)).isEqualTo("BAD_TIME");
      assertThat(echoed.header(DelayHeaders.ERROR_MESSAGE)).hasSizeLessThan(500);
      assertThat(scenario.threadFailures()).as("stream thread failures").isZero();
    }
  }

  @Test
  void shouldDeadLetterOnceATaskWhoseTargetShrankAfterIntake(KafkaTestCluster kafka)
      throws Exception {
    // given: kdelay's metadata of the target is stale when the task fires (refreshed every 10 min)
    try (IsolationScenario scenario = scenario(kafka, "shrunk", Duration.ofMinutes(10))) {
      // then: the broker refused the first, and the producer put its dead letter in its place; the
      // second was dead-lettered without a try, since the topic had refused a smaller record
      shrinkTargetAfterIntake(scenario, true);
      assertThat(scenario.threadFailures()).as("stream thread failures").isZero();
    }
  }

  /**
   * At least once, a fired record and the write recording its fire are not one transaction: the
   * refused record must still leave its task to be fired again and dead-lettered, not marked fired
   * and lost.
   */
  @Test
  void shouldDeadLetterATaskWhoseTargetShrankAfterIntakeWhenRunAtLeastOnce(KafkaTestCluster kafka)
      throws Exception {
    try (IsolationScenario scenario =
        scenario(
            kafka,
            "shrunk-alo",
            Duration.ofMinutes(10),
            Map.of(DelayConfig.PROCESSING_GUARANTEE_CONFIG, "at_least_once"))) {
      // then: both dead-lettered, as exactly once, and no thread failed
      shrinkTargetAfterIntake(scenario, false);
      assertThat(scenario.threadFailures()).as("stream thread failures").isZero();
    }
  }

  /**
   * Schedules two tasks to a topic, shrinks its limit below them before they are due, and checks
   * that both are dead-lettered as undeliverable, with every healthy task fired: exactly once, or
   * at least once.
   */
  private void shrinkTargetAfterIntake(IsolationScenario scenario, boolean exactlyOnce)
      throws Exception {
    String shrinking = scenario.topic("shrinking");
    createTopic(shrinking, Map.of());
    scenario.awaitKnown(shrinking);
    long dueMs = System.currentTimeMillis() + 8_000;
    scenario.sendAround(
        dueMs,
        List.of(
            scenario.request("big", shrinking, dueMs, bytes(2_000)),
            scenario.request("bigger", shrinking, dueMs + 200, bytes(3_000))));
    scenario.awaitApplied();

    // when: the topic's limit drops below the record before it is due
    admin
        .incrementalAlterConfigs(
            Map.of(
                new ConfigResource(ConfigResource.Type.TOPIC, shrinking),
                List.of(
                    new AlterConfigOp(
                        new ConfigEntry("max.message.bytes", "1000"), AlterConfigOp.OpType.SET))))
        .all()
        .get();

    List<Received> dead = exactlyOnce ? scenario.finish(2) : scenario.finishAtLeastOnce(2);
    assertThat(dead).extracting(IsolationScenario::key).containsExactlyInAnyOrder("big", "bigger");
    assertThat(dead)
        .allSatisfy(
            letter -> {
              assertThat(letter.header(DelayHeaders.ERROR)).isEqualTo("UNDELIVERABLE");
              assertThat(letter.header(DelayHeaders.ERROR_MESSAGE)).contains("MESSAGE_TOO_LARGE");
            });
    assertThat(byKey(dead, "big").record().value()).hasSize(2_000);
  }

  private IsolationScenario scenario(KafkaTestCluster kafka, String name, Duration refresh)
      throws Exception {
    return scenario(kafka, name, refresh, Map.of());
  }

  private IsolationScenario scenario(
      KafkaTestCluster kafka, String name, Duration refresh, Map<String, Object> settings)
      throws Exception {
    Map<String, Object> overrides = new HashMap<>(settings);
    overrides.put(DelayConfig.TARGET_TOPICS_REFRESH_CONFIG, refresh.toMillis());
    // Every request waits for its topic's look-up: what kdelay knows of a topic is what it read.
    overrides.put(
        DelayConfig.TARGET_TOPICS_LOOKUP_TIMEOUT_CONFIG, Duration.ofSeconds(60).toMillis());
    return new IsolationScenario(name, kafka.bootstrapServers(), admin, stateDir, overrides);
  }

  private void createTopic(String topic, Map<String, String> configs) throws Exception {
    admin.createTopics(List.of(new NewTopic(topic, 3, (short) 1).configs(configs))).all().get();
  }

  private static Received byKey(Collection<Received> records, String key) {
    return records.stream()
        .filter(r -> key.equals(IsolationScenario.key(r)))
        .findFirst()
        .orElseThrow();
  }

  private static byte[] bytes(int length) {
    byte[] bytes = new byte[length];
    Arrays.fill(bytes, (byte) '7');
    return bytes;
  }
}

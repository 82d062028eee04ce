package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.service.KraftTestKitCluster;
import dev.kdelay.service.faults.CommittedRecords.Received;
import dev.kdelay.topology.DelayConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A target kdelay may not write to, on a broker with Kafka's ACL authorizer: refused at intake when
 * the ACL is there already, dead-lettered once when WRITE was revoked after intake (the broker's
 * refusal rescued by the producer). Either way the healthy tasks around it fire exactly once, and
 * no stream thread fails.
 *
 * <p>Every client here is {@code User:ANONYMOUS} (PLAINTEXT); the authorizer allows what no ACL
 * speaks of, and the test denies WRITE on one topic.
 */
@Tag("integration")
class RefusedTargetIT {

  private static KraftTestKitCluster kafka;
  private static Admin admin;

  @TempDir Path stateDir;

  @BeforeAll
  static void startBroker() throws Exception {
    kafka = KraftTestKitCluster.startWithAuthorizer();
    admin = Admin.create(Map.of("bootstrap.servers", kafka.bootstrapServers()));
  }

  @AfterAll
  static void stopBroker() throws Exception {
    if (admin != null) {
      admin.close();
    }
    if (kafka != null) {
      kafka.close();
    }
  }

  @Test
  void shouldRefuseAtIntakeATargetKdelayMayNotWriteToAndFireTheOthers() throws Exception {
    try (IsolationScenario scenario = scenario("acl-intake", Duration.ofSeconds(30))) {
      // given
      String closed = scenario.topic("closed");
      FaultScenario.createTopics(admin, Map.of(closed, 3));
      deny(closed);

      // when
      long dueMs = System.currentTimeMillis() + 3_000;
      scenario.sendAround(
          dueMs, List.of(scenario.request("bad", closed, dueMs, IsolationScenario.utf8("v"))));

      // then
      Received dead = single(scenario.finish(1));
      assertThat(IsolationScenario.key(dead)).isEqualTo("bad");
      assertThat(dead.header(DelayHeaders.ERROR)).isEqualTo("TARGET_NOT_ALLOWED");
      assertThat(dead.header(DelayHeaders.ERROR_MESSAGE)).contains("lacks WRITE");
      assertThat(scenario.threadFailures()).as("stream thread failures").isZero();
    }
  }

  @Test
  void shouldDeadLetterOnceATaskWhoseTargetRevokedWriteAfterIntake() throws Exception {
    // given: kdelay's metadata of the target is stale when the task fires (refreshed every 10 min)
    try (IsolationScenario scenario = scenario("acl-revoked", Duration.ofMinutes(10))) {
      String revoked = scenario.topic("revoked");
      FaultScenario.createTopics(admin, Map.of(revoked, 3));
      scenario.awaitKnown(revoked);
      long dueMs = System.currentTimeMillis() + 8_000;
      scenario.sendAround(
          dueMs, List.of(scenario.request("bad", revoked, dueMs, IsolationScenario.utf8("v"))));
      scenario.awaitApplied();

      // when: the cluster stops letting kdelay write there before the task is due
      deny(revoked);

      // then
      Received dead = single(scenario.finish(1));
      assertThat(IsolationScenario.key(dead)).isEqualTo("bad");
      assertThat(dead.header(DelayHeaders.ERROR)).isEqualTo("UNDELIVERABLE");
      assertThat(dead.header(DelayHeaders.ERROR_MESSAGE)).contains("TOPIC_AUTHORIZATION_FAILED");
      // The producer rescued the refused write: no transaction failed.
      assertThat(scenario.threadFailures()).as("stream thread failures").isZero();
    }
  }

  private IsolationScenario scenario(String name, Duration metadataRefresh) throws Exception {
    return new IsolationScenario(
        name,
        kafka.bootstrapServers(),
        admin,
        stateDir,
        Map.of(
            DelayConfig.TARGET_TOPICS_REFRESH_CONFIG,
            metadataRefresh.toMillis(),
            // Every request waits for its topic's look-up: what kdelay knows is what it read.
            DelayConfig.TARGET_TOPICS_LOOKUP_TIMEOUT_CONFIG,
            Duration.ofSeconds(60).toMillis()));
  }

  private static void deny(String topic) throws Exception {
    // Once an ACL names the topic, whatever no ACL allows is denied: allow reading and describing.
    ResourcePattern pattern = new ResourcePattern(ResourceType.TOPIC, topic, PatternType.LITERAL);
    admin
        .createAcls(
            List.of(
                new AclBinding(pattern, entry(AclOperation.DESCRIBE, AclPermissionType.ALLOW)),
                new AclBinding(pattern, entry(AclOperation.READ, AclPermissionType.ALLOW)),
                new AclBinding(pattern, entry(AclOperation.WRITE, AclPermissionType.DENY))))
        .all()
        .get();
    // The authorizer applies ACLs from the metadata log: wait until the broker says so.
    Await.until(
        "the ACL on " + topic + " to apply",
        Duration.ofSeconds(30),
        () -> {
          try {
            Set<AclOperation> ops =
                admin
                    .describeTopics(
                        List.of(topic),
                        new DescribeTopicsOptions().includeAuthorizedOperations(true))
                    .allTopicNames()
                    .get()
                    .get(topic)
                    .authorizedOperations();
            return ops != null && !ops.contains(AclOperation.WRITE);
          } catch (Exception e) {
            return false;
          }
        });
  }

  private static AccessControlEntry entry(AclOperation operation, AclPermissionType permission) {
    return new AccessControlEntry("User:ANONYMOUS", "*", operation, permission);
  }

  private static Received single(List<Received> records) {
    assertThat(records).hasSize(1);
    return records.get(0);
  }
}

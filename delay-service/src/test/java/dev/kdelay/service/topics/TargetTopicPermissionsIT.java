package dev.kdelay.service.topics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.topology.TargetTopic;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Write permission as {@link AdminTargetTopics} reads it, against a broker with Kafka's ACL
 * authorizer ({@code StandardAuthorizer}), a cluster of its own since the shared one has none.
 * Every client is {@code User:ANONYMOUS} (PLAINTEXT) and may do whatever no ACL denies, so the test
 * denies what it wants denied.
 */
@Tag("integration")
class TargetTopicPermissionsIT {

  private static final String PRINCIPAL = "User:ANONYMOUS";

  private static KafkaClusterTestKit cluster;

  @BeforeAll
  static void startClusterWithAuthorizer() throws Exception {
    TestKitNodes nodes =
        new TestKitNodes.Builder()
            .setCombined(true)
            .setNumBrokerNodes(1)
            .setNumControllerNodes(1)
            .build();
    cluster =
        new KafkaClusterTestKit.Builder(nodes)
            .setConfigProp("offsets.topic.replication.factor", "1")
            .setConfigProp("transaction.state.log.replication.factor", "1")
            .setConfigProp(
                "authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer")
            .setConfigProp("allow.everyone.if.no.acl.found", "true")
            .build();
    cluster.format();
    cluster.startup();
    cluster.waitForReadyBrokers();
  }

  @AfterAll
  static void stopCluster() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void shouldTellWhetherKdelayMayWriteWhenTheClusterHasAnAuthorizer() throws Exception {
    // given: kdelay may write to one topic, only read another, and not even see a third
    try (Admin admin = Admin.create(properties())) {
      admin
          .createTopics(List.of(topic("perm-open"), topic("perm-read-only"), topic("perm-hidden")))
          .all()
          .get(30, TimeUnit.SECONDS);
      admin
          .createAcls(
              List.of(
                  // An ACL on a topic ends allow.everyone.if.no.acl.found for it: allow the reads.
                  acl("perm-read-only", AclOperation.DESCRIBE, AclPermissionType.ALLOW),
                  acl("perm-read-only", AclOperation.DESCRIBE_CONFIGS, AclPermissionType.ALLOW),
                  acl("perm-read-only", AclOperation.WRITE, AclPermissionType.DENY),
                  acl("perm-hidden", AclOperation.DESCRIBE, AclPermissionType.DENY)))
          .all()
          .get(30, TimeUnit.SECONDS);
      awaitAclsApplied(admin);
    }

    // when
    try (Admin kdelay = Admin.create(properties());
        AdminTargetTopics topics =
            new AdminTargetTopics(
                new TopicLimitsReader(kdelay, Duration.ofSeconds(10))::read,
                new TargetTopicCache(100, Duration.ofSeconds(5), Clock.systemUTC()),
                Duration.ofSeconds(10),
                Duration.ofHours(1),
                TopicMetadataWarmer.NONE)) {
      // then
      assertThat(topics.lookUp("perm-open").writable()).isTrue();
      TargetTopic readOnly = topics.lookUp("perm-read-only");
      assertThat(readOnly.status()).isEqualTo(TargetTopic.Status.PRESENT);
      assertThat(readOnly.writable()).isFalse();
      assertThat(readOnly.maxMessageBytes()).isLessThan(Integer.MAX_VALUE);
      assertThat(topics.lookUp("perm-hidden")).isEqualTo(TopicLimitsReader.NOT_DESCRIBABLE);
    }
  }

  /**
   * The controller commits ACLs before the broker's authorizer has read them from the metadata log:
   * wait until the broker answers with them, or a lookup races the ACLs.
   */
  private static void awaitAclsApplied(Admin admin) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!(writeDenied(admin, "perm-read-only") && describeDenied(admin, "perm-hidden"))) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("the broker did not apply the ACLs within 30 s");
      }
      TimeUnit.MILLISECONDS.sleep(25);
    }
  }

  private static boolean writeDenied(Admin admin, String topic) throws Exception {
    Set<AclOperation> operations =
        admin
            .describeTopics(
                List.of(topic), new DescribeTopicsOptions().includeAuthorizedOperations(true))
            .allTopicNames()
            .get(10, TimeUnit.SECONDS)
            .get(topic)
            .authorizedOperations();
    return operations != null && !operations.contains(AclOperation.WRITE);
  }

  private static boolean describeDenied(Admin admin, String topic) throws Exception {
    try {
      admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS);
      return false;
    } catch (ExecutionException e) {
      if (e.getCause() instanceof TopicAuthorizationException) {
        return true;
      }
      throw e;
    }
  }

  private static NewTopic topic(String name) {
    return new NewTopic(name, Optional.of(1), Optional.empty());
  }

  private static AclBinding acl(
      String topic, AclOperation operation, AclPermissionType permission) {
    return new AclBinding(
        new ResourcePattern(ResourceType.TOPIC, topic, PatternType.LITERAL),
        new AccessControlEntry(PRINCIPAL, "*", operation, permission));
  }

  private static Map<String, Object> properties() {
    return Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
  }
}

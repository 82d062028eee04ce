package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.service.KraftTestKitCluster;
import dev.kdelay.service.faults.CommittedRecords.Received;
import dev.kdelay.topology.DelayConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
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
 * the ACL is there already, dead-lettered once when it was added after intake. Either way the
 * healthy tasks around it fire exactly once, and no stream thread loops.
 *
 * <p>Every client here is {@code User:ANONYMOUS} (PLAINTEXT); the authorizer allows what no ACL
 * speaks of, and the test denies WRITE on one topic.
 */
@Tag("integration")
class RefusedTargetIT {

  private static final int HEALTHY = 200;
  private static final Pattern THREAD_NUMBER = Pattern.compile("StreamThread-(\\d+)$");

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
    // given
    String name = "acl-intake";
    FaultScenario.createTopics(admin, Map.of(name + "-open", 3, name + "-closed", 3));
    deny(name + "-closed");
    try (InProcessService service = start(name, Duration.ofSeconds(30));
        CommittedRecords fired =
            new CommittedRecords(
                kafka.bootstrapServers(), List.of(name + "-open"), DelayHeaders.IDEMPOTENCY_KEY);
        CommittedRecords dead =
            new CommittedRecords(
                kafka.bootstrapServers(), List.of(name + "-dlq"), DelayHeaders.ERROR)) {
      // when
      long dueMs = System.currentTimeMillis() + 3_000;
      List<String> healthy = send(name, name + "-closed", dueMs);

      // then
      Await.until(
          "every healthy task to fire", Duration.ofSeconds(60), () -> fired.containsAll(healthy));
      List<Received> deadLetters = dead.finish(Duration.ofSeconds(30));
      List<Received> committed = fired.finish(Duration.ofSeconds(30));
      report(name, service, committed, deadLetters);
      assertThat(deadLetters).hasSize(1);
      assertThat(key(deadLetters.get(0))).isEqualTo("bad");
      assertThat(deadLetters.get(0).header(DelayHeaders.ERROR)).isEqualTo("TARGET_NOT_ALLOWED");
      assertThat(deadLetters.get(0).header(DelayHeaders.ERROR_MESSAGE)).contains("lacks WRITE");
      assertExactlyOnce(committed, healthy);
      assertThat(threadFailures(service)).as("stream thread failures").isZero();
    }
  }

  @Test
  void shouldDeadLetterOnceATaskWhoseTargetRevokedWriteAfterIntake() throws Exception {
    // given: kdelay's metadata of the target is stale when the task fires (refreshed every 10 min)
    String name = "acl-revoked";
    FaultScenario.createTopics(admin, Map.of(name + "-open", 3, name + "-revoked", 3));
    try (InProcessService service = start(name, Duration.ofMinutes(10));
        CommittedRecords fired =
            new CommittedRecords(
                kafka.bootstrapServers(), List.of(name + "-open"), DelayHeaders.IDEMPOTENCY_KEY);
        CommittedRecords dead =
            new CommittedRecords(
                kafka.bootstrapServers(), List.of(name + "-dlq"), DelayHeaders.ERROR)) {
      long dueMs = System.currentTimeMillis() + 8_000;
      List<String> healthy = send(name, name + "-revoked", dueMs);
      awaitApplied("faults-" + name, name + "-requests");

      // when: the cluster stops letting kdelay write there before the task is due
      deny(name + "-revoked");

      // then
      Await.until(
          "every healthy task to fire", Duration.ofSeconds(90), () -> fired.containsAll(healthy));
      Await.until("the dead letter", Duration.ofSeconds(90), () -> dead.size() >= 1);
      List<Received> deadLetters = dead.finish(Duration.ofSeconds(30));
      List<Received> committed = fired.finish(Duration.ofSeconds(30));
      report(name, service, committed, deadLetters);
      assertThat(deadLetters).hasSize(1);
      assertThat(key(deadLetters.get(0))).isEqualTo("bad");
      assertThat(deadLetters.get(0).header(DelayHeaders.ERROR)).isEqualTo("UNDELIVERABLE");
      assertThat(deadLetters.get(0).header(DelayHeaders.ERROR_MESSAGE))
          .contains("TOPIC_AUTHORIZATION_FAILED");
      assertExactlyOnce(committed, healthy);
      // The safety net, not a loop: the refused write failed one transaction, once.
      assertThat(threadFailures(service)).as("stream thread failures").isEqualTo(1);
    }
  }

  /** Sends the healthy tasks due around {@code dueMs}, and one task "bad" to the bad target. */
  private List<String> send(String name, String badTarget, long dueMs) {
    List<String> keys = new ArrayList<>();
    try (KafkaProducer<String, String> producer = TaskLoad.producer(kafka.bootstrapServers())) {
      for (int i = 0; i < HEALTHY; i++) {
        long due = dueMs - 500 + i * 5L;
        String id = "ok-" + i;
        producer.send(request(name + "-requests", id, name + "-open", due));
        keys.add(DelayHeaders.idempotencyKey(id, due));
        if (i == HEALTHY / 2) {
          producer.send(request(name + "-requests", "bad", badTarget, dueMs));
        }
      }
      producer.flush();
    }
    return keys;
  }

  private static ProducerRecord<String, String> request(
      String topic, String id, String target, long dueMs) {
    ProducerRecord<String, String> record = new ProducerRecord<>(topic, id, "payload of " + id);
    record.headers().add(DelayHeaders.TARGET_TOPIC, target.getBytes(StandardCharsets.UTF_8));
    record
        .headers()
        .add(DelayHeaders.FIRE_AT, Long.toString(dueMs).getBytes(StandardCharsets.UTF_8));
    return record;
  }

  private InProcessService start(String name, Duration metadataRefresh) throws Exception {
    Map<String, Object> props = new HashMap<>();
    props.put(DelayConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    props.put(DelayConfig.APPLICATION_ID_CONFIG, "faults-" + name);
    props.put(DelayConfig.STATE_DIR_CONFIG, stateDir.resolve(name).toString());
    props.put(DelayConfig.REQUESTS_TOPIC_CONFIG, name + "-requests");
    props.put(DelayConfig.DLQ_TOPIC_CONFIG, name + "-dlq");
    props.put(DelayConfig.TOPIC_PARTITIONS_CONFIG, 2);
    props.put(DelayConfig.TOPIC_REPLICATION_FACTOR_CONFIG, (short) 1);
    props.put(DelayConfig.HTTP_PORT_CONFIG, 0);
    props.put(DelayConfig.TARGET_TOPICS_REFRESH_CONFIG, metadataRefresh.toMillis());
    return InProcessService.start(new DelayConfig(props), Duration.ofMinutes(2));
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
                        new org.apache.kafka.clients.admin.DescribeTopicsOptions()
                            .includeAuthorizedOperations(true))
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

  /** Waits until kdelay has committed every request sent so far. */
  private static void awaitApplied(String applicationId, String requestsTopic) {
    Await.until(
        "kdelay to apply every request",
        Duration.ofSeconds(60),
        () -> {
          try {
            Map<TopicPartition, OffsetAndMetadata> committed =
                admin.listConsumerGroupOffsets(applicationId).partitionsToOffsetAndMetadata().get();
            Map<TopicPartition, OffsetSpec> latest =
                committed.keySet().stream()
                    .filter(tp -> tp.topic().equals(requestsTopic))
                    .collect(Collectors.toMap(Function.identity(), tp -> OffsetSpec.latest()));
            if (latest.isEmpty()) {
              return false;
            }
            return admin.listOffsets(latest).all().get().entrySet().stream()
                .allMatch(end -> committed.get(end.getKey()).offset() >= end.getValue().offset());
          } catch (Exception e) {
            return false;
          }
        });
  }

  /**
   * How many stream threads died: a replacement takes the next number, one thread is configured.
   */
  private static int threadFailures(InProcessService service) {
    return service.replacementThreads().stream()
        .map(THREAD_NUMBER::matcher)
        .filter(Matcher::find)
        .mapToInt(m -> Integer.parseInt(m.group(1)) - 1)
        .max()
        .orElse(0);
  }

  private static void assertExactlyOnce(List<Received> committed, List<String> healthy) {
    Map<String, Long> counts =
        committed.stream()
            .collect(
                Collectors.groupingBy(
                    r -> r.header(DelayHeaders.IDEMPOTENCY_KEY), Collectors.counting()));
    assertThat(counts.keySet()).containsExactlyInAnyOrderElementsOf(healthy);
    assertThat(counts.values()).allMatch(count -> count == 1);
  }

  private static void report(
      String name, InProcessService service, List<Received> committed, List<Received> dead) {
    long maxLateMs =
        committed.stream()
            .mapToLong(r -> r.receivedAtMs() - r.headerMs(DelayHeaders.DUE_AT))
            .max()
            .orElse(-1);
    String line =
        String.format(
            "FAULTS %s: healthy fired %d (distinct %d) of %d, max due->visible %d ms; dead letters"
                + " %s; stream thread failures %d",
            name,
            committed.size(),
            committed.stream().map(r -> r.header(DelayHeaders.IDEMPOTENCY_KEY)).distinct().count(),
            HEALTHY,
            maxLateMs,
            dead.stream()
                .map(r -> key(r) + ":" + r.header(DelayHeaders.ERROR))
                .collect(Collectors.toList()),
            threadFailures(service));
    System.out.println(line);
  }

  private static String key(Received received) {
    byte[] key = received.record().key();
    return key == null ? null : new String(key, StandardCharsets.UTF_8);
  }
}

package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.service.KafkaClusterExtension;
import dev.kdelay.service.KafkaTestCluster;
import dev.kdelay.service.config.ServiceConfig;
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
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * kdelay writes for whoever can write to its request topic, so it must not be a confused deputy:
 * over a real broker, Kafka's internal topics, kdelay's own request, dead-letter and reroute topics
 * and its Kafka Streams changelogs are refused as targets with {@code TARGET_NOT_ALLOWED}, even
 * when {@code delay.target.topic.allow} would match them, and topics outside the allowlist are
 * refused too. Nothing is written to a refused topic.
 */
@Tag("integration")
@ExtendWith(KafkaClusterExtension.class)
class TargetTopicGuardIT {

  private static final int PARTITIONS = 2;

  @TempDir Path stateDir;

  @Test
  void shouldRefuseInternalAndOwnTopicsEvenWhenTheAllowlistMatchesThem(KafkaTestCluster kafka)
      throws Exception {
    // given: an allowlist that matches every topic
    String name = "guard-open";
    String app = "faults-" + name;
    Map<String, String> expected = new TreeMap<>();
    for (String internal :
        List.of(
            "__consumer_offsets",
            "__transaction_state",
            name + "-requests",
            name + "-dlq",
            name + "-requests-rerouted",
            app + "-delay-tasks-changelog",
            app + "-delay-schedules-changelog",
            app + "-not-yet-created")) {
      expected.put(internal, "TARGET_NOT_ALLOWED");
    }
    expected.put(name + "-orders", "FIRED");
    // Other applications' internal topics: the default-looking '.*' does not name them.
    expected.put(name + "-billing-ledger-changelog", "TARGET_NOT_ALLOWED");
    expected.put("_" + name + "-schemas", "TARGET_NOT_ALLOWED");

    // then
    guard(kafka, name, ".*", expected);
  }

  @Test
  void shouldFireOnlyToTopicsTheAllowlistMatchesInFull(KafkaTestCluster kafka) throws Exception {
    // given: an allowlist of one prefix, that also names kdelay's own and internal topics
    String name = "guard-allow";
    String app = "faults-" + name;
    String allow =
        Pattern.quote(name + "-orders.")
            + ".*|__.*|"
            + Pattern.quote(app)
            + "-.*|"
            + Pattern.quote(name + "-requests")
            + ".*|"
            + Pattern.quote(name + "-dlq")
            + "|"
            + Pattern.quote("_" + name + "-schemas");
    Map<String, String> expected = new TreeMap<>();
    expected.put(name + "-orders.eu", "FIRED");
    expected.put(name + "-orders.us", "FIRED");
    expected.put("_" + name + "-schemas", "FIRED"); // an internal-looking topic the allowlist names
    expected.put(name + "-payments", "TARGET_NOT_ALLOWED");
    expected.put("x" + name + "-orders.eu", "TARGET_NOT_ALLOWED");
    expected.put(name + "-orders", "TARGET_NOT_ALLOWED");
    expected.put("__consumer_offsets", "TARGET_NOT_ALLOWED");
    expected.put(name + "-requests", "TARGET_NOT_ALLOWED");
    expected.put(name + "-requests-rerouted", "TARGET_NOT_ALLOWED");
    expected.put(name + "-dlq", "TARGET_NOT_ALLOWED");
    expected.put(app + "-delay-tasks-changelog", "TARGET_NOT_ALLOWED");

    // then
    guard(kafka, name, allow, expected);
  }

  /** Schedules one task per target and checks each fired or was refused as expected. */
  private void guard(
      KafkaTestCluster kafka, String name, String allow, Map<String, String> expected)
      throws Exception {
    String bootstrap = kafka.bootstrapServers();
    String requests = name + "-requests";
    String dlq = name + "-dlq";
    List<String> ordinary =
        expected.keySet().stream()
            .filter(
                t ->
                    !t.startsWith("__")
                        && !t.startsWith("faults-")
                        && !t.startsWith(requests)
                        && !t.equals(dlq))
            .toList();
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
      Map<String, Integer> topics = new HashMap<>();
      ordinary.forEach(topic -> topics.put(topic, PARTITIONS));
      topics.put(requests, PARTITIONS);
      topics.put(requests + "-rerouted", PARTITIONS);
      topics.put(dlq, PARTITIONS);
      FaultScenario.createTopics(admin, topics);
      ServiceConfig config =
          new ServiceConfig(
              Map.of(
                  DelayConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                  DelayConfig.APPLICATION_ID_CONFIG, "faults-" + name,
                  DelayConfig.STATE_DIR_CONFIG, stateDir.toString(),
                  DelayConfig.REQUESTS_TOPIC_CONFIG, requests,
                  DelayConfig.DLQ_TOPIC_CONFIG, dlq,
                  ServiceConfig.TOPIC_PARTITIONS_CONFIG, PARTITIONS,
                  ServiceConfig.TOPIC_REPLICATION_FACTOR_CONFIG, (short) 1,
                  ServiceConfig.HTTP_PORT_CONFIG, 0,
                  DelayConfig.TARGET_TOPIC_ALLOW_CONFIG, allow));
      try (InProcessService service = InProcessService.start(config, Duration.ofSeconds(90))) {
        Map<String, Long> endsBefore = ends(admin, expected.keySet());
        List<String> readable = new ArrayList<>(ordinary);
        readable.add(dlq);

        // when: one request per target, all due in two seconds
        long due = System.currentTimeMillis() + 2_000;
        try (KafkaProducer<String, String> producer = TaskLoad.producer(bootstrap)) {
          for (String target : expected.keySet()) {
            RecordHeaders headers = new RecordHeaders();
            headers.add(DelayHeaders.TARGET_TOPIC, target.getBytes(StandardCharsets.UTF_8));
            headers.add(DelayHeaders.FIRE_AT, Long.toString(due).getBytes(StandardCharsets.UTF_8));
            headers.add("guard-target", target.getBytes(StandardCharsets.UTF_8));
            producer.send(new ProducerRecord<>(requests, null, "to-" + target, "payload", headers));
          }
        }

        // then
        Map<String, String> outcomes = new TreeMap<>();
        try (CommittedRecords out = new CommittedRecords(bootstrap, readable, "guard-target")) {
          Await.until(
              "every request to fire or be refused",
              Duration.ofMinutes(2),
              () -> out.containsAll(expected.keySet()));
          for (Received r : out.finish(Duration.ofSeconds(60))) {
            String outcome =
                r.record().topic().equals(dlq) ? r.header(DelayHeaders.ERROR) : "FIRED";
            outcomes.merge(r.header("guard-target"), outcome, (a, b) -> a + "," + b);
          }
        }
        System.out.printf("FAULTS %s: allow=%s outcomes %s%n", name, allow, outcomes);
        assertThat(outcomes).isEqualTo(expected);
        Map<String, Long> endsAfter = ends(admin, expected.keySet());
        Set<String> refused =
            expected.entrySet().stream()
                .filter(e -> !e.getValue().equals("FIRED"))
                .map(Map.Entry::getKey)
                // kdelay writes its own changelogs, dead letters, and to its reroute topic the
                // requests that wait for their target topic's look-up.
                .filter(
                    t ->
                        !t.equals(requests)
                            && !t.equals(requests + "-rerouted")
                            && !t.equals(dlq)
                            && !t.endsWith("-changelog"))
                .collect(Collectors.toSet());
        for (String topic : refused) {
          if (topic.startsWith("__")) {
            continue; // the broker itself writes there
          }
          assertThat(endsAfter.get(topic))
              .as("records written to the refused topic %s", topic)
              .isEqualTo(endsBefore.get(topic));
        }
        assertThat(service.departuresFromRunning()).isEmpty();
        assertThat(service.replacementThreads()).as("stream threads that died").isEmpty();
      }
    }
  }

  /** The summed end offsets of the topics that exist; absent ones count 0. */
  private static Map<String, Long> ends(Admin admin, Set<String> topics) throws Exception {
    Map<String, Long> ends = new HashMap<>();
    Set<String> existing = admin.listTopics().names().get(30, TimeUnit.SECONDS);
    for (String topic : topics) {
      if (!existing.contains(topic)) {
        ends.put(topic, 0L);
        continue;
      }
      Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
      admin
          .describeTopics(List.of(topic))
          .allTopicNames()
          .get(30, TimeUnit.SECONDS)
          .get(topic)
          .partitions()
          .forEach(p -> latest.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest()));
      ends.put(
          topic,
          admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS).values().stream()
              .mapToLong(info -> info.offset())
              .sum());
    }
    return ends;
  }
}

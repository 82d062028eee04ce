package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.service.KafkaClusterExtension;
import dev.kdelay.service.KafkaTestCluster;
import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.service.faults.CommittedRecords.Received;
import dev.kdelay.topology.DelayConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * At least once, the store write that records a fire is held in memory until a commit has flushed
 * the fired record ({@code HeldWrites}). A request for an id whose write was held replaced that
 * write in memory, and the next commit committed the request's offset: a task closed right after
 * that commit (a graceful restart commits, then closes, with no punctuation in between) never made
 * the write, and the request's effect was lost for good, since its offset was committed. Now such a
 * request takes the reroute detour and is applied once the write is made.
 *
 * <p>Here a cron schedule firing every second is cancelled right after an occurrence fired, with
 * commits 60 s apart so that the occurrence's write is still held, and the instance is restarted
 * gracefully.
 */
@Tag("integration")
@ExtendWith(KafkaClusterExtension.class)
class HeldWriteLossIT {

  private static final String NAME = "held-cancel";
  private static final String ID = "every-second";

  @TempDir Path stateDir;

  @Test
  void shouldNeverFireACancelledCronAgainWhenTheInstanceRestartsRightAfterTheCancel(
      KafkaTestCluster kafka) throws Exception {
    String bootstrap = kafka.bootstrapServers();
    String target = NAME + "-open";
    String requests = NAME + "-requests";
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
      BadRecordScenario.createTopic(admin, target, Map.of());
      ServiceConfig config = config(bootstrap, true);
      long cancelledAtMs;
      long markerOffsetEnd;
      int occurrencesBefore;
      try (CommittedRecords fired =
          new CommittedRecords(bootstrap, List.of(target), DelayHeaders.ID)) {
        try (InProcessService first = InProcessService.start(config, Duration.ofSeconds(90))) {
          // given: a cron schedule that fires every second, run at least once
          send(bootstrap, cron(requests, target));
          // The first occurrence is committed at once (no commit yet); the second one's write is
          // held until the next commit, 60 s later.
          Received second =
              Await.value(
                  "the cron's second occurrence",
                  Duration.ofSeconds(30),
                  () -> occurrence(fired, 2));

          // when: it is cancelled while that write is held, and a marker behind the cancel fires
          // (so the cancel was taken in)
          cancelledAtMs = System.currentTimeMillis();
          send(bootstrap, cancel(requests));
          send(bootstrap, marker(requests, target));
          Await.until(
              "the marker behind the cancel to fire",
              Duration.ofSeconds(30),
              () -> fired.containsAll(List.of("marker")));
          occurrencesBefore = occurrences(fired.snapshot(), cancelledAtMs);
          System.out.printf(
              "FAULTS %s: occurrence 2 due %s visible %d ms after due; cancel sent at %d;"
                  + " occurrences due after the cancel before the restart: %d%n",
              NAME,
              second.header(DelayHeaders.DUE_AT),
              second.receivedAtMs() - second.headerMs(DelayHeaders.DUE_AT),
              cancelledAtMs,
              occurrencesBefore);
        } // and the instance restarts gracefully: Kafka Streams commits, then closes the tasks
        markerOffsetEnd = endOffset(admin, requests);
        long committedOffset = committedOffset(admin, requests);
        assertThat(committedOffset)
            .as("the cancel's offset is committed: it will not be read again")
            .isEqualTo(markerOffsetEnd);

        // then: after the restart the cancelled schedule never fires again
        long restartedAtMs;
        Optional<Received> again;
        // (restarted with the default commit intervals, so that it fires each second again)
        try (InProcessService second =
            InProcessService.start(config(bootstrap, false), Duration.ofSeconds(90))) {
          restartedAtMs = System.currentTimeMillis();
          again = awaitOccurrenceAfter(fired, cancelledAtMs, Duration.ofSeconds(10));
          // It keeps firing, every second: watch for three of them, at most 10 s.
          if (again.isPresent()) {
            long since = cancelledAtMs;
            awaitQuietly(Duration.ofSeconds(10), () -> occurrences(fired.snapshot(), since) >= 3);
          }
        }
        List<Received> all = fired.finish(Duration.ofSeconds(30));
        int after = occurrences(all, cancelledAtMs);
        System.out.printf(
            "FAULTS %s: occurrences due after the cancel: %d before the restart, %d in all"
                + " (first %s, %s ms after the restart); occurrence 2 fired %d times; requests"
                + " committed to offset %d of %d%n",
            NAME,
            occurrencesBefore,
            after,
            again.map(r -> r.header(DelayHeaders.IDEMPOTENCY_KEY)).orElse("none"),
            again.map(r -> Long.toString(r.receivedAtMs() - restartedAtMs)).orElse("-"),
            all.stream().filter(r -> "2".equals(r.header(DelayHeaders.OCCURRENCE))).count(),
            committedOffset,
            markerOffsetEnd);
        assertThat(occurrencesBefore)
            .as("occurrences due after the cancel, before the restart (the write was held)")
            .isZero();
        assertThat(after).as("occurrences of the cancelled cron due after its cancel").isZero();
      }
    }
  }

  private ServiceConfig config(String bootstrap, boolean rareCommits) {
    Map<String, Object> props = new HashMap<>();
    props.put(DelayConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(DelayConfig.APPLICATION_ID_CONFIG, "faults-" + NAME);
    props.put(DelayConfig.STATE_DIR_CONFIG, stateDir.resolve(NAME).toString());
    props.put(DelayConfig.REQUESTS_TOPIC_CONFIG, NAME + "-requests");
    props.put(DelayConfig.DLQ_TOPIC_CONFIG, NAME + "-dlq");
    props.put(ServiceConfig.TOPIC_PARTITIONS_CONFIG, 1);
    props.put(ServiceConfig.TOPIC_REPLICATION_FACTOR_CONFIG, (short) 1);
    props.put(ServiceConfig.HTTP_PORT_CONFIG, 0);
    props.put(DelayConfig.PROCESSING_GUARANTEE_CONFIG, "at_least_once");
    // Commits a minute apart: a fire's write stays held that long (both are documented settings;
    // the defaults, 100 and 10 ms, make the window a few milliseconds wide, not absent).
    if (rareCommits) {
      props.put(DelayConfig.COMMIT_INTERVAL_CONFIG, 60_000L);
      props.put(DelayConfig.FIRE_COMMIT_INTERVAL_CONFIG, 60_000L);
    }
    return new ServiceConfig(props);
  }

  private static ProducerRecord<byte[], byte[]> cron(String requests, String target) {
    ProducerRecord<byte[], byte[]> record =
        new ProducerRecord<>(requests, BadRecordScenario.utf8(ID), BadRecordScenario.utf8("tick"));
    record.headers().add(DelayHeaders.TARGET_TOPIC, BadRecordScenario.utf8(target));
    record.headers().add(DelayHeaders.CRON, BadRecordScenario.utf8("* * * * * ?"));
    return record;
  }

  private static ProducerRecord<byte[], byte[]> cancel(String requests) {
    ProducerRecord<byte[], byte[]> record =
        new ProducerRecord<>(requests, BadRecordScenario.utf8(ID), new byte[0]);
    record.headers().add(DelayHeaders.ACTION, BadRecordScenario.utf8("cancel"));
    return record;
  }

  private static ProducerRecord<byte[], byte[]> marker(String requests, String target) {
    ProducerRecord<byte[], byte[]> record =
        new ProducerRecord<>(
            requests, BadRecordScenario.utf8("marker"), BadRecordScenario.utf8("marker"));
    record.headers().add(DelayHeaders.TARGET_TOPIC, BadRecordScenario.utf8(target));
    record
        .headers()
        .add(
            DelayHeaders.FIRE_AT,
            BadRecordScenario.utf8(Long.toString(System.currentTimeMillis())));
    return record;
  }

  private static void send(String bootstrap, ProducerRecord<byte[], byte[]> record)
      throws Exception {
    try (KafkaProducer<byte[], byte[]> producer = BadRecordScenario.producer(bootstrap)) {
      producer.send(record).get(30, TimeUnit.SECONDS);
    }
  }

  /** The cron's fire of this occurrence, if it has arrived. */
  private static Optional<Received> occurrence(CommittedRecords fired, long occurrence) {
    return fired.first(
        r ->
            ID.equals(r.header(DelayHeaders.ID))
                && Long.toString(occurrence).equals(r.header(DelayHeaders.OCCURRENCE)));
  }

  /** How many of the cron's fires were of occurrences due after {@code sinceMs}. */
  private static int occurrences(List<Received> fired, long sinceMs) {
    return (int)
        fired.stream()
            .filter(r -> ID.equals(r.header(DelayHeaders.ID)))
            .filter(r -> r.headerMs(DelayHeaders.DUE_AT) > sinceMs)
            .count();
  }

  /**
   * Watches the target for {@code window}: the first fire of an occurrence due after {@code
   * sinceMs}, or empty if none came. A bounded observation, not a wait for something to happen.
   */
  private static Optional<Received> awaitOccurrenceAfter(
      CommittedRecords fired, long sinceMs, Duration window) {
    try {
      return Optional.of(
          Await.value(
              "an occurrence due after the cancel",
              window,
              () ->
                  fired.first(
                      r ->
                          ID.equals(r.header(DelayHeaders.ID))
                              && r.headerMs(DelayHeaders.DUE_AT) > sinceMs)));
    } catch (AssertionError none) {
      return Optional.empty();
    }
  }

  /** Waits up to {@code window} for the condition; returns whether it held. */
  private static boolean awaitQuietly(Duration window, java.util.function.BooleanSupplier until) {
    try {
      Await.until("the condition", window, until);
      return true;
    } catch (AssertionError timedOut) {
      return false;
    }
  }

  private static long endOffset(Admin admin, String topic) throws Exception {
    TopicPartition partition = new TopicPartition(topic, 0);
    return admin
        .listOffsets(Map.of(partition, OffsetSpec.latest()))
        .all()
        .get(30, TimeUnit.SECONDS)
        .get(partition)
        .offset();
  }

  private static long committedOffset(Admin admin, String topic) throws Exception {
    Map<TopicPartition, OffsetAndMetadata> committed =
        admin
            .listConsumerGroupOffsets("faults-" + NAME)
            .partitionsToOffsetAndMetadata()
            .get(30, TimeUnit.SECONDS);
    OffsetAndMetadata offset = committed.get(new TopicPartition(topic, 0));
    return offset == null ? -1 : offset.offset();
  }
}

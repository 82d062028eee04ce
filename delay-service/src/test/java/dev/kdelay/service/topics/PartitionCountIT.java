package dev.kdelay.service.topics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.service.DelayService;
import dev.kdelay.service.DelayServiceException;
import dev.kdelay.service.DescribedTopics;
import dev.kdelay.service.KafkaClusterExtension;
import dev.kdelay.service.KafkaTestCluster;
import dev.kdelay.service.config.ServiceConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Partitions added by hand to the requests topic: a running instance stops by itself and a start is
 * refused, each naming both counts and where the supported way is described, and the stored
 * schedules are left alone.
 */
@ExtendWith(KafkaClusterExtension.class)
@Tag("integration")
class PartitionCountIT {

  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

  /** Not under the application id: topics named after it are kdelay's own, never targets. */
  private static final String TARGET = "grown-target";

  @TempDir Path stateDir;

  @Test
  void shouldRefuseToStartOnARequestsTopicGrownByHandAndKeepWhatIsStored(KafkaTestCluster kafka)
      throws Exception {
    // given: a service on two partitions that stored schedules due in an hour
    String name = "grown-by-hand";
    ServiceConfig config = TopicsTestConfig.named(kafka, name, stateDir, Map.of());
    String requests = name + "-requests";
    String changelog = name + "-delay-schedules-v2-changelog";
    try (DescribedTopics topics = new DescribedTopics(kafka)) {
      createTopic(topics.admin(), TARGET);
      try (DelayService service = new DelayService(config)) {
        service.start(Optional.of(START_TIMEOUT));
        schedule(kafka, requests, TARGET, 10);
        awaitStored(topics.admin(), changelog, 2);
      }
      long stored = committedEnd(topics.admin(), changelog, 2);

      // when: an operator adds partitions to the requests topic
      addPartitions(topics.admin(), requests);
      DelayService again = new DelayService(config);

      // then: refused before Kafka Streams exists, saying what and where to read on
      assertThatThrownBy(() -> again.start(Optional.of(START_TIMEOUT)))
          .isInstanceOf(DelayServiceException.class)
          .hasMessageContaining("The requests topic " + requests + " has 4 partitions")
          .hasMessageContaining("stored for 2 (changelog " + changelog + ")")
          .hasMessageContaining("with kdelay move")
          .hasMessageContaining("'Changing the partition count' in docs/operations.md");
      assertThat(again.state()).as("Kafka Streams was never created").isEmpty();
      again.close();
      assertThat(committedEnd(topics.admin(), changelog, 2))
          .as("the changelog, untouched")
          .isEqualTo(stored);
    }
  }

  @Test
  void shouldStopARunningInstanceWhenPartitionsAreAddedToItsRequestsTopic(KafkaTestCluster kafka)
      throws Exception {
    // given: a running service on two partitions that stored schedules; its clients look at the
    // topics' metadata every second instead of every five minutes
    String name = "grown-live";
    String requests = name + "-requests";
    String changelog = name + "-delay-schedules-v2-changelog";
    ServiceConfig config =
        TopicsTestConfig.named(kafka, name, stateDir, Map.of("metadata.max.age.ms", 1000));
    try (DescribedTopics topics = new DescribedTopics(kafka);
        DelayService service = new DelayService(config)) {
      createTopic(topics.admin(), TARGET + "-live");
      service.start(Optional.of(START_TIMEOUT));
      schedule(kafka, requests, TARGET + "-live", 10);
      awaitStored(topics.admin(), changelog, 2);
      long stored = committedEnd(topics.admin(), changelog, 2);

      // when: an operator adds partitions while it runs
      addPartitions(topics.admin(), requests);

      // then: it stops by itself, as failed, saying why, and fired nothing
      KafkaStreams.State end =
          CompletableFuture.supplyAsync(
                  () -> {
                    try {
                      return service.awaitTermination();
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                      throw new IllegalStateException(e);
                    }
                  })
              .get(2, TimeUnit.MINUTES);
      assertThat(end).isEqualTo(KafkaStreams.State.ERROR);
      assertThat(service.failure())
          .hasValueSatisfying(
              reason ->
                  assertThat(reason)
                      .contains("The requests topic " + requests + " has 4 partitions")
                      .contains("stored for 2")
                      .contains("with kdelay move")
                      .contains("'Changing the partition count' in docs/operations.md"));
      assertThat(committedEnd(topics.admin(), TARGET + "-live", 1)).as("records fired").isZero();
      assertThat(committedEnd(topics.admin(), changelog, 2))
          .as("the changelog's end: nothing taken away")
          .isGreaterThanOrEqualTo(stored);
    }
  }

  private static void schedule(KafkaTestCluster kafka, String requests, String target, int count)
      throws Exception {
    String due = Long.toString(Instant.now().plus(Duration.ofHours(1)).toEpochMilli());
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(
            Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()),
            new StringSerializer(),
            new StringSerializer())) {
      for (int i = 0; i < count; i++) {
        ProducerRecord<String, String> request =
            new ProducerRecord<>(requests, "schedule-" + i, "payload " + i);
        request.headers().add(DelayHeaders.FIRE_AT, due.getBytes(StandardCharsets.UTF_8));
        request.headers().add(DelayHeaders.TARGET_TOPIC, target.getBytes(StandardCharsets.UTF_8));
        producer.send(request).get(30, TimeUnit.SECONDS);
      }
    }
  }

  /** Waits until the changelog holds committed records. */
  private static void awaitStored(Admin admin, String changelog, int partitions) throws Exception {
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (committedEnd(admin, changelog, partitions) == 0) {
      assertThat(System.nanoTime()).as("schedules stored in time").isLessThan(deadline);
      Thread.sleep(50);
    }
  }

  /** The sum of the changelog's committed end offsets. */
  private static long committedEnd(Admin admin, String changelog, int partitions) throws Exception {
    Map<TopicPartition, OffsetSpec> latest =
        IntStream.range(0, partitions)
            .mapToObj(p -> new TopicPartition(changelog, p))
            .collect(Collectors.toMap(p -> p, p -> OffsetSpec.latest()));
    return admin
        .listOffsets(latest, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
        .all()
        .get(30, TimeUnit.SECONDS)
        .values()
        .stream()
        .mapToLong(info -> info.offset())
        .sum();
  }

  /** A topic of one partition. */
  private static void createTopic(Admin admin, String topic) throws Exception {
    admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
  }

  /** What an operator does by hand: four partitions instead of two. */
  private static void addPartitions(Admin admin, String requests) throws Exception {
    admin
        .createPartitions(Map.of(requests, NewPartitions.increaseTo(4)))
        .all()
        .get(30, TimeUnit.SECONDS);
  }
}

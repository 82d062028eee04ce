package dev.kdelay.service.topics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.service.DelayService;
import dev.kdelay.service.DelayServiceException;
import dev.kdelay.service.DescribedTopics;
import dev.kdelay.service.KafkaClusterExtension;
import dev.kdelay.service.KafkaTestCluster;
import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.topology.DelayConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** A start refuses, before Kafka Streams exists, a changelog of kdelay's stores that deletes. */
@ExtendWith(KafkaClusterExtension.class)
@Tag("integration")
class ChangelogCompactionIT {

  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

  @TempDir Path stateDir;

  @Test
  void shouldRefuseToStartNamingTopicPolicyAndFixWhenAChangelogIsNotCompacted(
      KafkaTestCluster kafka) throws Exception {
    // given: the task store's changelog, changed to delete by hand
    String name = "changelog-delete";
    ServiceConfig config = config(kafka, name, Map.of());
    String changelog = name + "-delay-schedules-v2-changelog";
    try (DescribedTopics topics = new DescribedTopics(kafka)) {
      NewTopic deleting =
          new NewTopic(changelog, 2, (short) 1).configs(Map.of("cleanup.policy", "delete"));
      topics.admin().createTopics(List.of(deleting)).all().get(30, TimeUnit.SECONDS);
    }

    // when
    DelayService service = new DelayService(config);
    assertThatThrownBy(() -> service.start(Optional.of(START_TIMEOUT)))
        // then
        .isInstanceOf(DelayServiceException.class)
        .hasMessageContaining("'" + changelog + "'")
        .hasMessageContaining("cleanup.policy=delete")
        .hasMessageContaining(
            "kafka-configs --bootstrap-server "
                + kafka.bootstrapServers()
                + " --alter --entity-type topics --entity-name "
                + changelog
                + " --add-config cleanup.policy=compact");
    assertThat(service.state()).as("Kafka Streams was never created").isEmpty();
  }

  @Test
  void shouldRaiseTheChangelogsDeleteRetentionToTheMarkersRetention(KafkaTestCluster kafka)
      throws Exception {
    // given: the changelog as Kafka Streams made it under the default retentions (a day), and the
    // fired retention since raised to a week
    String name = "changelog-retention";
    String changelog = name + "-delay-schedules-v2-changelog";
    long week = Duration.ofDays(7).toMillis();
    ServiceConfig config = config(kafka, name, Map.of(DelayConfig.FIRED_RETENTION_CONFIG, week));
    try (DescribedTopics topics = new DescribedTopics(kafka)) {
      NewTopic old =
          new NewTopic(changelog, 2, (short) 1)
              .configs(Map.of("cleanup.policy", "compact", "delete.retention.ms", "86400000"));
      topics.admin().createTopics(List.of(old)).all().get(30, TimeUnit.SECONDS);

      // when
      try (DelayService service = new DelayService(config)) {
        service.start(Optional.of(START_TIMEOUT));

        // then
        assertThat(topics.config(changelog, "delete.retention.ms")).isEqualTo(Long.toString(week));
      }
    }
  }

  @Test
  void shouldFindTheFirstLayoutsChangelogsAndSayTheirTasksWillNotFire(KafkaTestCluster kafka)
      throws Exception {
    // given: the task store's changelog of the first layout
    String name = "first-layout";
    String oldChangelog = name + "-delay-tasks-changelog";
    try (DescribedTopics topics = new DescribedTopics(kafka)) {
      topics
          .admin()
          .createTopics(List.of(new NewTopic(oldChangelog, 2, (short) 1)))
          .all()
          .get(30, TimeUnit.SECONDS);
    }

    // when
    Set<String> found;
    try (DescribedTopics topics = new DescribedTopics(kafka)) {
      found =
          TopicConfigs.ofExisting(
                  topics.admin(),
                  StartupDeadline.after(START_TIMEOUT),
                  ChangelogTopics.firstLayout(name))
              .keySet();
    }

    // then: the start says at ERROR which topics hold tasks it will not fire, and what to do
    assertThat(found).containsExactly(oldChangelog);
    assertThat(ChangelogTopics.firstLayoutWarning(found))
        .hasValueSatisfying(
            warning ->
                assertThat(warning)
                    .contains(oldChangelog, "Upgrading from the two-store layout")
                    .doesNotContain(name + "-delay-schedules-changelog"));
    assertThat(ChangelogTopics.firstLayoutWarning(Set.of())).isEmpty();
  }

  private ServiceConfig config(KafkaTestCluster kafka, String name, Map<String, Object> settings) {
    return TopicsTestConfig.named(kafka, name, stateDir, settings);
  }
}

package dev.kdelay.service.topics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.kdelay.service.Conditions;
import dev.kdelay.service.KafkaClusterExtension;
import dev.kdelay.service.KafkaTestCluster;
import dev.kdelay.topology.TargetTopic;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@link AdminTargetTopics} against a real broker. */
@Tag("integration")
@ExtendWith(KafkaClusterExtension.class)
class AdminTargetTopicsIT {

  private static final Duration REFRESH = Duration.ofMillis(200);
  private static final Duration CONDITION_TIMEOUT = Duration.ofSeconds(30);

  private final String prefix = "att-" + UUID.randomUUID().toString().substring(0, 8) + "-";
  private String bootstrapServers;
  private Admin admin;

  @BeforeEach
  void connect(KafkaTestCluster kafka) {
    bootstrapServers = kafka.bootstrapServers();
    admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers));
  }

  @AfterEach
  void disconnect() {
    admin.close(Duration.ofSeconds(5));
  }

  @Test
  void shouldReadTheLimitsWhenATopicHasThem() throws Exception {
    // given
    String topic = createTopic("limited", 3, Map.of(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, "1000"));

    // when
    try (AdminTargetTopics topics = targetTopics(TopicMetadataWarmer.NONE)) {
      // then
      assertThat(topics.lookUp(topic))
          .isEqualTo(new TargetTopic(TargetTopic.Status.PRESENT, 3, 1000, true, Long.MAX_VALUE));
    }
  }

  @Test
  void shouldLimitTheTimestampAgeOnlyWhenATopicKeepsCreateTime() throws Exception {
    String createTime =
        createTopic(
            "create-time",
            1,
            Map.of(
                TopicConfig.MESSAGE_TIMESTAMP_TYPE_CONFIG, "CreateTime",
                TopicConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS_CONFIG, "60000"));
    String appendTime =
        createTopic(
            "append-time",
            1,
            Map.of(
                TopicConfig.MESSAGE_TIMESTAMP_TYPE_CONFIG, "LogAppendTime",
                TopicConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS_CONFIG, "60000"));

    try (AdminTargetTopics topics = targetTopics(TopicMetadataWarmer.NONE)) {
      assertThat(topics.lookUp(createTime).maxTimestampAgeMs()).isEqualTo(60_000);
      assertThat(topics.lookUp(appendTime).maxTimestampAgeMs()).isEqualTo(Long.MAX_VALUE);
    }
  }

  @Test
  void shouldAnswerAbsentWhenATopicDoesNotExist() {
    try (AdminTargetTopics topics = targetTopics(TopicMetadataWarmer.NONE)) {
      assertThat(topics.lookUp(prefix + "nowhere")).isEqualTo(TargetTopic.ABSENT);
    }
  }

  @Test
  void shouldSeeATopicCreatedAfterItWasSeenAbsentWhenTheAbsenceHasExpired() throws Exception {
    // given: seen absent, the refresh too slow to notice in this test
    String topic = prefix + "late";
    try (AdminTargetTopics topics =
        new AdminTargetTopics(
            new TopicLimitsReader(admin, Duration.ofSeconds(10))::read,
            new TargetTopicCache(100, Duration.ofMillis(300), Clock.systemUTC()),
            Duration.ofSeconds(10),
            Duration.ofHours(1),
            TopicMetadataWarmer.NONE)) {
      assertThat(topics.lookUp(topic)).isEqualTo(TargetTopic.ABSENT);

      // when
      createTopic("late", 2, Map.of());

      // then
      TargetTopic found =
          Conditions.awaitValue(
              CONDITION_TIMEOUT, () -> topics.lookUp(topic), t -> t.partitions() == 2);
      assertThat(found.status()).isEqualTo(TargetTopic.Status.PRESENT);
    }
  }

  @Test
  void shouldNoticeAChangedLimitWhenTheRefreshRuns() throws Exception {
    // given
    String topic = createTopic("changing", 1, Map.of());
    try (AdminTargetTopics topics = targetTopics(TopicMetadataWarmer.NONE)) {
      assertThat(topics.lookUp(topic).maxMessageBytes()).isNotEqualTo(2000);

      // when
      ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
      AlterConfigOp raise =
          new AlterConfigOp(
              new ConfigEntry(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, "2000"),
              AlterConfigOp.OpType.SET);
      admin.incrementalAlterConfigs(Map.of(resource, List.of(raise))).all().get();

      // then: the fire path's answer changes without anyone asking the cluster for it
      Conditions.awaitValue(
          CONDITION_TIMEOUT, () -> topics.cached(topic).maxMessageBytes(), bytes -> bytes == 2000);
    }
  }

  @Test
  void shouldAnswerFromMemoryWithoutWaitingWhenTheClusterIsUnreachable() throws Exception {
    // given: nothing listens, and a look-up would wait a minute
    Admin nowhere =
        Admin.create(
            Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                "127.0.0.1:" + closedPort(),
                AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG,
                1000));
    try (AdminTargetTopics topics =
        new AdminTargetTopics(
            new TopicLimitsReader(nowhere, Duration.ofMinutes(1))::read,
            new TargetTopicCache(100, Duration.ofSeconds(5), Clock.systemUTC()),
            Duration.ofMinutes(1),
            Duration.ofHours(1),
            TopicMetadataWarmer.NONE)) {
      // when / then: the fire path answers at once, again and again (a wait would be a minute)
      assertTimeoutPreemptively(
          Duration.ofSeconds(20),
          () -> {
            for (int i = 0; i < 1000; i++) {
              assertThat(topics.cached(prefix + "anything")).isEqualTo(TargetTopic.UNKNOWN);
            }
          });
    } finally {
      nowhere.close(Duration.ZERO); // its read is still pending: do not wait for it
    }
  }

  private AdminTargetTopics targetTopics(TopicMetadataWarmer warmer) {
    return new AdminTargetTopics(
        new TopicLimitsReader(admin, Duration.ofSeconds(10))::read,
        new TargetTopicCache(100, Duration.ofSeconds(5), Clock.systemUTC()),
        Duration.ofSeconds(10),
        REFRESH,
        warmer);
  }

  private String createTopic(String name, int partitions, Map<String, String> configs)
      throws Exception {
    String topic = prefix + name;
    admin
        .createTopics(
            List.of(
                new NewTopic(topic, Optional.of(partitions), Optional.empty()).configs(configs)))
        .all()
        .get(30, TimeUnit.SECONDS);
    return topic;
  }

  private static int closedPort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}

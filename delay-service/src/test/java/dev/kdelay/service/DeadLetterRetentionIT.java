package dev.kdelay.service;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.topology.DelayConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The retention of the dead-letter topic: set when kdelay creates it, left alone otherwise. */
@ExtendWith(KafkaClusterExtension.class)
@Tag("integration")
class DeadLetterRetentionIT {

  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
  private static final long ONE_DAY_MS = Duration.ofDays(1).toMillis();

  @TempDir Path stateDir;

  @Test
  void shouldKeepDeadLettersThirtyDaysWhenItCreatesTheTopicAndNothingIsSet(KafkaTestCluster kafka)
      throws Exception {
    ServiceConfig config = config(kafka, "retention-default");

    try (DelayService service = new DelayService(config);
        DescribedTopics topics = new DescribedTopics(kafka)) {
      service.start(Optional.of(START_TIMEOUT));

      assertThat(topics.config(config.delay().dlqTopic(), "retention.ms"))
          .isEqualTo(Long.toString(Duration.ofDays(30).toMillis()));
    }
  }

  @Test
  void shouldSetTheConfiguredRetentionWhenItCreatesTheTopic(KafkaTestCluster kafka)
      throws Exception {
    ServiceConfig config =
        config(kafka, "retention-set").with(ServiceConfig.DLQ_RETENTION_CONFIG, ONE_DAY_MS);

    try (DelayService service = new DelayService(config);
        DescribedTopics topics = new DescribedTopics(kafka)) {
      service.start(Optional.of(START_TIMEOUT));

      assertThat(topics.config(config.delay().dlqTopic(), "retention.ms"))
          .isEqualTo(Long.toString(ONE_DAY_MS));
    }
  }

  @Test
  void shouldStartAndLeaveTheTopicAloneWhenAnExistingOneKeepsLess(KafkaTestCluster kafka)
      throws Exception {
    // given: an operator's dead-letter topic that keeps a day, less than the default 30
    ServiceConfig config = config(kafka, "retention-shorter");
    try (DescribedTopics topics = new DescribedTopics(kafka)) {
      NewTopic operators =
          new NewTopic(config.delay().dlqTopic(), 1, (short) 1)
              .configs(Map.of("retention.ms", Long.toString(ONE_DAY_MS)));
      topics.admin().createTopics(List.of(operators)).all().get(30, TimeUnit.SECONDS);

      // when
      try (DelayService service = new DelayService(config)) {
        service.start(Optional.of(START_TIMEOUT));

        // then: it runs (a shorter retention is a warning) and the topic is as it was
        assertThat(topics.config(config.delay().dlqTopic(), "retention.ms"))
            .isEqualTo(Long.toString(ONE_DAY_MS));
      }
    }
  }

  private ServiceConfig config(KafkaTestCluster kafka, String name) {
    Map<String, Object> props = new HashMap<>();
    props.put(DelayConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    props.put(DelayConfig.APPLICATION_ID_CONFIG, "topics-" + name);
    props.put(DelayConfig.STATE_DIR_CONFIG, stateDir.resolve(name).toString());
    props.put(DelayConfig.REQUESTS_TOPIC_CONFIG, name + "-requests");
    props.put(DelayConfig.DLQ_TOPIC_CONFIG, name + "-dlq");
    props.put(ServiceConfig.TOPIC_PARTITIONS_CONFIG, 2);
    props.put(ServiceConfig.HTTP_PORT_CONFIG, 0);
    return new ServiceConfig(props);
  }
}

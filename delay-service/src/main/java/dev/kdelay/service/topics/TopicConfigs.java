package dev.kdelay.service.topics;

import dev.kdelay.service.DelayServiceException;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the configs of existing topics at start, within the start's deadline, for the checks a
 * start makes of them; the effective values, so a topic without an override shows the broker's
 * default.
 *
 * <p>Reading a topic's configs needs the DescribeConfigs permission, which kdelay needs for nothing
 * else: where it is missing the checks are skipped with a warning rather than failing a start that
 * would otherwise work.
 */
final class TopicConfigs {

  private static final Logger log = LoggerFactory.getLogger(TopicConfigs.class);

  private TopicConfigs() {}

  /**
   * The configs of those of the topics that exist and may be read.
   *
   * @return each existing topic's configs; a topic that does not exist, or whose configs this
   *     principal may not read, is left out
   * @throws DelayServiceException if Kafka does not answer before the deadline
   * @throws org.apache.kafka.common.KafkaException if Kafka refuses for another reason
   */
  static Map<String, Config> ofExisting(
      Admin admin, StartupDeadline deadline, Collection<String> topics) {
    Map<String, Config> configs = new HashMap<>();
    for (String topic : topics) {
      read(admin, deadline, topic).ifPresent(config -> configs.put(topic, config));
    }
    return configs;
  }

  private static Optional<Config> read(Admin admin, StartupDeadline deadline, String topic) {
    ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
    for (int attempt = 0; ; attempt++) {
      try {
        return Optional.of(
            deadline.await(admin.describeConfigs(List.of(resource)).values().get(resource)));
      } catch (UnknownTopicOrPartitionException e) {
        return Optional.empty(); // absent: nothing to check
      } catch (AuthorizationException e) {
        log.warn(
            "event=topic-configs-unreadable topic={} error={} hint=\"grant DescribeConfigs on the"
                + " topic so that kdelay can check its retention and cleanup policy at start\"",
            topic,
            e.getClass().getSimpleName());
        return Optional.empty();
      } catch (RetriableException e) {
        deadline.backOff(
            attempt, () -> "Could not read the configs of topic '" + topic + "': " + e);
      }
    }
  }
}

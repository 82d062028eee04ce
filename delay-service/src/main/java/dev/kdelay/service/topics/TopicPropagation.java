package dev.kdelay.service.topics;

import dev.kdelay.service.DelayServiceException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.RetriableException;

/**
 * Waits, within the start's deadline, until topics are usable: in the metadata a broker answers
 * with, with at least one partition and a leader for every partition.
 *
 * <p>A create is acknowledged once the controller has committed it, before every broker has applied
 * it; a topic another instance created is, for a while, known to some brokers and not others. A
 * client that used it meanwhile would find it missing: Kafka Streams, whose first rebalance finds a
 * source topic missing, fails its stream thread with {@code MissingSourceTopicException}, and the
 * replacement thread waits out the dead member's session timeout before the instance runs.
 */
final class TopicPropagation {

  private final Admin admin;
  private final StartupDeadline deadline;

  TopicPropagation(Admin admin, StartupDeadline deadline) {
    this.admin = admin;
    this.deadline = deadline;
  }

  /**
   * Waits until every topic is usable.
   *
   * @return each topic's partition count
   * @throws DelayServiceException naming a topic that is not usable when the deadline passes, and
   *     what was seen of it
   * @throws org.apache.kafka.common.KafkaException if Kafka answers with an error that is not
   *     transient, such as a missing permission
   */
  Map<String, Integer> awaitUsable(List<String> topics) {
    for (int attempt = 0; ; attempt++) {
      Map<String, KafkaFuture<TopicDescription>> answers =
          admin.describeTopics(topics).topicNameValues();
      Map<String, Integer> partitions = new LinkedHashMap<>();
      Optional<String> notUsable = Optional.empty();
      for (String topic : topics) {
        Optional<String> problem = problem(topic, answers.get(topic), partitions);
        if (problem.isPresent() && notUsable.isEmpty()) {
          notUsable = problem;
        }
      }
      if (notUsable.isEmpty()) {
        return partitions;
      }
      String seen = notUsable.get();
      deadline.backOff(attempt, () -> seen);
    }
  }

  /** What makes the topic unusable now, if anything; records its partition count if usable. */
  private Optional<String> problem(
      String topic, KafkaFuture<TopicDescription> answer, Map<String, Integer> partitions) {
    TopicDescription description;
    try {
      description = deadline.await(answer);
    } catch (RetriableException e) {
      // Unknown topic, no leader, no answer in time: still propagating, or a broker is down.
      return Optional.of("Topic '" + topic + "' is not usable yet: " + e);
    }
    List<Integer> leaderless =
        description.partitions().stream()
            .filter(partition -> partition.leader() == null || partition.leader().isEmpty())
            .map(TopicPartitionInfo::partition)
            .toList();
    if (description.partitions().isEmpty()) {
      return Optional.of("Topic '" + topic + "' is not usable yet: it has no partitions");
    }
    if (!leaderless.isEmpty()) {
      return Optional.of(
          "Topic '" + topic + "' is not usable yet: partitions " + leaderless + " have no leader");
    }
    partitions.put(topic, description.partitions().size());
    return Optional.empty();
  }
}

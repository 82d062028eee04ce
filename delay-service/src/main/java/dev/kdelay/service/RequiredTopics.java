package dev.kdelay.service;

import dev.kdelay.topology.DelayConfig;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes sure kdelay's own topics exist before the topology starts: the requests topic, the
 * dead-letter topic and the reroute topic.
 *
 * <p>The reroute topic carries a request that arrived on a partition other than the one its id
 * hashes to over to that partition, so it must have exactly as many partitions as the requests
 * topic: it is created so, and a mismatch is fatal rather than silently misrouting requests.
 */
final class RequiredTopics {

  private static final Logger log = LoggerFactory.getLogger(RequiredTopics.class);

  private final Admin admin;
  private final DelayConfig config;
  private final Duration timeout;

  RequiredTopics(Admin admin, DelayConfig config, Duration timeout) {
    this.admin = admin;
    this.config = config;
    this.timeout = timeout;
  }

  /**
   * Creates the topics that are absent and checks the reroute topic's partition count.
   *
   * @return the partition count of the requests topic
   * @throws DelayServiceException if the reroute topic has another partition count than the
   *     requests topic, or Kafka does not answer in time
   */
  int ensure() {
    int requestsPartitions = ensure(config.requestsTopic(), config.topicPartitions());
    ensure(config.dlqTopic(), config.topicPartitions());
    int reroutePartitions = ensure(config.rerouteTopic(), requestsPartitions);
    awaitLeaders(List.of(config.requestsTopic(), config.dlqTopic(), config.rerouteTopic()));
    if (reroutePartitions != requestsPartitions) {
      throw new DelayServiceException(
          String.format(
              "The reroute topic %s has %d partitions but the requests topic %s has %d; they must"
                  + " be equal. Give them the same count (kafka-topics --alter --partitions), or"
                  + " delete %s when no request is in flight and kdelay recreates it.",
              config.rerouteTopic(),
              reroutePartitions,
              config.requestsTopic(),
              requestsPartitions,
              config.rerouteTopic()));
    }
    return requestsPartitions;
  }

  /** Creates the topic if absent; returns its partition count. */
  private int ensure(String topic, int partitions) {
    OptionalInt existing = partitionCount(topic);
    if (existing.isPresent()) {
      log.info("event=topic-exists topic={} partitions={}", topic, existing.getAsInt());
      return existing.getAsInt();
    }
    short replicationFactor = config.topicReplicationFactor();
    NewTopic newTopic =
        new NewTopic(
            topic,
            Optional.of(partitions),
            replicationFactor < 0 ? Optional.empty() : Optional.of(replicationFactor));
    try {
      await(admin.createTopics(List.of(newTopic)).all());
      log.info("event=topic-created topic={} partitions={}", topic, partitions);
      return partitions;
    } catch (TopicExistsException e) {
      // Another instance created it between our look and our create: use what it made.
      return partitionCount(topic).orElseThrow(() -> e);
    }
  }

  /**
   * Waits until every partition of the topics has a leader in the metadata a broker answers with.
   *
   * <p>A topic just created is committed by the controller before every broker has applied it. If
   * Kafka Streams started then, its first rebalance could find a source topic missing from the
   * metadata, fail its stream thread with {@code MissingSourceTopicException}, and the replacement
   * thread would wait out the dead member's session timeout before the instance ran.
   */
  private void awaitLeaders(List<String> topics) {
    long deadline = System.nanoTime() + timeout.toNanos();
    long backoffMs = 10;
    while (!haveLeaders(topics)) {
      if (System.nanoTime() - deadline > 0) {
        throw new DelayServiceException(
            "The topics "
                + topics
                + " have partitions without a leader after "
                + timeout.toSeconds()
                + " s; check the brokers");
      }
      sleep(backoffMs);
      backoffMs = Math.min(backoffMs * 2, 500);
    }
  }

  private boolean haveLeaders(List<String> topics) {
    try {
      return await(admin.describeTopics(topics).allTopicNames()).values().stream()
          .flatMap(description -> description.partitions().stream())
          .allMatch(partition -> partition.leader() != null && !partition.leader().isEmpty());
    } catch (UnknownTopicOrPartitionException e) {
      return false; // not in this broker's metadata yet
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new DelayServiceException("Interrupted while waiting for topics", e);
    }
  }

  private OptionalInt partitionCount(String topic) {
    try {
      Map<String, TopicDescription> described =
          await(admin.describeTopics(List.of(topic)).allTopicNames());
      return OptionalInt.of(described.get(topic).partitions().size());
    } catch (UnknownTopicOrPartitionException e) {
      return OptionalInt.empty();
    }
  }

  private <T> T await(Future<T> future) {
    try {
      return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException cause) {
        throw cause;
      }
      throw new DelayServiceException("Kafka admin request failed: " + e.getCause(), e);
    } catch (TimeoutException e) {
      throw new DelayServiceException(
          "Kafka did not answer within " + timeout.toSeconds() + " s; check the bootstrap servers",
          e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new DelayServiceException("Interrupted while setting up topics", e);
    }
  }
}

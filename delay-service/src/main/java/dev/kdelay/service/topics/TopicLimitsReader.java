package dev.kdelay.service.topics;

import dev.kdelay.schemas.LogValues;
import dev.kdelay.topology.TargetTopic;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.record.TimestampType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads what the cluster says of target topics, for any number of them in two requests: one {@code
 * describeTopics} (existence, partitions, and the operations kdelay's principal may perform) and
 * one {@code describeConfigs} ({@code max.message.bytes}, {@code message.timestamp.type}, {@code
 * message.timestamp.before.max.ms} and {@code cleanup.policy}).
 *
 * <p>Thread-safe: it holds nothing but the Admin client, and the returned futures complete on the
 * Admin client's thread.
 */
final class TopicLimitsReader {

  private static final Logger log = LoggerFactory.getLogger(TopicLimitsReader.class);

  /**
   * A topic the principal may not even describe. Kafka answers so for absent and present topics
   * alike, so existence stays unknown; but writing needs DESCRIBE, so it is surely not writable.
   */
  static final TargetTopic NOT_DESCRIBABLE = TargetTopic.UNKNOWN.withWritable(false);

  private final Admin admin;
  private final int timeoutMs;

  /**
   * @param admin the client to ask
   * @param timeout how long the cluster may take to answer before a topic counts as unknown
   */
  TopicLimitsReader(Admin admin, Duration timeout) {
    this.admin = admin;
    this.timeoutMs = (int) Math.min(Integer.MAX_VALUE, timeout.toMillis());
  }

  /**
   * Reads the topics.
   *
   * @return a future of one description per topic, {@link TargetTopic#UNKNOWN} where the cluster
   *     did not tell; it never completes exceptionally
   */
  CompletableFuture<Map<String, TargetTopic>> read(Collection<String> topics) {
    Set<String> names = Set.copyOf(topics);
    Map<String, KafkaFuture<TopicDescription>> descriptions =
        admin
            .describeTopics(
                names,
                new DescribeTopicsOptions().includeAuthorizedOperations(true).timeoutMs(timeoutMs))
            .topicNameValues();
    List<ConfigResource> resources =
        names.stream().map(name -> new ConfigResource(ConfigResource.Type.TOPIC, name)).toList();
    Map<ConfigResource, KafkaFuture<Config>> configs =
        admin
            .describeConfigs(resources, new DescribeConfigsOptions().timeoutMs(timeoutMs))
            .values();
    List<CompletableFuture<?>> all = new ArrayList<>();
    descriptions.values().forEach(future -> all.add(settled(future)));
    configs.values().forEach(future -> all.add(settled(future)));
    return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new))
        .thenApply(done -> assemble(names, descriptions, configs));
  }

  private static Map<String, TargetTopic> assemble(
      Set<String> names,
      Map<String, KafkaFuture<TopicDescription>> descriptions,
      Map<ConfigResource, KafkaFuture<Config>> configs) {
    Map<String, TargetTopic> described = new HashMap<>();
    int failed = 0;
    Throwable firstFailure = null;
    for (String name : names) {
      KafkaFuture<TopicDescription> description = descriptions.get(name);
      Throwable failure = failure(description);
      if (failure == null) {
        Config config = value(configs.get(new ConfigResource(ConfigResource.Type.TOPIC, name)));
        described.put(name, present(value(description), config));
      } else if (failure instanceof UnknownTopicOrPartitionException) {
        described.put(name, TargetTopic.ABSENT);
      } else if (failure instanceof TopicAuthorizationException) {
        described.put(name, NOT_DESCRIBABLE);
      } else {
        described.put(name, TargetTopic.UNKNOWN);
        failed++;
        firstFailure = firstFailure == null ? failure : firstFailure;
      }
    }
    if (failed > 0) {
      // One line per read, not per topic: an unreachable cluster fails them all at once.
      log.warn(
          "event=target-topics-read-failed topics={} failed={} error={}",
          names.size(),
          failed,
          LogValues.quote(firstFailure));
    }
    return described;
  }

  /**
   * An existing topic; its limits stay unknown (the broker decides) if its configs were not read.
   */
  private static TargetTopic present(TopicDescription description, Config config) {
    TargetTopic topic =
        TargetTopic.present(description.partitions().size())
            .withWritable(writable(description.authorizedOperations()));
    if (config == null) {
      return topic;
    }
    return topic
        .withMaxMessageBytes(maxMessageBytes(config))
        .withMaxTimestampAgeMs(maxTimestampAgeMs(config))
        .withCompacted(compacted(config));
  }

  /** Unknown operations (an old broker, or none asked) count as allowed: the broker decides. */
  static boolean writable(Set<AclOperation> operations) {
    return operations == null
        || operations.contains(AclOperation.WRITE)
        || operations.contains(AclOperation.ALL);
  }

  private static int maxMessageBytes(Config config) {
    String bytes = valueOf(config, TopicConfig.MAX_MESSAGE_BYTES_CONFIG);
    return bytes == null ? Integer.MAX_VALUE : Math.max(1, Integer.parseInt(bytes));
  }

  /**
   * The age a fired record's timestamp (its due time) may have: limited only when the broker keeps
   * the producer's timestamp; under LogAppendTime it overwrites it and refuses nothing.
   */
  private static long maxTimestampAgeMs(Config config) {
    String type = valueOf(config, TopicConfig.MESSAGE_TIMESTAMP_TYPE_CONFIG);
    String age = valueOf(config, TopicConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS_CONFIG);
    if (!TimestampType.CREATE_TIME.name.equals(type) || age == null) {
      return Long.MAX_VALUE;
    }
    return Math.max(0, Long.parseLong(age));
  }

  /** Whether the topic compacts, and so refuses records without a key. */
  private static boolean compacted(Config config) {
    String policy = valueOf(config, TopicConfig.CLEANUP_POLICY_CONFIG);
    return policy != null && policy.contains(TopicConfig.CLEANUP_POLICY_COMPACT);
  }

  private static String valueOf(Config config, String name) {
    ConfigEntry entry = config.get(name);
    return entry == null ? null : entry.value();
  }

  /** A future that completes, normally, when the given one completes in any way. */
  private static CompletableFuture<Void> settled(KafkaFuture<?> future) {
    return future.toCompletionStage().handle((value, error) -> (Void) null).toCompletableFuture();
  }

  private static <T> T value(KafkaFuture<T> future) {
    try {
      return future == null ? null : future.getNow(null);
    } catch (ExecutionException | InterruptedException | RuntimeException e) {
      return null;
    }
  }

  private static Throwable failure(KafkaFuture<?> future) {
    if (future == null) {
      return new IllegalStateException("the cluster's answer named no such topic");
    }
    try {
      future.getNow(null);
      return null;
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return e;
    } catch (RuntimeException e) {
      return e;
    }
  }
}

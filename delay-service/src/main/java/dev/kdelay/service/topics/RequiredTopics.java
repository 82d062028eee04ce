package dev.kdelay.service.topics;

import dev.kdelay.schemas.LogValues;
import dev.kdelay.service.DelayServiceException;
import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.topology.DelayConfig;
import dev.kdelay.topology.Tenants;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes sure kdelay's own topics are usable before the topology starts (the requests topic, the
 * dead-letter topic and the reroute topic), and that the changelogs of its stores that exist are
 * compacted.
 *
 * <p>Replicas of a deployment start at the same moment, so creating a topic races with the other
 * instances: a create that finds the topic already made by another counts as success, and every
 * instance then waits, within {@value ServiceConfig#TOPIC_READY_TIMEOUT_CONFIG}, until each topic
 * is in the metadata with a leader for every partition, whoever created it (see {@link
 * TopicPropagation}).
 *
 * <p>Topics are created with the {@link TopicDurability} computed for the cluster, and the
 * dead-letter topic with {@value ServiceConfig#DLQ_RETENTION_CONFIG}. Existing topics are never
 * altered.
 *
 * <p>The reroute topic carries a request that arrived on a partition other than the one its id
 * hashes to over to that partition, so it must have exactly as many partitions as the requests
 * topic: it is created so, and a mismatch is fatal rather than silently misrouting requests.
 */
public final class RequiredTopics {

  private static final Logger log = LoggerFactory.getLogger(RequiredTopics.class);

  /** What a start learned while making the topics ready. */
  public static final class Ready {

    private final int requestsPartitions;
    private final TopicDurability durability;

    private Ready(int requestsPartitions, TopicDurability durability) {
      this.requestsPartitions = requestsPartitions;
      this.durability = durability;
    }

    /**
     * The configuration to start Kafka Streams with: the requests topic's partition count, and for
     * Kafka Streams' changelogs the durability of kdelay's own topics.
     */
    public ServiceConfig applyTo(ServiceConfig service) {
      return durability.applyToStreams(
          service.with(DelayConfig.REQUESTS_PARTITIONS_CONFIG, requestsPartitions));
    }
  }

  private final Admin admin;
  private final ServiceConfig service;
  private final DelayConfig config;

  /**
   * @param admin the client that creates and checks the topics; not closed here
   * @param service the configuration that names the topics and their settings
   */
  public RequiredTopics(Admin admin, ServiceConfig service) {
    this.admin = admin;
    this.service = service;
    this.config = service.delay();
  }

  /**
   * Creates the topics that are absent, waits until all are usable and checks them.
   *
   * @return the partition count of the requests topic and the durability of created topics
   * @throws DelayServiceException if the reroute topic has another partition count than the
   *     requests topic, a changelog is not compacted, or the topics are not usable within {@value
   *     ServiceConfig#TOPIC_READY_TIMEOUT_CONFIG}
   * @throws org.apache.kafka.common.config.ConfigException if {@code min.insync.replicas} exceeds
   *     the replication factor
   */
  public Ready ensure() {
    StartupDeadline deadline = StartupDeadline.after(service.topicReadyTimeout());
    TopicDurability durability = durability(deadline);
    int requestsPartitions = createAndAwait(durability, deadline);
    checkExisting(deadline);
    return new Ready(requestsPartitions, durability);
  }

  private TopicDurability durability(StartupDeadline deadline) {
    int brokers =
        deadline.retry("describe the cluster", () -> admin.describeCluster().nodes()).size();
    TopicDurability durability = TopicDurability.of(service, brokers);
    log.info(
        "event=topic-durability brokers={} replication.factor={} min.insync.replicas={}",
        brokers,
        durability.replicationFactor(),
        durability.minInsyncReplicas().isPresent()
            ? durability.minInsyncReplicas().getAsInt()
            : "broker-default");
    return durability;
  }

  /** Creates the absent topics and waits until all are usable; returns the requests' partitions. */
  private int createAndAwait(TopicDurability durability, StartupDeadline deadline) {
    TopicPropagation propagation = new TopicPropagation(admin, deadline);
    Map<String, String> configs = durability.topicConfigs();
    create(config.requestsTopic(), service.topicPartitions(), durability, configs, deadline);
    // The reroute topic is created with the requests topic's count, whoever created that one.
    int requestsPartitions =
        propagation.awaitUsable(List.of(config.requestsTopic())).get(config.requestsTopic());
    requireStoresOfSameCount(requestsPartitions, deadline);
    Map<String, String> dlqConfigs = new HashMap<>(configs);
    dlqConfigs.put(TopicConfig.RETENTION_MS_CONFIG, Long.toString(service.dlqRetentionMs()));
    create(config.dlqTopic(), service.topicPartitions(), durability, dlqConfigs, deadline);
    create(config.rerouteTopic(), requestsPartitions, durability, configs, deadline);
    List<String> topics =
        new ArrayList<>(List.of(config.requestsTopic(), config.dlqTopic(), config.rerouteTopic()));
    // Each tenant's request topic shares the requests topic's partitions: partition i of each is
    // read by the task that owns the ids hashing to i.
    for (Tenants.Tenant tenant : config.tenants().all()) {
      create(tenant.requestsTopic(), requestsPartitions, durability, configs, deadline);
      create(tenant.dlqTopic(), service.topicPartitions(), durability, dlqConfigs, deadline);
      topics.add(tenant.requestsTopic());
      topics.add(tenant.dlqTopic());
    }
    if (createLimitsTopic(durability, configs, deadline)) {
      topics.add(config.fireRateLimitsTopic()); // so that the instance reads it before it fires
    }
    Map<String, Integer> partitions = propagation.awaitUsable(topics);
    requireSamePartitions(
        config.rerouteTopic(), requestsPartitions, partitions.get(config.rerouteTopic()));
    for (String tenantTopic : config.tenants().requestsTopics()) {
      requireSamePartitions(tenantTopic, requestsPartitions, partitions.get(tenantTopic));
    }
    return requestsPartitions;
  }

  /** Checks topics an operator may have made or changed; refuses before Kafka Streams starts. */
  private void checkExisting(StartupDeadline deadline) {
    List<String> dlqTopics = new ArrayList<>(List.of(config.dlqTopic()));
    dlqTopics.addAll(config.tenants().dlqTopics());
    TopicConfigs.ofExisting(admin, deadline, dlqTopics)
        .forEach(
            (topic, existing) ->
                DeadLetterRetention.warnIfShorter(topic, existing, service.dlqRetentionMs()));
    Map<String, Config> changelogs =
        TopicConfigs.ofExisting(admin, deadline, ChangelogTopics.all(config.applicationId()));
    ChangelogTopics.requireCompacted(changelogs, config.bootstrapServers());
    ChangelogTopics.raiseDeleteRetention(
        admin,
        deadline,
        changelogs,
        config.changelogDeleteRetentionMs(),
        config.bootstrapServers());
    Set<String> firstLayout =
        TopicConfigs.ofExisting(
                admin, deadline, ChangelogTopics.firstLayout(config.applicationId()))
            .keySet();
    // A fresh volume has no old state directory to warn of: the old changelogs still say it.
    ChangelogTopics.firstLayoutWarning(firstLayout)
        .ifPresent(warning -> log.error("event=old-state-layout {}", warning));
  }

  /**
   * Creates the compacted topic of the limits set at run time ({@code kdelay limits}), one
   * partition. A principal that may not create it starts without it: the limits of its
   * configuration apply, and the instance says so.
   */
  private boolean createLimitsTopic(
      TopicDurability durability, Map<String, String> configs, StartupDeadline deadline) {
    Map<String, String> compacted = new HashMap<>(configs);
    compacted.put(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT);
    try {
      create(config.fireRateLimitsTopic(), 1, durability, compacted, deadline);
      return true;
    } catch (AuthorizationException e) {
      log.warn(
          "event=fire-rate-limits-topic-not-created topic={} problem={} response=configured-limits",
          config.fireRateLimitsTopic(),
          LogValues.quote(String.valueOf(e)));
      return false;
    }
  }

  /** Creates the topic unless it exists; another instance creating it meanwhile is success. */
  private void create(
      String topic,
      int partitions,
      TopicDurability durability,
      Map<String, String> configs,
      StartupDeadline deadline) {
    OptionalInt existing = partitionCount(topic, deadline);
    if (existing.isPresent()) {
      log.info("event=topic-exists topic={} partitions={}", topic, existing.getAsInt());
      return;
    }
    NewTopic newTopic =
        new NewTopic(
                topic, Optional.of(partitions), Optional.of((short) durability.replicationFactor()))
            .configs(configs);
    try {
      deadline.retry(
          "create topic '" + topic + "'", () -> admin.createTopics(List.of(newTopic)).all());
      log.info("event=topic-created topic={} partitions={} configs={}", topic, partitions, configs);
    } catch (TopicExistsException e) {
      // Another instance created it between our look and our create (or a retried create of ours
      // succeeded the first time): what matters is that it becomes usable, which is awaited next.
      log.info("event=topic-created-by-another topic={}", topic);
    }
  }

  /** The topic's partition count, or empty if it does not exist. */
  private OptionalInt partitionCount(String topic, StartupDeadline deadline) {
    for (int attempt = 0; ; attempt++) {
      try {
        TopicDescription description =
            deadline.await(admin.describeTopics(List.of(topic)).topicNameValues().get(topic));
        return OptionalInt.of(description.partitions().size());
      } catch (UnknownTopicOrPartitionException e) {
        return OptionalInt.empty();
      } catch (RetriableException e) {
        deadline.backOff(attempt, () -> "Could not describe topic '" + topic + "': " + e);
      }
    }
  }

  /**
   * Refuses a requests topic whose partition count is not the one kdelay's stores were made for: a
   * schedule belongs to partition murmur2(id) mod the count, so with another count its cancels and
   * changes would reach a partition that does not hold it. Found where it starts, so nothing is
   * read from the topic while the count differs, and nothing pending is touched.
   */
  private void requireStoresOfSameCount(int requestsPartitions, StartupDeadline deadline) {
    for (String changelog : ChangelogTopics.all(config.applicationId())) {
      OptionalInt stored = partitionCount(changelog, deadline);
      if (stored.isPresent() && stored.getAsInt() != requestsPartitions) {
        throw new DelayServiceException(
            PartitionCountGuard.changedMessage(
                config.requestsTopic(),
                requestsPartitions,
                stored.getAsInt(),
                "changelog " + changelog));
      }
    }
  }

  /**
   * Refuses a reroute or tenant's request topic whose partition count is not the requests topic's.
   */
  private void requireSamePartitions(String topic, int requestsPartitions, int partitions) {
    if (partitions != requestsPartitions) {
      throw new DelayServiceException(
          String.format(
              "The %s topic %s has %d partitions but the requests topic %s has %d; they must"
                  + " be equal. Delete %s when no request is in flight, and kdelay recreates it"
                  + " with the requests topic's count.",
              topic.equals(config.rerouteTopic()) ? "reroute" : "tenant's request",
              topic,
              partitions,
              config.requestsTopic(),
              requestsPartitions,
              topic));
    }
  }
}

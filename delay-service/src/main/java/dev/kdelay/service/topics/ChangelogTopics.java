package dev.kdelay.service.topics;

import dev.kdelay.service.DelayServiceException;
import dev.kdelay.topology.DelayTopology;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.ApiException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The changelog topics of kdelay's state stores, and the check that those which exist are
 * compacted.
 *
 * <p>A changelog is the durable copy of a store: a restore replays it. Compaction keeps the latest
 * record of every key however old; with {@code cleanup.policy=delete} Kafka drops records older
 * than {@code retention.ms}, and the next restore silently loses the tasks they held (a schedule
 * due in a year outlives a week's retention). Kafka Streams creates the changelogs compacted but
 * never looks at one again, so a policy changed afterwards would go unnoticed: kdelay refuses to
 * start instead.
 *
 * <p>The same goes for {@code delete.retention.ms}, how long compaction keeps a tombstone: the
 * schedule store's tombstones carry the fired and cancel markers that stop a late or replayed
 * request from bringing an id back. Kafka Streams sets it only when it creates the changelog, so
 * raising {@code delay.fired.retention.ms} or {@code delay.cancel.retention.ms} later would leave
 * restored stores without markers the settings promise. kdelay raises it at start; where it may not
 * alter the topic, it says so and starts.
 */
final class ChangelogTopics {

  private static final Logger log = LoggerFactory.getLogger(ChangelogTopics.class);

  private static final List<String> STORES =
      List.of(DelayTopology.SCHEDULES_STORE, DelayTopology.FIRE_SLOTS_STORE);

  private ChangelogTopics() {}

  /**
   * The changelog topic Kafka Streams keeps for a store: {@code
   * <application.id>-<store>-changelog}.
   */
  static String of(String applicationId, String store) {
    return applicationId + "-" + store + "-changelog";
  }

  /** The changelog topics of every store of kdelay's topology. */
  static List<String> all(String applicationId) {
    return STORES.stream().map(store -> of(applicationId, store)).toList();
  }

  /** The changelog topics kdelay's first layout kept, which this version does not read. */
  static List<String> firstLayout(String applicationId) {
    return DelayTopology.FIRST_LAYOUT_STORES.stream()
        .map(store -> of(applicationId, store))
        .toList();
  }

  /**
   * What to say at start when changelogs of the first layout exist: their pending tasks will not
   * fire. Empty if none exist.
   */
  static Optional<String> firstLayoutWarning(Set<String> existing) {
    if (existing.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(
        String.format(
            "topics=%s this kdelay keeps schedules in store '%s' and does not read kdelay's first"
                + " layout: pending tasks in those changelogs will not fire. To upgrade without"
                + " losing them, let the old version fire what is due (until kdelay_tasks_pending"
                + " is 0), then start this one, and delete those topics (see the README,"
                + " \"Upgrading from the two-store layout\")",
            new TreeSet<>(existing), DelayTopology.SCHEDULES_STORE));
  }

  /**
   * Refuses changelogs that are not compacted.
   *
   * @param existing the configs of the changelog topics that exist
   * @param bootstrapServers for the command in the message
   * @throws DelayServiceException naming the first changelog that is not compacted, its policy and
   *     the command that fixes it
   */
  static void requireCompacted(Map<String, Config> existing, String bootstrapServers) {
    existing.forEach(
        (topic, config) -> {
          String policy = cleanupPolicy(config).orElse("");
          if (!isCompacted(policy)) {
            throw new DelayServiceException(
                String.format(
                    "The changelog topic '%s' has cleanup.policy=%s, but a changelog must be"
                        + " compacted: without compact Kafka deletes records older than"
                        + " retention.ms and a restore loses the pending tasks they held. Make it"
                        + " compacted, then start again: kafka-configs --bootstrap-server %s"
                        + " --alter --entity-type topics --entity-name %s --add-config"
                        + " cleanup.policy=compact",
                    topic, policy, bootstrapServers, topic));
          }
        });
  }

  /** Whether a {@code cleanup.policy} value ({@code compact}, {@code compact,delete}) compacts. */
  static boolean isCompacted(String cleanupPolicy) {
    return Arrays.stream(cleanupPolicy.replace("[", "").replace("]", "").split(","))
        .map(String::trim)
        .anyMatch(TopicConfig.CLEANUP_POLICY_COMPACT::equals);
  }

  /**
   * Raises {@code delete.retention.ms} on every existing changelog that keeps tombstones for less
   * than {@code neededMs}; one it may not alter is logged with the command that does it.
   *
   * @param existing the configs of the changelog topics that exist
   */
  static void raiseDeleteRetention(
      Admin admin,
      StartupDeadline deadline,
      Map<String, Config> existing,
      long neededMs,
      String bootstrapServers) {
    existing.forEach(
        (topic, config) -> {
          OptionalLong current = deleteRetentionMs(config);
          if (current.isEmpty() || current.getAsLong() >= neededMs) {
            return;
          }
          ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
          AlterConfigOp raise =
              new AlterConfigOp(
                  new ConfigEntry(TopicConfig.DELETE_RETENTION_MS_CONFIG, Long.toString(neededMs)),
                  AlterConfigOp.OpType.SET);
          try {
            deadline.retry(
                "raise delete.retention.ms of topic '" + topic + "'",
                () -> admin.incrementalAlterConfigs(Map.of(resource, List.of(raise))).all());
            log.info(
                "event=changelog-delete-retention-raised topic={} from={} to={}",
                topic,
                current.getAsLong(),
                neededMs);
          } catch (ApiException e) {
            // Not allowed (or refused by a policy): the service works, with markers kept shorter.
            log.error(
                "event=changelog-delete-retention-short topic={} delete.retention.ms={} needed={}"
                    + " error={} hint=\"markers older than delete.retention.ms are lost at the next"
                    + " restore, so a replayed request could fire a task again; grant AlterConfigs"
                    + " on the topic, or run kafka-configs --bootstrap-server {} --alter"
                    + " --entity-type topics --entity-name {} --add-config"
                    + " delete.retention.ms={}\"",
                topic,
                current.getAsLong(),
                neededMs,
                e.getClass().getSimpleName(),
                bootstrapServers,
                topic,
                neededMs);
          }
        });
  }

  private static OptionalLong deleteRetentionMs(Config config) {
    ConfigEntry entry = config.get(TopicConfig.DELETE_RETENTION_MS_CONFIG);
    return entry == null || entry.value() == null
        ? OptionalLong.empty()
        : OptionalLong.of(Long.parseLong(entry.value().trim()));
  }

  private static Optional<String> cleanupPolicy(Config config) {
    return Optional.ofNullable(config.get(TopicConfig.CLEANUP_POLICY_CONFIG))
        .map(ConfigEntry::value);
  }
}

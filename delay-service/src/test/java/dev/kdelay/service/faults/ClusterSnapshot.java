package dev.kdelay.service.faults;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;

/**
 * What a failure message needs to tell where a request or a fire got stuck: a consumer group's
 * members and committed offsets, the end and last stable offsets of some topics (a last stable
 * offset behind the end is an open transaction holding back {@code read_committed} readers), and
 * the open transactions with the partitions they wrote. Every part is best effort: a part Kafka
 * does not answer in time says so, and the rest is still given.
 */
final class ClusterSnapshot {

  private static final long TIMEOUT_S = 10;

  private ClusterSnapshot() {}

  /** One text block; {@code topics} are those whose offsets are shown. */
  static String of(Admin admin, String group, Collection<String> topics) {
    List<String> parts = new ArrayList<>();
    parts.add(part("group " + group, () -> group(admin, group)));
    parts.add(part("committed offsets", () -> committed(admin, group)));
    parts.add(part("offsets end/stable", () -> offsets(admin, topics)));
    parts.add(part("open transactions", () -> transactions(admin)));
    return String.join("\n", parts);
  }

  @FunctionalInterface
  private interface Part {
    String text() throws Exception;
  }

  private static String part(String name, Part part) {
    try {
      return name + ": " + part.text();
    } catch (Exception e) {
      return name + ": not known (" + e + ")";
    }
  }

  private static String group(Admin admin, String group) throws Exception {
    ConsumerGroupDescription description =
        admin
            .describeConsumerGroups(List.of(group))
            .describedGroups()
            .get(group)
            .get(TIMEOUT_S, TimeUnit.SECONDS);
    return description.groupState()
        + " "
        + description.members().stream()
            .map(
                member ->
                    member.groupInstanceId().orElse(member.consumerId())
                        + "@"
                        + member.host()
                        + "="
                        + member.assignment().topicPartitions().stream()
                            .map(TopicPartition::toString)
                            .sorted()
                            .toList())
            .collect(Collectors.joining("; ", "[", "]"));
  }

  private static String committed(Admin admin, String group) throws Exception {
    Map<TopicPartition, OffsetAndMetadata> offsets =
        admin
            .listConsumerGroupOffsets(group)
            .partitionsToOffsetAndMetadata()
            .get(TIMEOUT_S, TimeUnit.SECONDS);
    Map<String, Long> sorted = new TreeMap<>();
    offsets.forEach(
        (partition, offset) ->
            sorted.put(partition.toString(), offset == null ? -1 : offset.offset()));
    return sorted.toString();
  }

  private static String offsets(Admin admin, Collection<String> topics) throws Exception {
    Set<String> existing = admin.listTopics().names().get(TIMEOUT_S, TimeUnit.SECONDS);
    List<String> shown = topics.stream().filter(existing::contains).toList();
    Map<TopicPartition, OffsetSpec> latest = new TreeMap<>(ClusterSnapshot::compare);
    admin
        .describeTopics(shown)
        .allTopicNames()
        .get(TIMEOUT_S, TimeUnit.SECONDS)
        .forEach(
            (topic, description) ->
                description
                    .partitions()
                    .forEach(
                        p ->
                            latest.put(
                                new TopicPartition(topic, p.partition()), OffsetSpec.latest())));
    Map<TopicPartition, ListOffsetsResultInfo> ends =
        admin.listOffsets(latest).all().get(TIMEOUT_S, TimeUnit.SECONDS);
    Map<TopicPartition, ListOffsetsResultInfo> stable =
        admin
            .listOffsets(latest, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
            .all()
            .get(TIMEOUT_S, TimeUnit.SECONDS);
    Map<String, String> sorted = new TreeMap<>();
    latest
        .keySet()
        .forEach(
            partition ->
                sorted.put(
                    partition.toString(),
                    ends.get(partition).offset() + "/" + stable.get(partition).offset()));
    return sorted.toString();
  }

  private static String transactions(Admin admin) throws Exception {
    Collection<TransactionListing> open =
        admin
            .listTransactions(
                new ListTransactionsOptions().filterStates(List.of(TransactionState.ONGOING)))
            .all()
            .get(TIMEOUT_S, TimeUnit.SECONDS);
    if (open.isEmpty()) {
      return "none";
    }
    Map<String, TransactionDescription> described =
        admin
            .describeTransactions(open.stream().map(TransactionListing::transactionalId).toList())
            .all()
            .get(TIMEOUT_S, TimeUnit.SECONDS);
    long now = System.currentTimeMillis();
    return described.entrySet().stream()
        .map(
            entry ->
                entry.getKey()
                    + " "
                    + entry.getValue().state()
                    + " for "
                    + entry.getValue().transactionStartTimeMs().stream()
                        .map(started -> now - started)
                        .mapToObj(Long::toString)
                        .findFirst()
                        .orElse("?")
                    + " ms "
                    + entry.getValue().topicPartitions().stream()
                        .map(TopicPartition::toString)
                        .sorted()
                        .toList())
        .collect(Collectors.joining("; "));
  }

  private static int compare(TopicPartition a, TopicPartition b) {
    int byTopic = a.topic().compareTo(b.topic());
    return byTopic != 0 ? byTopic : Integer.compare(a.partition(), b.partition());
  }
}

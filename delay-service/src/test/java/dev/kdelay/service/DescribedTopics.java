package dev.kdelay.service;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;

/** What integration tests read about topics on the test cluster: replication and configs. */
public final class DescribedTopics implements AutoCloseable {

  private final Admin admin;

  public DescribedTopics(KafkaTestCluster kafka) {
    this.admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()));
  }

  public Admin admin() {
    return admin;
  }

  /** The replicas per partition of the topic, asserting every partition has as many. */
  public int replicationFactor(String topic) throws Exception {
    TopicDescription description =
        admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic);
    List<Integer> sizes =
        description.partitions().stream()
            .map(TopicPartitionInfo::replicas)
            .map(List::size)
            .distinct()
            .toList();
    assertThat(sizes).as("replicas per partition of " + topic).hasSize(1);
    return sizes.get(0);
  }

  /** The value of one of the topic's configs, as the broker reports it. */
  public String config(String topic, String name) throws Exception {
    ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
    Config config =
        admin.describeConfigs(List.of(resource)).all().get(30, TimeUnit.SECONDS).get(resource);
    return config.get(name).value();
  }

  @Override
  public void close() {
    admin.close();
  }
}

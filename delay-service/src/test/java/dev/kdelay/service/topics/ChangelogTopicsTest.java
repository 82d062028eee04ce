package dev.kdelay.service.topics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.service.DelayServiceException;
import dev.kdelay.topology.DelayConfig;
import dev.kdelay.topology.DelayTopology;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.streams.TopologyDescription;
import org.junit.jupiter.api.Test;

class ChangelogTopicsTest {

  @Test
  void shouldNameChangelogsAsKafkaStreamsDoes() {
    assertThat(ChangelogTopics.all("kdelay"))
        .containsExactly(
            "kdelay-delay-schedules-v2-changelog", "kdelay-delay-fire-slots-changelog");
  }

  @Test
  void shouldNameTheChangelogOfEveryStoreOfTheTopology() {
    // a store added to the topology without its changelog here would go unchecked
    Set<String> stores = new TreeSet<>();
    DelayTopology.build(new DelayConfig(Map.of()))
        .describe()
        .subtopologies()
        .forEach(
            subtopology ->
                subtopology.nodes().stream()
                    .filter(node -> node instanceof TopologyDescription.Processor)
                    .forEach(
                        node -> stores.addAll(((TopologyDescription.Processor) node).stores())));

    assertThat(stores).isNotEmpty();
    assertThat(ChangelogTopics.all("kdelay"))
        .containsExactlyInAnyOrderElementsOf(
            stores.stream().map(store -> "kdelay-" + store + "-changelog").toList());
  }

  @Test
  void shouldTakeAPolicyAsCompactedWhenItIncludesCompact() {
    assertThat(ChangelogTopics.isCompacted("compact")).isTrue();
    assertThat(ChangelogTopics.isCompacted("compact,delete")).isTrue();
    assertThat(ChangelogTopics.isCompacted("delete, compact")).isTrue();
    assertThat(ChangelogTopics.isCompacted("delete")).isFalse();
    assertThat(ChangelogTopics.isCompacted("")).isFalse();
  }

  @Test
  void shouldRefuseNamingTopicPolicyAndFixWhenAChangelogIsNotCompacted() {
    Map<String, Config> existing = Map.of("app-delay-tasks-changelog", policy("delete"));

    assertThatThrownBy(() -> ChangelogTopics.requireCompacted(existing, "broker:9092"))
        .isInstanceOf(DelayServiceException.class)
        .hasMessageContaining("'app-delay-tasks-changelog'")
        .hasMessageContaining("cleanup.policy=delete")
        .hasMessageContaining(
            "kafka-configs --bootstrap-server broker:9092 --alter --entity-type topics"
                + " --entity-name app-delay-tasks-changelog --add-config cleanup.policy=compact");
  }

  @Test
  void shouldAcceptChangelogsWhenCompacted() {
    Map<String, Config> existing = Map.of("app-delay-tasks-changelog", policy("compact"));

    assertThatCode(() -> ChangelogTopics.requireCompacted(existing, "broker:9092"))
        .doesNotThrowAnyException();
  }

  private static Config policy(String value) {
    return new Config(List.of(new ConfigEntry("cleanup.policy", value)));
  }
}

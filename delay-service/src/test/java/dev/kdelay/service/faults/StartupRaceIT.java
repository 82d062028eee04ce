package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.service.KafkaClusterExtension;
import dev.kdelay.service.KafkaTestCluster;
import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.topology.DelayConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A first start on a cluster where kdelay's topics do not exist yet: kdelay creates them and starts
 * Kafka Streams at once. Every start must reach RUNNING promptly with the stream thread it started
 * with.
 *
 * <p>A regression test: before kdelay waited for its new topics to have leaders, a first rebalance
 * could find the reroute topic missing from the broker's metadata ({@code
 * MissingSourceTopicException}); the replaced stream thread then waited out the dead member's
 * session timeout, and the instance ran after 46 s. It was timing-dependent, so a pass here is
 * evidence, not proof.
 */
@ExtendWith(KafkaClusterExtension.class)
class StartupRaceIT {

  private static final int ATTEMPTS = 4;
  private static final Duration PROMPT = Duration.ofSeconds(20);

  @TempDir Path stateDir;

  @Test
  @Tag("integration")
  void shouldRunPromptlyWithItsFirstStreamThreadWhenItCreatesItsOwnTopics(KafkaTestCluster kafka)
      throws Exception {
    List<String> starts = new ArrayList<>();
    startRepeatedly(kafka, starts);
    System.out.println("FAULTS startup on fresh topics: " + starts);
  }

  private void startRepeatedly(KafkaTestCluster kafka, List<String> starts) throws Exception {
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
      // given: topic names nobody has created
      String name = "startup-" + attempt;
      ServiceConfig config = config(kafka.bootstrapServers(), name);

      // when
      long started = System.nanoTime();
      try (InProcessService service = InProcessService.start(config, Duration.ofMinutes(2))) {
        long runningMs = (System.nanoTime() - started) / 1_000_000;
        starts.add(
            name
                + ": RUNNING in "
                + runningMs
                + " ms, replaced threads "
                + service.replacementThreads());

        // then
        assertThat(service.replacementThreads()).as(starts.toString()).isEmpty();
        assertThat(Duration.ofMillis(runningMs)).as(starts.toString()).isLessThan(PROMPT);
      }
    }
  }

  private ServiceConfig config(String bootstrap, String name) {
    Map<String, Object> props = new HashMap<>();
    props.put(DelayConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(DelayConfig.APPLICATION_ID_CONFIG, "faults-" + name);
    props.put(DelayConfig.STATE_DIR_CONFIG, stateDir.resolve(name).toString());
    props.put(DelayConfig.REQUESTS_TOPIC_CONFIG, name + "-requests");
    props.put(DelayConfig.DLQ_TOPIC_CONFIG, name + "-dlq");
    props.put(ServiceConfig.TOPIC_PARTITIONS_CONFIG, 2);
    props.put(ServiceConfig.TOPIC_REPLICATION_FACTOR_CONFIG, (short) 1);
    props.put(ServiceConfig.HTTP_PORT_CONFIG, 0);
    return new ServiceConfig(props);
  }
}

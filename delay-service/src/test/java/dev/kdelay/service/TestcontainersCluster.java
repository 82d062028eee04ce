package dev.kdelay.service;

import org.testcontainers.DockerClientFactory;
import org.testcontainers.kafka.KafkaContainer;
import org.testcontainers.utility.DockerImageName;

/** Apache Kafka's official image in Docker, through Testcontainers. */
final class TestcontainersCluster implements KafkaTestCluster {

  /** Image to run; {@code -Dkdelay.test.kafka.image=...} picks another. */
  static final String IMAGE = System.getProperty("kdelay.test.kafka.image", "apache/kafka:4.1.0");

  private final KafkaContainer container;

  private TestcontainersCluster(KafkaContainer container) {
    this.container = container;
  }

  static boolean dockerAvailable() {
    return DockerClientFactory.instance().isDockerAvailable();
  }

  static TestcontainersCluster start() {
    KafkaContainer container =
        new KafkaContainer(DockerImageName.parse(IMAGE))
            .withEnv("KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR", "1")
            .withEnv("KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR", "1")
            .withEnv("KAFKA_TRANSACTION_STATE_LOG_MIN_ISR", "1")
            .withEnv("KAFKA_MIN_INSYNC_REPLICAS", "1")
            .withEnv("KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS", "0")
            // Fast failover, as kdelay's README asks of a broker (see KraftTestKitCluster).
            .withEnv("KAFKA_TRANSACTION_ABORT_TIMED_OUT_TRANSACTION_CLEANUP_INTERVAL_MS", "1000")
            .withEnv("KAFKA_GROUP_MIN_SESSION_TIMEOUT_MS", "3000");
    container.start();
    return new TestcontainersCluster(container);
  }

  @Override
  public String bootstrapServers() {
    return container.getBootstrapServers();
  }

  @Override
  public void close() {
    container.stop();
  }
}

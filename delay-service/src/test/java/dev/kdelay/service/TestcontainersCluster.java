package dev.kdelay.service;

import java.util.Locale;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.kafka.KafkaContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * Apache Kafka's official image in Docker, through Testcontainers, with the tests' {@link
 * BrokerProfile}.
 */
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
    KafkaContainer container = new KafkaContainer(DockerImageName.parse(IMAGE));
    // The image reads KAFKA_<SETTING> variables: log.dirs becomes KAFKA_LOG_DIRS.
    BrokerProfile.forTests()
        .settings()
        .forEach(
            (key, value) ->
                container.withEnv(
                    "KAFKA_" + key.toUpperCase(Locale.ROOT).replace('.', '_'), value));
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

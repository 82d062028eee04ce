package dev.kdelay.service;

import dev.kdelay.service.broker.BrokerProfile;
import java.util.Locale;
import org.junit.jupiter.api.Assumptions;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.kafka.KafkaContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * Apache Kafka's official image in a container, through Testcontainers, with the tests' {@link
 * BrokerProfile}.
 *
 * <p>The image is {@code apache/kafka} unless {@code -Dkdelay.test.kafka.image=...} or the
 * environment variable {@code KDELAY_TEST_KAFKA_IMAGE} names another that starts the same way
 * ({@code KAFKA_*} variables, {@code /etc/kafka/docker/run}): CI, which reaches no registry, builds
 * one with {@code .ci/containers.sh}. The engine is whatever Testcontainers finds ({@code
 * DOCKER_HOST}, e.g. podman's Docker API socket).
 */
final class TestcontainersCluster implements KafkaTestCluster {

  /** Image to run. */
  static final String IMAGE =
      System.getProperty(
          "kdelay.test.kafka.image",
          System.getenv().getOrDefault("KDELAY_TEST_KAFKA_IMAGE", "apache/kafka:4.1.0"));

  /** What a developer without a container engine runs to get one (Debian, as root). */
  static final String INSTALL =
      "sudo bash .ci/containers.sh && source <(bash .ci/containers.sh env)";

  private final KafkaContainer container;

  private TestcontainersCluster(KafkaContainer container) {
    this.container = container;
  }

  static boolean dockerAvailable() {
    return DockerClientFactory.instance().isDockerAvailable();
  }

  /**
   * Skips the calling test when no container engine is reachable, naming the command that installs
   * one; fails it instead under CI (the {@code CI} environment variable set), where a skipped
   * container test would pass a run that tested nothing.
   */
  static void assumeEngine() {
    if (dockerAvailable()) {
      return;
    }
    String message =
        "no container engine reachable (DOCKER_HOST="
            + System.getenv("DOCKER_HOST")
            + "); install and start one with: "
            + INSTALL;
    if (System.getenv("CI") != null) {
      throw new AssertionError("CI is set, so container tests may not skip: " + message);
    }
    Assumptions.abort(message);
  }

  static TestcontainersCluster start() {
    KafkaContainer container =
        new KafkaContainer(DockerImageName.parse(IMAGE).asCompatibleSubstituteFor("apache/kafka"));
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

package dev.kdelay.service;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Starts one Kafka cluster for the whole test run and hands it to the tests that use this
 * extension, as a {@link KafkaTestCluster} parameter or through {@link #bootstrapServers()}.
 *
 * <p>By default the cluster is Kafka's in-JVM KRaft test kit ({@link KraftTestKitCluster}), which
 * needs nothing but the JVM. With {@code -Dkdelay.test.cluster=testcontainers} (or the environment
 * variable {@code KDELAY_TEST_CLUSTER=testcontainers}) it is Apache Kafka's image in a container
 * through Testcontainers ({@link TestcontainersCluster}); asking for that where no Docker engine is
 * reachable fails the tests with a message saying so, rather than skipping them, so that a run that
 * was meant to use Docker never passes without testing.
 *
 * <p>The cluster lives in the root context's store, so JUnit closes it once, after the last test.
 *
 * <pre>{@code
 * @ExtendWith(KafkaClusterExtension.class)
 * class SomethingIT {
 *   @Test
 *   void shouldWork(KafkaTestCluster kafka) {
 *     Admin.create(Map.of("bootstrap.servers", kafka.bootstrapServers()));
 *   }
 * }
 * }</pre>
 */
public final class KafkaClusterExtension implements BeforeAllCallback, ParameterResolver {

  /** System property that picks the cluster: {@code kraft} (default) or {@code testcontainers}. */
  public static final String CLUSTER_PROPERTY = "kdelay.test.cluster";

  /** Environment variable read when the system property is not set. */
  public static final String CLUSTER_VARIABLE = "KDELAY_TEST_CLUSTER";

  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(KafkaClusterExtension.class);

  private static volatile KafkaTestCluster started;

  @Override
  public void beforeAll(ExtensionContext context) {
    cluster(context);
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == KafkaTestCluster.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    return cluster(context);
  }

  /**
   * The bootstrap servers of the cluster, for code that has no parameter to receive it.
   *
   * @throws IllegalStateException if no test class using this extension has started yet
   */
  public static String bootstrapServers() {
    KafkaTestCluster cluster = started;
    if (cluster == null) {
      throw new IllegalStateException(
          "no Kafka cluster: annotate the test class with @ExtendWith(KafkaClusterExtension.class)");
    }
    return cluster.bootstrapServers();
  }

  private static KafkaTestCluster cluster(ExtensionContext context) {
    KafkaTestCluster cluster =
        context
            .getRoot()
            .getStore(NAMESPACE)
            .getOrComputeIfAbsent(KafkaTestCluster.class, type -> start(), KafkaTestCluster.class);
    started = cluster;
    return cluster;
  }

  private static KafkaTestCluster start() {
    String kind =
        System.getProperty(
            CLUSTER_PROPERTY, System.getenv().getOrDefault(CLUSTER_VARIABLE, "kraft"));
    try {
      switch (kind) {
        case "kraft":
          return KraftTestKitCluster.start();
        case "testcontainers":
          if (!TestcontainersCluster.dockerAvailable()) {
            throw new ExtensionConfigurationException(
                "-D"
                    + CLUSTER_PROPERTY
                    + "=testcontainers needs a container engine and none is reachable. Start one"
                    + " ("
                    + TestcontainersCluster.INSTALL
                    + "), or drop the property to run against Kafka's in-JVM KRaft test kit.");
          }
          return TestcontainersCluster.start();
        default:
          throw new ExtensionConfigurationException(
              "-D" + CLUSTER_PROPERTY + "=" + kind + ": expected kraft or testcontainers");
      }
    } catch (ExtensionConfigurationException e) {
      throw e;
    } catch (Exception e) {
      throw new ExtensionConfigurationException("Cannot start the Kafka test cluster: " + e, e);
    }
  }
}

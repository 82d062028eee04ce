package dev.kdelay.service;

import dev.kdelay.service.broker.BrokerProfile;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.test.JaasUtils;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;

/**
 * One combined broker+controller KRaft node in this JVM, from Kafka's own test kit: real Apache
 * Kafka, no Docker needed. Its settings are the tests' {@link BrokerProfile} ({@code
 * -Dkdelay.broker.profile}): Apache Kafka's defaults unless told otherwise, beyond what one node
 * needs.
 */
public final class KraftTestKitCluster implements KafkaTestCluster {

  private final KafkaClusterTestKit cluster;

  private KraftTestKitCluster(KafkaClusterTestKit cluster) {
    this.cluster = cluster;
  }

  static KraftTestKitCluster start() throws Exception {
    return start(1, Map.of());
  }

  /**
   * A cluster of {@code brokers} brokers, one of them also the controller, for a test that needs
   * replication; its internal topics keep one replica as the single-node cluster's do.
   */
  static KraftTestKitCluster start(int brokers) throws Exception {
    return start(brokers, Map.of());
  }

  /**
   * A cluster with Kafka's ACL authorizer: every principal may do anything no ACL speaks of, so a
   * test denies what it wants denied (say, WRITE on one topic for {@code User:ANONYMOUS}, the
   * principal of every PLAINTEXT client).
   */
  public static KraftTestKitCluster startWithAuthorizer() throws Exception {
    return start(
        1,
        Map.of(
            "authorizer.class.name",
            "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "allow.everyone.if.no.acl.found",
            "true"));
  }

  /** The user of {@link #startWithSasl()} that may do anything (a super user). */
  public static final String SASL_USER = JaasUtils.KAFKA_PLAIN_ADMIN;

  /** The password of {@link #SASL_USER}. */
  public static final String SASL_PASSWORD = JaasUtils.KAFKA_PLAIN_ADMIN_PASSWORD;

  /**
   * A cluster whose broker listener requires SASL/PLAIN ({@code SASL_PLAINTEXT}); the controller
   * listener stays PLAINTEXT. The test kit sets up the rest: users {@value #SASL_USER} (a super
   * user) and {@code plain-user1} in a JAAS file it points {@code java.security.auth.login.config}
   * at, and Kafka's ACL authorizer, which denies whatever no ACL allows to anyone but a super user.
   *
   * <p>Clients connect with {@code security.protocol=SASL_PLAINTEXT}, {@code sasl.mechanism=PLAIN}
   * and {@code sasl.jaas.config=}{@link #plainJaasConfig}{@code (SASL_USER, SASL_PASSWORD)}.
   */
  public static KraftTestKitCluster startWithSasl() throws Exception {
    return start(
        1,
        // The broker reaches the controller over the PLAINTEXT listener as User:ANONYMOUS, and
        // its heartbeats need CLUSTER_ACTION. No client is ANONYMOUS: the only other listener
        // requires SASL.
        Map.of("super.users", "User:" + SASL_USER + ";User:ANONYMOUS"),
        nodes -> nodes.setBrokerSecurityProtocol(SecurityProtocol.SASL_PLAINTEXT));
  }

  /**
   * The same as {@link #startWithSasl()}, with more SASL/PLAIN users beside {@value #SASL_USER}:
   * principals {@code User:<name>} with no right but what ACLs give them.
   *
   * @param users each user's password, by name
   */
  public static KraftTestKitCluster startWithSasl(Map<String, String> users) throws Exception {
    StringBuilder jaas =
        new StringBuilder(
            "org.apache.kafka.common.security.plain.PlainLoginModule required username=\""
                + SASL_USER
                + "\" password=\""
                + SASL_PASSWORD
                + "\" user_"
                + SASL_USER
                + "=\""
                + SASL_PASSWORD
                + "\"");
    users.forEach((user, password) -> jaas.append(" user_" + user + "=\"" + password + "\""));
    jaas.append(';');
    return start(
        1,
        Map.of(
            "super.users",
            "User:" + SASL_USER + ";User:ANONYMOUS",
            "listener.name.external.plain.sasl.jaas.config",
            jaas.toString()),
        nodes -> nodes.setBrokerSecurityProtocol(SecurityProtocol.SASL_PLAINTEXT));
  }

  /** The {@code sasl.jaas.config} of a SASL/PLAIN client. */
  public static String plainJaasConfig(String user, String password) {
    return "org.apache.kafka.common.security.plain.PlainLoginModule required username=\""
        + user
        + "\" password=\""
        + password
        + "\";";
  }

  private static KraftTestKitCluster start(int brokers, Map<String, String> extra)
      throws Exception {
    return start(brokers, extra, UnaryOperator.identity());
  }

  private static KraftTestKitCluster start(
      int brokers, Map<String, String> extra, UnaryOperator<TestKitNodes.Builder> listeners)
      throws Exception {
    TestKitNodes nodes =
        listeners
            .apply(
                new TestKitNodes.Builder()
                    .setCombined(true)
                    .setNumBrokerNodes(brokers)
                    .setNumControllerNodes(1))
            .build();
    KafkaClusterTestKit.Builder builder = new KafkaClusterTestKit.Builder(nodes);
    BrokerProfile.forTests().settings().forEach(builder::setConfigProp);
    extra.forEach(builder::setConfigProp);
    KafkaClusterTestKit cluster = builder.build();
    try {
      cluster.format();
      cluster.startup();
      cluster.waitForReadyBrokers();
    } catch (Exception e) {
      cluster.close();
      throw e;
    }
    return new KraftTestKitCluster(cluster);
  }

  @Override
  public String bootstrapServers() {
    return cluster.bootstrapServers();
  }

  @Override
  public void close() throws Exception {
    cluster.close();
  }
}

package dev.kdelay.service.cli;

import dev.kdelay.schemas.TenantIds;
import dev.kdelay.service.config.ClientProperties;
import dev.kdelay.service.config.ConfigSources;
import dev.kdelay.topology.DelayConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.KafkaException;

/**
 * What the CLI commands ({@code schedule}, {@code cancel}, {@code watch}) need to reach kdelay:
 * Kafka's address, the requests topic, and the pass-through Kafka properties (TLS, SASL) of the
 * configuration.
 *
 * @param bootstrapServers {@code --bootstrap-servers}, else the configuration's ({@code
 *     DELAY_BOOTSTRAP_SERVERS}), else {@value #DEFAULT_BOOTSTRAP_SERVERS}
 * @param requestsTopic {@code --requests-topic}, else the configuration's
 * @param tenant {@code --tenant}: the tenant a command acts as, empty for the shared topic's
 * @param config the configuration from {@code --config FILE} and the environment
 */
public record ClientOptions(
    String bootstrapServers, String requestsTopic, String tenant, DelayConfig config) {

  /** Where the embedded broker of {@code kdelay run} listens. */
  static final String DEFAULT_BOOTSTRAP_SERVERS = "127.0.0.1:9092";

  /** The options every client command takes. */
  static final Set<String> OPTIONS = Set.of("--bootstrap-servers", "--requests-topic", "--config");

  /**
   * The option of the commands a tenant runs with its own credentials ({@code schedule}, the id
   * commands, {@code dlq}): they use the tenant's request and dead-letter topics.
   */
  static final String TENANT = "--tenant";

  private static final Duration ACK_TIMEOUT = Duration.ofSeconds(60);

  /**
   * Reads the client options.
   *
   * @param line the command line
   * @param environment the process environment
   * @throws org.apache.kafka.common.config.ConfigException if the configuration is invalid
   */
  public static ClientOptions from(CommandLine line, Map<String, String> environment) {
    DelayConfig config =
        ConfigSources.load(line.option("--config").map(Path::of), environment).delay();
    String bootstrapServers =
        line.option("--bootstrap-servers")
            .orElse(
                config.bootstrapServers().isBlank()
                    ? DEFAULT_BOOTSTRAP_SERVERS
                    : config.bootstrapServers());
    String requestsTopic = line.option("--requests-topic").orElse(config.requestsTopic());
    String tenant = line.option(TENANT).orElse("");
    if (!tenant.isEmpty() && !TenantIds.NAME.matcher(tenant).matches()) {
      throw new UsageException(
          "--tenant is a tenant's name: 1 to 32 lowercase letters and digits, got '"
              + tenant
              + "'");
    }
    return new ClientOptions(bootstrapServers, requestsTopic, tenant, config);
  }

  /** Where requests go: the tenant's own request topic, or the shared one. */
  String requestsTopicToWrite() {
    return tenant.isEmpty() ? requestsTopic : requestsTopic + "." + tenant;
  }

  /** The dead-letter topic the command reads: the tenant's own, or the shared one. */
  String dlqTopic() {
    return tenant.isEmpty() ? config.dlqTopic() : config.dlqTopic() + "." + tenant;
  }

  /**
   * Producer properties; fails fast when Kafka cannot be reached, instead of the minute default.
   */
  Map<String, Object> producerProperties() {
    Map<String, Object> props =
        ClientProperties.of(config, bootstrapServers, ClientProperties.Kind.PRODUCER);
    props.putIfAbsent(ProducerConfig.MAX_BLOCK_MS_CONFIG, 15_000);
    return props;
  }

  /** Admin client properties. */
  Map<String, Object> adminProperties() {
    return ClientProperties.of(config, bootstrapServers, ClientProperties.Kind.ADMIN);
  }

  /** Consumer properties, without group or deserializers. */
  Map<String, Object> consumerProperties() {
    return ClientProperties.of(config, bootstrapServers, ClientProperties.Kind.CONSUMER);
  }

  /**
   * Waits for the broker to acknowledge a request.
   *
   * @param ack the send's future
   * @param what what was sent, for the error message
   * @throws KafkaException if the send failed or was not acknowledged in time
   */
  static <T> T awaitAck(Future<T> ack, String what) {
    try {
      return ack.get(ACK_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw new KafkaException(what + " failed: " + e.getCause(), e.getCause());
    } catch (TimeoutException e) {
      throw new KafkaException(
          what + " was not acknowledged within " + ACK_TIMEOUT.toSeconds() + " s", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new KafkaException(what + " was interrupted", e);
    }
  }
}

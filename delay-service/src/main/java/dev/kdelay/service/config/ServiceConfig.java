package dev.kdelay.service.config;

import static org.apache.kafka.common.config.ConfigDef.Range.atLeast;
import static org.apache.kafka.common.config.ConfigDef.Range.between;

import dev.kdelay.topology.DelayConfig;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.types.Password;

/**
 * Configuration of the service: the settings only the service has (its HTTP endpoints, the embedded
 * broker, the topics it creates), and the topology's {@link DelayConfig}, read from the same keys.
 *
 * <p>Every {@code delay.*} key belongs to one of the two; a key neither knows is refused. Kafka
 * properties (every key outside {@code delay.}) go to the topology's configuration, which passes
 * them to every client.
 */
public final class ServiceConfig extends AbstractConfig {

  public static final String HTTP_PORT_CONFIG = "delay.http.port";
  private static final String HTTP_PORT_DOC =
      "Port of the service's HTTP endpoints; 0 disables them.";

  public static final String HTTP_ADVERTISED_HOST_CONFIG = "delay.http.advertised.host";
  private static final String HTTP_ADVERTISED_HOST_DOC =
      "Host name other instances reach this one's HTTP port at; with the port it is the Kafka"
          + " Streams application.server, through which any instance answers for a schedule"
          + " another holds. Empty: this machine's host name.";

  public static final String HTTP_BIND_ADDRESS_CONFIG = "delay.http.bind.address";
  private static final String HTTP_BIND_ADDRESS_DOC =
      "Address the HTTP endpoints listen on. The default, 127.0.0.1, serves this machine only;"
          + " any other address (0.0.0.0 for every interface) requires"
          + " delay.http.auth.tokens.file, unless delay.http.auth.required is false.";

  public static final String HTTP_AUTH_REQUIRED_CONFIG = "delay.http.auth.required";
  private static final String HTTP_AUTH_REQUIRED_DOC =
      "Whether an HTTP endpoint bound to an address other than loopback must have tokens"
          + " (delay.http.auth.tokens.file). false lets it serve anyone who reaches it, which"
          + " only makes sense behind a proxy that authenticates.";

  public static final String HTTP_AUTH_TOKENS_FILE_CONFIG = "delay.http.auth.tokens.file";
  private static final String HTTP_AUTH_TOKENS_FILE_DOC =
      "File of bearer tokens the HTTP API accepts, one 'ROLE TOKEN' per line: role read (GET"
          + " routes), write (every route) or peer (GET routes, what instances forward reads"
          + " with; at least one, in plain text); the token as is (at least 24 characters) or as"
          + " sha256:<hex> of it. Lines starting with # and blank lines are skipped. Empty: no"
          + " tokens, every caller is served.";

  public static final String HTTP_AUTH_METRICS_CONFIG = "delay.http.auth.metrics";
  private static final String HTTP_AUTH_METRICS_DOC =
      "Whether GET /metrics needs a token (read or write) when tokens are configured; /health/*"
          + " never does.";

  public static final String HTTP_ALLOWED_ORIGINS_CONFIG = "delay.http.allowed.origins";
  private static final String HTTP_ALLOWED_ORIGINS_DOC =
      "Origins (scheme://host[:port]) whose browser pages may change state through the HTTP"
          + " API. A POST or DELETE with any other Origin header is refused (403). Empty: none.";

  public static final String EMBEDDED_DATA_DIR_CONFIG = "delay.embedded.data.dir";
  private static final String EMBEDDED_DATA_DIR_DOC =
      "Data directory of the embedded broker started when no bootstrap servers are given.";

  public static final String TOPIC_PARTITIONS_CONFIG = "delay.topic.partitions";
  private static final String TOPIC_PARTITIONS_DOC =
      "Partitions of the requests, reroute and dead-letter topics when the service creates them.";

  public static final String TOPIC_REPLICATION_FACTOR_CONFIG = "delay.topic.replication.factor";
  private static final String TOPIC_REPLICATION_FACTOR_DOC =
      "Replication factor of the topics the service creates and of Kafka Streams' changelogs."
          + " Unset: min(3, brokers in the cluster). -1: the broker's default.replication.factor.";

  public static final String TOPIC_MIN_INSYNC_REPLICAS_CONFIG = "delay.topic.min.insync.replicas";
  private static final String TOPIC_MIN_INSYNC_REPLICAS_DOC =
      "min.insync.replicas of the topics the service creates and of Kafka Streams' changelogs;"
          + " at most the replication factor. Unset: min(2, replication factor), or the broker's"
          + " default when the replication factor is the broker's.";

  public static final String DLQ_RETENTION_CONFIG = "delay.dlq.retention.ms";
  private static final String DLQ_RETENTION_DOC =
      "retention.ms of the dead-letter topic when the service creates it; -1 keeps dead letters"
          + " forever. An existing dead-letter topic is never altered: a shorter retention there"
          + " is logged as a warning.";

  public static final String TOPIC_READY_TIMEOUT_CONFIG = "delay.topic.ready.timeout.ms";
  private static final String TOPIC_READY_TIMEOUT_DOC =
      "How long a start waits for its topics to be usable: created (by this instance or by"
          + " another starting at the same moment) and in the brokers' metadata with a leader for"
          + " every partition. Transient errors are retried until then.";

  public static final String HTTP_ALLOWED_HOSTS_CONFIG = "delay.http.allowed.hosts";
  private static final String HTTP_ALLOWED_HOSTS_DOC =
      "Host names, besides localhost and the advertised host, that requests may be addressed to"
          + " (their Host header) when no tokens are configured. Requests addressed to any other"
          + " name are refused (403), so that a web page of a site whose name resolves to this"
          + " machine (DNS rebinding) cannot use the API; an address is always accepted.";

  public static final String HTTP_PEER_HOSTS_CONFIG = "delay.http.peer.hosts";
  private static final String HTTP_PEER_HOSTS_DOC =
      "The hosts, as instances advertise them (delay.http.advertised.host), that an instance"
          + " forwards reads to. A read that needs an instance advertised under another host is"
          + " answered 503 and nothing is sent there, so that a member of the application's group"
          + " that advertises a host of its own receives neither the request nor the peer token."
          + " Empty: every instance the group's metadata names.";

  public static final String HTTP_READ_TIMEOUT_CONFIG = "delay.http.read.timeout.ms";
  private static final String HTTP_READ_TIMEOUT_DOC =
      "The longest an HTTP client may take to send a request's line and headers, and then its"
          + " body. A connection still sending its headers after this is closed; a body still"
          + " arriving is answered 408.";

  public static final String WARMUP_TASKS_CONFIG = "delay.warmup.tasks";
  private static final String WARMUP_TASKS_DOC =
      "How many synthetic tasks the instance takes in and fires through its own topology,"
          + " without Kafka, before it reports ready, so that its first real fires run"
          + " compiled code: a fresh JVM drained a burst two to four times slower than a warm one."
          + " Runs once per JVM, while Kafka Streams joins the group and restores, in two passes:"
          + " these tasks, then a quarter as many once the JIT compilers are quiet, so that the"
          + " compiled fire path was profiled firing. 0: off.";

  public static final String FAILOVER_PEER_CHECK_CONFIG = "delay.failover.peer.check.ms";
  private static final String FAILOVER_PEER_CHECK_DOC =
      "How often each instance connects to the HTTP endpoints the others advertise. An instance"
          + " whose endpoint refuses two connections in a row (its process is gone) is removed from"
          + " the group at once, so that its tasks move within about a second of a kill -9 rather"
          + " than after the session timeout, which a broker with default settings keeps at 6 s or"
          + " more. Needs the HTTP endpoint (delay.http.port not 0), an advertised address the"
          + " other instances reach, and static membership, which kdelay then sets up itself"
          + " (group.instance.id, unless one is passed through). 0: off.";

  public static final String HTTP_TLS_KEYSTORE_FILE_CONFIG = "delay.http.tls.keystore.file";
  private static final String HTTP_TLS_KEYSTORE_FILE_DOC =
      "PKCS12 keystore with the private key and certificate chain the HTTP endpoints serve HTTPS"
          + " with. Empty: plain HTTP. Instances of one deployment must agree: they call each"
          + " other over HTTPS when they serve it.";

  public static final String HTTP_TLS_KEYSTORE_PASSWORD_CONFIG = "delay.http.tls.keystore.password";
  private static final String HTTP_TLS_KEYSTORE_PASSWORD_DOC =
      "Password of the keystore, and of its key.";

  public static final String HTTP_TLS_TRUSTSTORE_FILE_CONFIG = "delay.http.tls.truststore.file";
  private static final String HTTP_TLS_TRUSTSTORE_FILE_DOC =
      "PKCS12 file of the certificates an instance trusts when it calls another over HTTPS."
          + " Empty: its own certificate only, pinned, so that instances sharing a keystore trust"
          + " each other and nobody else, not even other certificates of the authority that signed"
          + " theirs. Instances with certificates of their own need a truststore.";

  public static final String HTTP_TLS_TRUSTSTORE_PASSWORD_CONFIG =
      "delay.http.tls.truststore.password";
  private static final String HTTP_TLS_TRUSTSTORE_PASSWORD_DOC = "Password of the truststore.";

  private static final ConfigDef SERVICE_DEF =
      new ConfigDef()
          .define(
              HTTP_PORT_CONFIG, Type.INT, 8080, between(0, 65535), Importance.MEDIUM, HTTP_PORT_DOC)
          .define(
              HTTP_ADVERTISED_HOST_CONFIG,
              Type.STRING,
              "",
              Importance.MEDIUM,
              HTTP_ADVERTISED_HOST_DOC)
          .define(
              HTTP_BIND_ADDRESS_CONFIG,
              Type.STRING,
              "127.0.0.1",
              new ConfigDef.NonEmptyString(),
              Importance.HIGH,
              HTTP_BIND_ADDRESS_DOC)
          .define(
              HTTP_AUTH_REQUIRED_CONFIG,
              Type.BOOLEAN,
              true,
              Importance.HIGH,
              HTTP_AUTH_REQUIRED_DOC)
          .define(
              HTTP_AUTH_TOKENS_FILE_CONFIG,
              Type.STRING,
              "",
              Importance.HIGH,
              HTTP_AUTH_TOKENS_FILE_DOC)
          .define(
              HTTP_AUTH_METRICS_CONFIG,
              Type.BOOLEAN,
              false,
              Importance.MEDIUM,
              HTTP_AUTH_METRICS_DOC)
          .define(
              HTTP_ALLOWED_ORIGINS_CONFIG,
              Type.LIST,
              "",
              Importance.MEDIUM,
              HTTP_ALLOWED_ORIGINS_DOC)
          .define(
              EMBEDDED_DATA_DIR_CONFIG,
              Type.STRING,
              "data/kafka",
              Importance.LOW,
              EMBEDDED_DATA_DIR_DOC)
          .define(
              TOPIC_PARTITIONS_CONFIG,
              Type.INT,
              6,
              atLeast(1),
              Importance.MEDIUM,
              TOPIC_PARTITIONS_DOC)
          .define(
              TOPIC_REPLICATION_FACTOR_CONFIG,
              Type.SHORT,
              null,
              optional(between(-1, Short.MAX_VALUE), "-1 (the broker default) or 1 to 32767"),
              Importance.MEDIUM,
              TOPIC_REPLICATION_FACTOR_DOC)
          .define(
              TOPIC_MIN_INSYNC_REPLICAS_CONFIG,
              Type.INT,
              null,
              optional(atLeast(1), "at least 1"),
              Importance.MEDIUM,
              TOPIC_MIN_INSYNC_REPLICAS_DOC)
          .define(
              DLQ_RETENTION_CONFIG,
              Type.LONG,
              Duration.ofDays(30).toMillis(),
              optional(between(-1, Long.MAX_VALUE), "-1 (forever) or at least 1"),
              Importance.MEDIUM,
              DLQ_RETENTION_DOC)
          .define(
              TOPIC_READY_TIMEOUT_CONFIG,
              Type.LONG,
              Duration.ofSeconds(60).toMillis(),
              atLeast(1),
              Importance.LOW,
              TOPIC_READY_TIMEOUT_DOC)
          .define(
              HTTP_ALLOWED_HOSTS_CONFIG, Type.LIST, "", Importance.MEDIUM, HTTP_ALLOWED_HOSTS_DOC)
          .define(HTTP_PEER_HOSTS_CONFIG, Type.LIST, "", Importance.MEDIUM, HTTP_PEER_HOSTS_DOC)
          .define(
              HTTP_READ_TIMEOUT_CONFIG,
              Type.LONG,
              Duration.ofSeconds(10).toMillis(),
              atLeast(1),
              Importance.LOW,
              HTTP_READ_TIMEOUT_DOC)
          .define(
              FAILOVER_PEER_CHECK_CONFIG,
              Type.LONG,
              500L,
              atLeast(0),
              Importance.LOW,
              FAILOVER_PEER_CHECK_DOC)
          .define(
              WARMUP_TASKS_CONFIG, Type.INT, 20_000, atLeast(0), Importance.LOW, WARMUP_TASKS_DOC)
          .define(
              HTTP_TLS_KEYSTORE_FILE_CONFIG,
              Type.STRING,
              "",
              Importance.HIGH,
              HTTP_TLS_KEYSTORE_FILE_DOC)
          .define(
              HTTP_TLS_KEYSTORE_PASSWORD_CONFIG,
              Type.PASSWORD,
              null,
              Importance.HIGH,
              HTTP_TLS_KEYSTORE_PASSWORD_DOC)
          .define(
              HTTP_TLS_TRUSTSTORE_FILE_CONFIG,
              Type.STRING,
              "",
              Importance.MEDIUM,
              HTTP_TLS_TRUSTSTORE_FILE_DOC)
          .define(
              HTTP_TLS_TRUSTSTORE_PASSWORD_CONFIG,
              Type.PASSWORD,
              null,
              Importance.MEDIUM,
              HTTP_TLS_TRUSTSTORE_PASSWORD_DOC);

  private final DelayConfig delay;

  /**
   * Creates a configuration.
   *
   * @param originals {@code delay.*} keys of the service and of the topology, and Kafka properties
   * @throws ConfigException if a value is invalid or a {@code delay.*} key is unknown to both
   */
  public ServiceConfig(Map<?, ?> originals) {
    super(SERVICE_DEF, originals, false);
    Map<Object, Object> topology = new HashMap<>(originals);
    topology.keySet().removeIf(key -> SERVICE_DEF.names().contains(String.valueOf(key)));
    this.delay = new DelayConfig(topology);
  }

  /** The topology's configuration, with every Kafka property. */
  public DelayConfig delay() {
    return delay;
  }

  /**
   * A copy of this configuration with one key set, such as the bootstrap servers of the embedded
   * broker.
   */
  public ServiceConfig with(String key, Object value) {
    Map<String, Object> copy = new HashMap<>(originals());
    copy.put(key, value);
    return new ServiceConfig(copy);
  }

  /** The definition of every {@code delay.*} key, the service's and the topology's. */
  public static ConfigDef configDef() {
    ConfigDef all = DelayConfig.configDef();
    SERVICE_DEF.configKeys().values().forEach(all::define);
    return all;
  }

  public int httpPort() {
    return getInt(HTTP_PORT_CONFIG);
  }

  /** The configured advertised host of the HTTP port; empty means this machine's host name. */
  public String httpAdvertisedHost() {
    return getString(HTTP_ADVERTISED_HOST_CONFIG);
  }

  /** The address the HTTP endpoints listen on. */
  public String httpBindAddress() {
    return getString(HTTP_BIND_ADDRESS_CONFIG);
  }

  /** Whether an HTTP endpoint bound beyond loopback must have tokens. */
  public boolean httpAuthRequired() {
    return getBoolean(HTTP_AUTH_REQUIRED_CONFIG);
  }

  /** The tokens file of the HTTP API; empty means none. */
  public String httpAuthTokensFile() {
    return getString(HTTP_AUTH_TOKENS_FILE_CONFIG);
  }

  /** Whether GET /metrics needs a token when tokens are configured. */
  public boolean httpAuthMetrics() {
    return getBoolean(HTTP_AUTH_METRICS_CONFIG);
  }

  /** The origins allowed to change state through the HTTP API. */
  public List<String> httpAllowedOrigins() {
    return getList(HTTP_ALLOWED_ORIGINS_CONFIG);
  }

  public String embeddedDataDir() {
    return getString(EMBEDDED_DATA_DIR_CONFIG);
  }

  public int topicPartitions() {
    return getInt(TOPIC_PARTITIONS_CONFIG);
  }

  /** The configured replication factor of created topics; empty: min(3, brokers). */
  public OptionalInt topicReplicationFactor() {
    Short configured = getShort(TOPIC_REPLICATION_FACTOR_CONFIG);
    return configured == null ? OptionalInt.empty() : OptionalInt.of(configured);
  }

  /** The configured min.insync.replicas of created topics; empty: min(2, replication factor). */
  public OptionalInt topicMinInsyncReplicas() {
    Integer configured = getInt(TOPIC_MIN_INSYNC_REPLICAS_CONFIG);
    return configured == null ? OptionalInt.empty() : OptionalInt.of(configured);
  }

  /** retention.ms of the dead-letter topic when the service creates it; -1 is forever. */
  public long dlqRetentionMs() {
    return getLong(DLQ_RETENTION_CONFIG);
  }

  /** How long a start waits for its topics to be created and to have leaders. */
  public Duration topicReadyTimeout() {
    return Duration.ofMillis(getLong(TOPIC_READY_TIMEOUT_CONFIG));
  }

  /** Host names requests may be addressed to when no tokens are configured. */
  public List<String> httpAllowedHosts() {
    return getList(HTTP_ALLOWED_HOSTS_CONFIG);
  }

  /** The hosts reads are forwarded to; empty for any the group's metadata names. */
  public List<String> httpPeerHosts() {
    return getList(HTTP_PEER_HOSTS_CONFIG);
  }

  /** How long a client may take to send a request's head, and then its body. */
  public Duration httpReadTimeout() {
    return Duration.ofMillis(getLong(HTTP_READ_TIMEOUT_CONFIG));
  }

  /** How often the other instances' endpoints are checked; empty if they are not. */
  /** How many synthetic tasks warm the fire path before the instance is ready (0: none). */
  public int warmupTasks() {
    return getInt(WARMUP_TASKS_CONFIG);
  }

  public Optional<Duration> failoverPeerCheck() {
    long ms = getLong(FAILOVER_PEER_CHECK_CONFIG);
    return ms == 0 || httpPort() == 0 ? Optional.empty() : Optional.of(Duration.ofMillis(ms));
  }

  /** The keystore the HTTP endpoints serve HTTPS with; empty for plain HTTP. */
  public Optional<String> httpTlsKeystoreFile() {
    return nonBlank(getString(HTTP_TLS_KEYSTORE_FILE_CONFIG));
  }

  /** The keystore's password; empty string if unset. */
  public String httpTlsKeystorePassword() {
    return password(HTTP_TLS_KEYSTORE_PASSWORD_CONFIG);
  }

  /** The truststore peers are checked against; empty: the keystore's own certificates. */
  public Optional<String> httpTlsTruststoreFile() {
    return nonBlank(getString(HTTP_TLS_TRUSTSTORE_FILE_CONFIG));
  }

  /** The truststore's password; empty string if unset. */
  public String httpTlsTruststorePassword() {
    return password(HTTP_TLS_TRUSTSTORE_PASSWORD_CONFIG);
  }

  private String password(String key) {
    Password password = getPassword(key);
    return password == null ? "" : password.value();
  }

  private static Optional<String> nonBlank(String value) {
    return value.isBlank() ? Optional.empty() : Optional.of(value);
  }

  /**
   * A validator that accepts null (the key is unset) and what {@code range} accepts except 0: a
   * replication factor or a retention of 0 would lose data, and -1 is how Kafka says "default" or
   * "forever".
   */
  private static ConfigDef.Validator optional(ConfigDef.Range range, String allowed) {
    return ConfigDef.LambdaValidator.with(
        (name, value) -> {
          if (value == null) {
            return;
          }
          range.ensureValid(name, value);
          if (((Number) value).longValue() == 0) {
            throw new ConfigException(name, value, "expected " + allowed);
          }
        },
        () -> allowed + ", or unset");
  }
}

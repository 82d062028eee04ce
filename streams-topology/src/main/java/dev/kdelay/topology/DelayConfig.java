package dev.kdelay.topology;

import static org.apache.kafka.common.config.ConfigDef.Range.atLeast;
import static org.apache.kafka.common.config.ConfigDef.Range.between;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.streams.StreamsConfig;

/**
 * Configuration of kdelay, declared with Kafka's {@link ConfigDef}.
 *
 * <p>Keys under {@code delay.} are kdelay's own. Every other key is a Kafka property (client,
 * Streams, security) and is passed through to Kafka Streams unchanged, so TLS and SASL settings
 * reach every client the service creates. Environment variables map to keys by lower-casing and
 * replacing {@code _} with {@code .}: {@code DELAY_REQUESTS_TOPIC} is {@code delay.requests.topic}.
 *
 * <pre>{@code
 * DelayConfig config = new DelayConfig(Map.of(
 *     DelayConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9092",
 *     DelayConfig.REQUESTS_TOPIC_CONFIG, "delay-requests"));
 * Topology topology = DelayTopology.build(config);
 * KafkaStreams streams = new KafkaStreams(topology, StreamsTuning.streamsProperties(config));
 * }</pre>
 */
public final class DelayConfig extends AbstractConfig {

  public static final String BOOTSTRAP_SERVERS_CONFIG = "delay.bootstrap.servers";
  private static final String BOOTSTRAP_SERVERS_DOC =
      "Kafka bootstrap servers. Empty: the service starts an embedded single-node broker.";

  public static final String APPLICATION_ID_CONFIG = "delay.application.id";
  private static final String APPLICATION_ID_DOC =
      "Kafka Streams application id. Instances with the same id share the work.";

  public static final String STATE_DIR_CONFIG = "delay.state.dir";
  private static final String STATE_DIR_DOC = "Directory of the local RocksDB state stores.";

  public static final String REQUESTS_TOPIC_CONFIG = "delay.requests.topic";
  private static final String REQUESTS_TOPIC_DOC = "Topic schedule requests are read from.";

  public static final String DLQ_TOPIC_CONFIG = "delay.dlq.topic";
  private static final String DLQ_TOPIC_DOC = "Dead-letter topic rejected requests are written to.";

  public static final String REROUTE_TOPIC_CONFIG = "delay.reroute.topic";
  private static final String REROUTE_TOPIC_DOC =
      "Topic that carries requests which arrived on a partition other than the one their id hashes"
          + " to (clients with another partitioner), to the partition that owns the id. Empty:"
          + " '<requests topic>-rerouted'. Same partition count as the requests topic.";

  public static final String REQUESTS_PARTITIONS_CONFIG = "delay.requests.partitions";
  private static final String REQUESTS_PARTITIONS_DOC =
      "Partition count of the requests topic; the service sets it from the broker's metadata.";

  public static final String TARGET_TOPIC_ALLOW_CONFIG = "delay.target.topic.allow";
  private static final String TARGET_TOPIC_ALLOW_DOC =
      "Regular expression a target topic must match in full. Kafka-internal topics and kdelay's"
          + " own topics are never valid targets, whatever this allows. Other applications'"
          + " internal topics (Kafka Streams changelog and repartition topics, '_'-prefixed topics"
          + " such as _schemas, Kafka Connect's connect-configs/-offsets/-status) are valid only"
          + " when this names them: matches them, but not a made-up topic of the same kind (so"
          + " '.*', '^.*$', '.+' or '.*-changelog' name none). Checked when a request arrives and"
          + " again when a task fires.";

  public static final String TENANTS_CONFIG = "delay.tenants";
  private static final String TENANTS_DOC =
      "Comma-separated tenants sharing this deployment, each 1 to 32 lowercase letters and"
          + " digits. A tenant schedules through its own request topic '<requests topic>.<tenant>'"
          + " (so that Kafka ACLs decide who schedules as whom), its ids are its own, its targets"
          + " must match delay.tenant.<tenant>.target.topic.allow (default: topics named"
          + " '<tenant>.*') as well as delay.target.topic.allow, its payloads may be at most"
          + " delay.tenant.<tenant>.max.payload.bytes (default: delay.max.payload.bytes), it may"
          + " hold at most delay.tenant.<tenant>.max.pending pending schedules (default: no"
          + " limit; each partition its share), and its dead letters go to"
          + " '<dead-letter topic>.<tenant>'. Empty: no tenants, one namespace.";

  public static final String HORIZON_CONFIG = "delay.horizon.ms";
  private static final String HORIZON_DOC =
      "Furthest a due time may lie in the future, in milliseconds; later ones are rejected.";

  public static final String PUNCTUATE_INTERVAL_CONFIG = "delay.punctuate.interval.ms";
  private static final String PUNCTUATE_INTERVAL_DOC =
      "How often, in wall-clock milliseconds, each task looks for due work. A look that finds"
          + " nothing due costs no disk access.";

  public static final String MAX_FIRES_PER_PUNCTUATION_CONFIG = "delay.max.fires.per.punctuation";
  private static final String MAX_FIRES_PER_PUNCTUATION_DOC =
      "Most tasks one punctuation fires, so that polling, heartbeats and commits keep flowing"
          + " under a backlog; the rest fire in the next punctuation.";

  public static final String FIRE_RATE_LIMITS_CONFIG = "delay.fire.rate.limits";
  private static final String FIRE_RATE_LIMITS_DOC =
      "How fast kdelay may write to a target topic: comma-separated topic=rate or"
          + " topic=rate/burst, the rate in fires per second, the burst the most at once (by"
          + " default the rate, rounded up). A task due while its topic is over its limit is held"
          + " back to the next free slot, in due order, and fires then with its own due time;"
          + " nothing is dropped. Each partition of the requests topic fires its share (rate and"
          + " burst divided by the partition count). tenant:<name> in place of a topic limits all"
          + " of a tenant's fires, to any topic. Empty: no limits. What the limits topic holds"
          + " (delay.fire.rate.limits.topic, changed with 'kdelay limits') wins, topic by topic.";

  public static final String FIRE_RATE_LIMITS_TOPIC_CONFIG = "delay.fire.rate.limits.topic";
  private static final String FIRE_RATE_LIMITS_TOPIC_DOC =
      "Compacted topic of fire-rate limits set while kdelay runs ('kdelay limits set'), keyed by"
          + " target topic; every instance reads it, and a limit there wins over"
          + " delay.fire.rate.limits for its topic. Empty: '<requests topic>-limits'.";

  public static final String MAX_FIRES_PER_COMMIT_CONFIG = "delay.max.fires.per.commit";
  private static final String MAX_FIRES_PER_COMMIT_DOC =
      "Most due tasks a stream thread fires into the first transaction of a burst; its tasks"
          + " with due work share it evenly. Under exactly-once fired records become visible when"
          + " their transaction commits, so a burst of tasks due at once becomes visible as it"
          + " drains instead of when all of it has fired. Each transaction the burst fills lets the"
          + " next carry twice as many, up to 16 times this, so a large burst drains with few"
          + " commits. Lower makes a burst's first fires visible sooner.";

  public static final String COMMIT_INTERVAL_CONFIG = "delay.commit.interval.ms";
  private static final String COMMIT_INTERVAL_DOC =
      "Kafka Streams commit interval for request intake. Fired records need not wait for it: see"
          + " delay.fire.commit.interval.ms.";

  public static final String FIRE_COMMIT_INTERVAL_CONFIG = "delay.fire.commit.interval.ms";
  private static final String FIRE_COMMIT_INTERVAL_DOC =
      "Fewest milliseconds a stream thread works between the end of a commit and the commit it"
          + " asks for after firing. A fired record becomes visible to read_committed consumers"
          + " when its transaction commits, so a quiet instance commits at once after a fire;"
          + " under load every commit costs a transaction round trip, so fires within this"
          + " interval share one. A thread that is behind (firing tasks more than 250 ms late)"
          + " uses delay.commit.interval.ms instead. At or above delay.commit.interval.ms, fires"
          + " simply wait for the regular commit. 0 commits back to back under load, which leaves"
          + " request intake too little time: tasks are then taken in late and fire late.";

  public static final String POLL_CONFIG = "delay.poll.ms";
  private static final String POLL_DOC =
      "Longest the stream thread blocks waiting for requests; bounds how late a punctuation runs"
          + " when no requests arrive.";

  /**
   * Keys kdelay once had and no longer uses, with what became of each. A configuration that still
   * sets one is accepted, so that an upgrade does not stop on it, and the service says it is
   * ignored; they are not part of {@link #configDef()}.
   */
  public static final Map<String, String> RETIRED_KEYS =
      Map.of(
          "delay.bucket.width.ms",
          "kdelay's first store layout grouped tasks in time buckets of this width; the schedule"
              + " store orders them by an index instead");

  public static final String MAX_ID_BYTES_CONFIG = "delay.max.id.bytes";
  private static final String MAX_ID_BYTES_DOC = "Longest schedule id, in UTF-8 bytes.";

  public static final String MAX_PAYLOAD_BYTES_CONFIG = "delay.max.payload.bytes";
  private static final String MAX_PAYLOAD_BYTES_DOC = "Largest payload, in bytes.";

  public static final String MAX_HEADERS_CONFIG = "delay.max.headers";
  private static final String MAX_HEADERS_DOC = "Most headers one request may carry.";

  /** Kafka's default {@code delete.retention.ms}: a day. */
  private static final long KAFKA_DEFAULT_DELETE_RETENTION_MS = 24 * 60 * 60 * 1000L;

  public static final String PROCESSING_GUARANTEE_CONFIG = "delay.processing.guarantee";
  private static final String PROCESSING_GUARANTEE_DOC =
      "exactly_once_v2 (default) or at_least_once. In at_least_once a fire is never lost, but the"
          + " tasks fired since the last commit fire again after a crash or a rebalance, with the"
          + " same idempotency key.";

  public static final String NUM_STREAM_THREADS_CONFIG = "delay.num.stream.threads";
  private static final String NUM_STREAM_THREADS_DOC = "Stream threads per instance.";

  public static final String NUM_STANDBY_REPLICAS_CONFIG = "delay.num.standby.replicas";
  private static final String NUM_STANDBY_REPLICAS_DOC =
      "Warm copies of each task's state on other instances, for faster failover.";

  public static final String ROCKSDB_BLOCK_CACHE_BYTES_CONFIG = "delay.rocksdb.block.cache.bytes";
  private static final String ROCKSDB_BLOCK_CACHE_BYTES_DOC =
      "Off-heap block cache shared by every RocksDB store of the instance.";

  /** The block cache's default: the write buffers' twice over, so that blocks keep half. */
  public static final long ROCKSDB_BLOCK_CACHE_BYTES_DEFAULT = 192L * 1024 * 1024;

  public static final String ROCKSDB_WRITE_BUFFER_BYTES_CONFIG = "delay.rocksdb.write.buffer.bytes";

  /**
   * The memtables' default budget: 16 MiB for each of the six partitions a request topic has by
   * default, so that an instance restoring all of them flushes full-size memtables. A restore is
   * paced by it: six partitions' stores on two cores restored 16 M changelog records in 42-46 s at
   * 32 MiB (memtables flushed at about 5 MiB, and the many small files merged over and over), 34 s
   * at 64 MiB, and 25-27 s from 96 MiB up ({@code StoreRestoreBenchmark}).
   */
  public static final long ROCKSDB_WRITE_BUFFER_BYTES_DEFAULT = 96L * 1024 * 1024;

  private static final String ROCKSDB_WRITE_BUFFER_BYTES_DOC =
      "Off-heap memtable budget shared by every RocksDB store of the instance, counted against"
          + " the block cache. It sets the pace of a large restore: memtables flushed small make"
          + " many small files, whose merging then takes most of the restore's time; about 16 MiB"
          + " per partition the instance restores keeps the flushed files full size.";

  public static final String CANCEL_RETENTION_CONFIG = "delay.cancel.retention.ms";
  private static final String CANCEL_RETENTION_DOC =
      "How long a cancel is remembered, so that an older schedule for the same id arriving late"
          + " (from a client with another partitioner) cannot revive it.";

  public static final String MAX_CLOCK_SKEW_CONFIG = "delay.max.clock.skew.ms";
  private static final String MAX_CLOCK_SKEW_DOC =
      "How far ahead of kdelay's clock a request's timestamp may be. Requests for one id apply in"
          + " timestamp order, and delay-after counts from the timestamp, so a producer whose clock"
          + " runs years ahead would otherwise pin its ids: nothing older could cancel or replace"
          + " them. A request stamped further ahead counts as stamped when kdelay reads it.";

  public static final String FIRED_RETENTION_CONFIG = "delay.fired.retention.ms";
  private static final String FIRED_RETENTION_DOC =
      "How long a fired one-shot task is remembered: its status reads 'fired', and an older"
          + " schedule for the same id arriving late (from a client with another partitioner) is"
          + " dead-lettered as SUPERSEDED instead of firing again. 0 forgets it at once. Either"
          + " way a fire writes one changelog record (a tombstone, carrying the marker while it is"
          + " remembered), and an expiry writes none.";

  public static final String STORE_FORMAT_CONFIG = "delay.store.format";
  private static final String STORE_FORMAT_DOC =
      "The format of the entries kdelay writes to its store and changelog. 3 keeps, with each"
          + " entry, where its request was read and a digest of it, so that the same request"
          + " again (a producer's retry) applies as nothing; earlier versions of kdelay read only"
          + " 2, and would dead-letter a format 3 entry as UNREADABLE_TASK. For a rolling upgrade"
          + " from such a version, set 2, roll every instance, then remove it and roll again."
          + " Both formats are always read.";

  public static final String MISFIRE_THRESHOLD_CONFIG = "delay.misfire.threshold.ms";
  private static final String MISFIRE_THRESHOLD_DOC =
      "How late an occurrence of a recurring schedule may come due before it counts as missed"
          + " and its misfire policy applies.";

  public static final String CATCH_UP_WINDOW_CONFIG = "delay.catch.up.window.ms";
  private static final String CATCH_UP_WINDOW_DOC =
      "How far back the fire-all misfire policy catches up: missed occurrences older than this"
          + " are not fired, so a long outage of a frequent schedule does not flood its target.";

  public static final String TARGET_TOPICS_REFRESH_CONFIG = "delay.target.topics.refresh.ms";
  private static final String TARGET_TOPICS_REFRESH_DOC =
      "How often the service re-reads the metadata of the target topics it knows, to notice"
          + " deleted topics (their tasks are dead-lettered as UNKNOWN_TOPIC instead of fired).";

  public static final String TARGET_TOPICS_LOOKUP_TIMEOUT_CONFIG =
      "delay.target.topics.lookup.timeout.ms";
  private static final String TARGET_TOPICS_LOOKUP_TIMEOUT_DOC =
      "How long a request naming a target topic not seen before waits for that topic's metadata."
          + " It waits aside, on the reroute topic, in order with its id's other requests, while"
          + " every other request flows (no stream thread ever waits for the cluster); then it is"
          + " taken as if the topic existed, and checked again when it fires. The admin API waits"
          + " as long, on its own threads, before it answers.";

  public static final String TARGET_TOPICS_MAX_CONFIG = "delay.target.topics.max";
  private static final String TARGET_TOPICS_MAX_DOC =
      "How many target topics the service keeps metadata of; the least recently used is"
          + " forgotten first.";

  public static final String TARGET_TOPICS_ABSENT_RETENTION_CONFIG =
      "delay.target.topics.absent.retention.ms";
  private static final String TARGET_TOPICS_ABSENT_RETENTION_DOC =
      "How long the service remembers that a target topic does not exist before it asks again,"
          + " so that a topic created later is seen.";

  public static final String IMPORT_FROM_CONFIG = "delay.import.from";
  private static final String IMPORT_FROM_DOC =
      "The application id of the deployment whose schedules this one takes in when `kdelay move`"
          + " moves them here (to grow the partition count); empty takes in none. An import"
          + " carries a schedule's whole stored state, so only the deployment named here may send"
          + " them: leave it empty except while a move runs.";

  private static final ConfigDef CONFIG_DEF =
      new ConfigDef()
          .define(BOOTSTRAP_SERVERS_CONFIG, Type.STRING, "", Importance.HIGH, BOOTSTRAP_SERVERS_DOC)
          .define(
              APPLICATION_ID_CONFIG,
              Type.STRING,
              "kdelay",
              new ConfigDef.NonEmptyString(),
              Importance.HIGH,
              APPLICATION_ID_DOC)
          .define(STATE_DIR_CONFIG, Type.STRING, "data/streams", Importance.HIGH, STATE_DIR_DOC)
          .define(
              REQUESTS_TOPIC_CONFIG,
              Type.STRING,
              "delay-requests",
              new ConfigDef.NonEmptyString(),
              Importance.HIGH,
              REQUESTS_TOPIC_DOC)
          .define(
              DLQ_TOPIC_CONFIG,
              Type.STRING,
              "delay-dlq",
              new ConfigDef.NonEmptyString(),
              Importance.HIGH,
              DLQ_TOPIC_DOC)
          .define(REROUTE_TOPIC_CONFIG, Type.STRING, "", Importance.LOW, REROUTE_TOPIC_DOC)
          .define(
              REQUESTS_PARTITIONS_CONFIG,
              Type.INT,
              1,
              atLeast(1),
              Importance.LOW,
              REQUESTS_PARTITIONS_DOC)
          .define(
              TARGET_TOPIC_ALLOW_CONFIG,
              Type.STRING,
              ".*",
              DelayConfig::validateRegex,
              Importance.HIGH,
              TARGET_TOPIC_ALLOW_DOC)
          .define(TENANTS_CONFIG, Type.STRING, "", Importance.MEDIUM, TENANTS_DOC)
          .define(
              HORIZON_CONFIG,
              Type.LONG,
              Duration.ofDays(3653).toMillis(),
              atLeast(1),
              Importance.MEDIUM,
              HORIZON_DOC)
          .define(
              PUNCTUATE_INTERVAL_CONFIG,
              Type.LONG,
              5L,
              between(1, 60_000),
              Importance.MEDIUM,
              PUNCTUATE_INTERVAL_DOC)
          .define(
              FIRE_RATE_LIMITS_CONFIG,
              Type.STRING,
              "",
              (name, value) -> FireRateLimits.parse((String) value),
              Importance.MEDIUM,
              FIRE_RATE_LIMITS_DOC)
          .define(
              FIRE_RATE_LIMITS_TOPIC_CONFIG,
              Type.STRING,
              "",
              Importance.LOW,
              FIRE_RATE_LIMITS_TOPIC_DOC)
          .define(
              MAX_FIRES_PER_PUNCTUATION_CONFIG,
              Type.INT,
              2_000,
              atLeast(1),
              Importance.MEDIUM,
              MAX_FIRES_PER_PUNCTUATION_DOC)
          .define(
              MAX_FIRES_PER_COMMIT_CONFIG,
              Type.INT,
              4_000,
              atLeast(1),
              Importance.MEDIUM,
              MAX_FIRES_PER_COMMIT_DOC)
          .define(
              FIRE_COMMIT_INTERVAL_CONFIG,
              Type.LONG,
              5L,
              between(0, 60_000),
              Importance.MEDIUM,
              FIRE_COMMIT_INTERVAL_DOC)
          .define(
              COMMIT_INTERVAL_CONFIG,
              Type.LONG,
              100L,
              atLeast(1),
              Importance.MEDIUM,
              COMMIT_INTERVAL_DOC)
          .define(POLL_CONFIG, Type.LONG, 5L, between(0, 1_000), Importance.LOW, POLL_DOC)
          .define(
              MAX_ID_BYTES_CONFIG,
              Type.INT,
              1024,
              between(1, 1024),
              Importance.MEDIUM,
              MAX_ID_BYTES_DOC)
          .define(
              MAX_PAYLOAD_BYTES_CONFIG,
              Type.INT,
              1024 * 1024,
              atLeast(0),
              Importance.MEDIUM,
              MAX_PAYLOAD_BYTES_DOC)
          .define(MAX_HEADERS_CONFIG, Type.INT, 64, atLeast(0), Importance.MEDIUM, MAX_HEADERS_DOC)
          .define(
              PROCESSING_GUARANTEE_CONFIG,
              Type.STRING,
              StreamsConfig.EXACTLY_ONCE_V2,
              ConfigDef.ValidString.in(StreamsConfig.EXACTLY_ONCE_V2, StreamsConfig.AT_LEAST_ONCE),
              Importance.MEDIUM,
              PROCESSING_GUARANTEE_DOC)
          .define(
              NUM_STREAM_THREADS_CONFIG,
              Type.INT,
              1,
              atLeast(1),
              Importance.MEDIUM,
              NUM_STREAM_THREADS_DOC)
          .define(
              NUM_STANDBY_REPLICAS_CONFIG,
              Type.INT,
              0,
              atLeast(0),
              Importance.MEDIUM,
              NUM_STANDBY_REPLICAS_DOC)
          .define(
              ROCKSDB_BLOCK_CACHE_BYTES_CONFIG,
              Type.LONG,
              ROCKSDB_BLOCK_CACHE_BYTES_DEFAULT,
              atLeast(1024 * 1024),
              Importance.LOW,
              ROCKSDB_BLOCK_CACHE_BYTES_DOC)
          .define(
              ROCKSDB_WRITE_BUFFER_BYTES_CONFIG,
              Type.LONG,
              ROCKSDB_WRITE_BUFFER_BYTES_DEFAULT,
              atLeast(1024 * 1024),
              Importance.LOW,
              ROCKSDB_WRITE_BUFFER_BYTES_DOC)
          .define(
              CANCEL_RETENTION_CONFIG,
              Type.LONG,
              Duration.ofHours(1).toMillis(),
              atLeast(0),
              Importance.LOW,
              CANCEL_RETENTION_DOC)
          .define(
              MAX_CLOCK_SKEW_CONFIG,
              Type.LONG,
              Duration.ofMinutes(1).toMillis(),
              atLeast(0),
              Importance.LOW,
              MAX_CLOCK_SKEW_DOC)
          .define(
              FIRED_RETENTION_CONFIG,
              Type.LONG,
              Duration.ofHours(1).toMillis(),
              atLeast(0),
              Importance.LOW,
              FIRED_RETENTION_DOC)
          .define(STORE_FORMAT_CONFIG, Type.INT, 3, between(2, 3), Importance.LOW, STORE_FORMAT_DOC)
          .define(
              MISFIRE_THRESHOLD_CONFIG,
              Type.LONG,
              Duration.ofSeconds(60).toMillis(),
              atLeast(0),
              Importance.LOW,
              MISFIRE_THRESHOLD_DOC)
          .define(
              CATCH_UP_WINDOW_CONFIG,
              Type.LONG,
              Duration.ofHours(1).toMillis(),
              atLeast(0),
              Importance.LOW,
              CATCH_UP_WINDOW_DOC)
          .define(
              TARGET_TOPICS_REFRESH_CONFIG,
              Type.LONG,
              Duration.ofSeconds(30).toMillis(),
              atLeast(10),
              Importance.LOW,
              TARGET_TOPICS_REFRESH_DOC)
          .define(
              TARGET_TOPICS_LOOKUP_TIMEOUT_CONFIG,
              Type.LONG,
              500L,
              atLeast(0),
              Importance.LOW,
              TARGET_TOPICS_LOOKUP_TIMEOUT_DOC)
          .define(
              TARGET_TOPICS_MAX_CONFIG,
              Type.INT,
              10_000,
              atLeast(1),
              Importance.LOW,
              TARGET_TOPICS_MAX_DOC)
          .define(
              TARGET_TOPICS_ABSENT_RETENTION_CONFIG,
              Type.LONG,
              Duration.ofSeconds(5).toMillis(),
              atLeast(0),
              Importance.LOW,
              TARGET_TOPICS_ABSENT_RETENTION_DOC)
          .define(IMPORT_FROM_CONFIG, Type.STRING, "", Importance.LOW, IMPORT_FROM_DOC);

  private final Pattern targetTopicAllow;
  private final Tenants tenants;

  /**
   * Creates a configuration.
   *
   * @param originals {@code delay.*} keys and Kafka properties; unknown {@code delay.*} keys are
   *     rejected
   * @throws ConfigException if a value is invalid or a {@code delay.*} key is unknown
   */
  public DelayConfig(Map<?, ?> originals) {
    super(CONFIG_DEF, originals, false);
    for (Object key : originals.keySet()) {
      String name = String.valueOf(key);
      if (name.startsWith("delay.")
          && !CONFIG_DEF.names().contains(name)
          && !RETIRED_KEYS.containsKey(name)
          && !isTenantKey(name)) {
        // Without the value: an unknown key may be a misspelt secret (delay.sasl.jaas.configg).
        throw new ConfigException(name + ": unknown kdelay configuration key");
      }
    }
    this.targetTopicAllow = Pattern.compile(getString(TARGET_TOPIC_ALLOW_CONFIG));
    this.tenants =
        Tenants.of(
            getString(TENANTS_CONFIG),
            requestsTopic(),
            dlqTopic(),
            maxPayloadBytes(),
            key -> Optional.ofNullable(originals().get(key)).map(String::valueOf));
    for (Object key : originals.keySet()) {
      Optional<String> tenant = Tenants.tenantOfKey(String.valueOf(key));
      if (tenant.isPresent() && tenants.named(tenant.get()).isEmpty()) {
        throw new ConfigException(key + ": names no tenant of " + TENANTS_CONFIG);
      }
    }
  }

  /**
   * Whether a key is one of a tenant's own: {@code delay.tenant.<tenant>.target.topic.allow} or
   * {@code .max.payload.bytes}.
   */
  public static boolean isTenantKey(String name) {
    return Tenants.tenantOfKey(name).isPresent();
  }

  /** The tenants sharing this deployment ({@link Tenants#NONE} if none). */
  public Tenants tenants() {
    return tenants;
  }

  /**
   * A copy of this configuration with one key set, such as the partition count the service reads
   * from the broker.
   *
   * @param key a configuration key
   * @param value its new value
   * @return a new configuration
   */
  public DelayConfig with(String key, Object value) {
    Map<String, Object> copy = new HashMap<>(originals());
    copy.put(key, value);
    return new DelayConfig(copy);
  }

  /** The definition of every {@code delay.*} key, for documentation and extension. */
  public static ConfigDef configDef() {
    return new ConfigDef(CONFIG_DEF);
  }

  /**
   * The configuration key an environment variable maps to: {@code DELAY_REQUESTS_TOPIC} is {@code
   * delay.requests.topic}.
   */
  public static String keyOfEnvironmentVariable(String variable) {
    return variable.toLowerCase(java.util.Locale.ROOT).replace('_', '.');
  }

  public String bootstrapServers() {
    return getString(BOOTSTRAP_SERVERS_CONFIG);
  }

  public String applicationId() {
    // A pass-through application.id wins in StreamsTuning.streamsProperties(), so it is the one in
    // effect: the
    // prefix of the changelogs and of every other topic that is kdelay's own.
    Object passed = originals().get(StreamsConfig.APPLICATION_ID_CONFIG);
    return passed != null ? passed.toString() : getString(APPLICATION_ID_CONFIG);
  }

  public String requestsTopic() {
    return getString(REQUESTS_TOPIC_CONFIG);
  }

  public String dlqTopic() {
    return getString(DLQ_TOPIC_CONFIG);
  }

  /**
   * The dead-letter topic of a tenant's records: {@code <dead-letter topic>.<tenant>}; the shared
   * one for no tenant ({@code ""}) or one this deployment does not have.
   */
  public String dlqTopic(String tenant) {
    return tenant.isEmpty()
        ? dlqTopic()
        : tenants.named(tenant).map(Tenants.Tenant::dlqTopic).orElse(dlqTopic());
  }

  /** Whether a topic is one of this deployment's dead-letter topics, shared or a tenant's. */
  public boolean isDlqTopic(String topic) {
    return topic.equals(dlqTopic()) || tenants.dlqTopics().contains(topic);
  }

  /** Whether a topic is one of this deployment's request topics, shared or a tenant's. */
  public boolean isRequestsTopic(String topic) {
    return topic.equals(requestsTopic()) || tenants.ofRequestsTopic(topic).isPresent();
  }

  /** The reroute topic; defaults to {@code <requests topic>-rerouted}. */
  public String rerouteTopic() {
    String configured = getString(REROUTE_TOPIC_CONFIG);
    return configured.isEmpty() ? requestsTopic() + "-rerouted" : configured;
  }

  /** The application id whose moved schedules this deployment takes in; empty for none. */
  public String importFrom() {
    return getString(IMPORT_FROM_CONFIG);
  }

  public int requestsPartitions() {
    return getInt(REQUESTS_PARTITIONS_CONFIG);
  }

  public Pattern targetTopicAllow() {
    return targetTopicAllow;
  }

  public long horizonMs() {
    return getLong(HORIZON_CONFIG);
  }

  public Duration punctuateInterval() {
    return Duration.ofMillis(getLong(PUNCTUATE_INTERVAL_CONFIG));
  }

  /** Fewest milliseconds of work between a commit's end and a commit asked for after firing. */
  public long fireCommitIntervalMs() {
    return getLong(FIRE_COMMIT_INTERVAL_CONFIG);
  }

  /** Kafka Streams' commit interval, milliseconds. */
  public long commitIntervalMs() {
    return getLong(COMMIT_INTERVAL_CONFIG);
  }

  /** How fast kdelay may write to each limited target topic. */
  public FireRateLimits fireRateLimits() {
    return FireRateLimits.parse(getString(FIRE_RATE_LIMITS_CONFIG));
  }

  /** The topic of limits set at run time; defaults to {@code <requests topic>-limits}. */
  public String fireRateLimitsTopic() {
    String configured = getString(FIRE_RATE_LIMITS_TOPIC_CONFIG);
    return configured.isEmpty() ? requestsTopic() + "-limits" : configured;
  }

  public int maxFiresPerPunctuation() {
    return getInt(MAX_FIRES_PER_PUNCTUATION_CONFIG);
  }

  /** The most due tasks a stream thread fires into one transaction. */
  public int maxFiresPerCommit() {
    return getInt(MAX_FIRES_PER_COMMIT_CONFIG);
  }

  public int maxIdBytes() {
    return getInt(MAX_ID_BYTES_CONFIG);
  }

  public int maxPayloadBytes() {
    return getInt(MAX_PAYLOAD_BYTES_CONFIG);
  }

  public long cancelRetentionMs() {
    return getLong(CANCEL_RETENTION_CONFIG);
  }

  /** How far ahead of kdelay's clock a request's timestamp is believed. */
  public long maxClockSkewMs() {
    return getLong(MAX_CLOCK_SKEW_CONFIG);
  }

  /** How long a fired one-shot task is remembered; 0 forgets it at once. */
  public long firedRetentionMs() {
    return getLong(FIRED_RETENTION_CONFIG);
  }

  /** The format of the store entries kdelay writes: 2 or 3 ({@link #STORE_FORMAT_CONFIG}). */
  public byte storeFormat() {
    return getInt(STORE_FORMAT_CONFIG).byteValue();
  }

  /**
   * The {@code delete.retention.ms} the schedule store's changelog needs: its tombstones carry the
   * fired and cancel markers, and must outlive them. The larger of Kafka's default (a day) and the
   * longer of the two retentions.
   */
  public long changelogDeleteRetentionMs() {
    return Math.max(
        KAFKA_DEFAULT_DELETE_RETENTION_MS, Math.max(cancelRetentionMs(), firedRetentionMs()));
  }

  public long misfireThresholdMs() {
    return getLong(MISFIRE_THRESHOLD_CONFIG);
  }

  public long catchUpWindowMs() {
    return getLong(CATCH_UP_WINDOW_CONFIG);
  }

  public Duration targetTopicsRefresh() {
    return Duration.ofMillis(getLong(TARGET_TOPICS_REFRESH_CONFIG));
  }

  /** How long a stream thread waits for a target topic it has not seen before. */
  public Duration targetTopicsLookupTimeout() {
    return Duration.ofMillis(getLong(TARGET_TOPICS_LOOKUP_TIMEOUT_CONFIG));
  }

  /** How many target topics the service keeps metadata of. */
  public int targetTopicsMax() {
    return getInt(TARGET_TOPICS_MAX_CONFIG);
  }

  /** How long a target topic found absent is remembered as such. */
  public Duration targetTopicsAbsentRetention() {
    return Duration.ofMillis(getLong(TARGET_TOPICS_ABSENT_RETENTION_CONFIG));
  }

  public int maxHeaders() {
    return getInt(MAX_HEADERS_CONFIG);
  }

  /** Kafka properties given in the configuration: every key outside {@code delay.}. */
  public Map<String, Object> kafkaProperties() {
    Map<String, Object> kafka = new HashMap<>();
    originals()
        .forEach(
            (key, value) -> {
              if (!key.startsWith("delay.")) {
                kafka.put(key, value);
              }
            });
    return kafka;
  }

  private static void validateRegex(String name, Object value) {
    try {
      Pattern.compile(String.valueOf(value));
    } catch (PatternSyntaxException e) {
      throw new ConfigException(name, value, "not a valid regular expression: " + e.getMessage());
    }
  }
}

package dev.kdelay.topology;

import static org.apache.kafka.clients.consumer.ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG;
import static org.apache.kafka.clients.consumer.ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG;
import static org.apache.kafka.clients.consumer.ConsumerConfig.MAX_POLL_RECORDS_CONFIG;

import dev.kdelay.topology.internals.PolledRequests;
import dev.kdelay.topology.internals.store.BoundedMemoryRocksDbConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.UnaryOperator;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.streams.StreamsConfig;

/**
 * How kdelay runs Kafka Streams: the Streams, consumer and producer settings it derives from a
 * {@link DelayConfig}, and the producer limits its fire path must respect. The settings are what
 * kdelay needs to fire on time and to fail over quickly; every Kafka property the configuration
 * passes through wins over them (see {@link #streamsProperties}).
 *
 * <pre>{@code
 * KafkaStreams streams =
 *     new KafkaStreams(DelayTopology.build(config), StreamsTuning.streamsProperties(config));
 * }</pre>
 */
public final class StreamsTuning {

  private StreamsTuning() {}

  /**
   * The stream threads' producer {@code max.request.size}, as Kafka Streams resolves it: the {@code
   * producer.}-prefixed key wins over the plain one. A record larger than this fails the producer's
   * transaction, so kdelay never hands it one.
   */
  public static int producerMaxRequestBytes(DelayConfig config) {
    Object value = producerSetting(config, ProducerConfig.MAX_REQUEST_SIZE_CONFIG);
    return value == null ? PRODUCER_MAX_REQUEST_BYTES : Integer.parseInt(value.toString().trim());
  }

  /** Whether the stream threads' producer compresses: then a batch is smaller than its records. */
  public static boolean producerCompresses(DelayConfig config) {
    Object value = producerSetting(config, ProducerConfig.COMPRESSION_TYPE_CONFIG);
    return value != null && !"none".equalsIgnoreCase(value.toString().trim());
  }

  private static Object producerSetting(DelayConfig config, String key) {
    Map<String, Object> kafka = config.kafkaProperties();
    Object prefixed = kafka.get(StreamsConfig.producerPrefix(key));
    return prefixed != null ? prefixed : kafka.get(key);
  }

  /** The producer's default {@code max.request.size}. */
  private static final int PRODUCER_MAX_REQUEST_BYTES = 1024 * 1024;

  /** The producer's linger under exactly-once: longer than a fire commit's window. */
  private static final int EXACTLY_ONCE_LINGER_MS = 100;

  /** The restore consumer's bytes per partition per fetch (the consumer's default: 1 MiB). */
  private static final int RESTORE_FETCH_BYTES_PER_PARTITION = 8 * 1024 * 1024;

  /** The restore consumer's records per poll (the consumer's default: 1,000). */
  private static final int RESTORE_RECORDS_PER_POLL = 10_000;

  /** Every client's {@code request.timeout.ms} (Kafka's default: 30 s). */
  static final int REQUEST_TIMEOUT_MS = 10_000;

  /** The producers' {@code transaction.timeout.ms} (Kafka Streams' default: 10 s). */
  static final int TRANSACTION_TIMEOUT_MS = 20_000;

  /**
   * The Kafka Streams configuration of the service: kdelay's tuning first, then every pass-through
   * Kafka property, which wins where both set a key.
   */
  public static Properties streamsProperties(DelayConfig config) {
    Map<String, Object> passed = config.kafkaProperties();
    Properties props = new Properties();
    props.put(StreamsConfig.APPLICATION_ID_CONFIG, config.applicationId());
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, config.bootstrapServers());
    props.put(StreamsConfig.STATE_DIR_CONFIG, config.getString(DelayConfig.STATE_DIR_CONFIG));
    props.put(
        StreamsConfig.PROCESSING_GUARANTEE_CONFIG,
        config.getString(DelayConfig.PROCESSING_GUARANTEE_CONFIG));
    props.put(
        StreamsConfig.NUM_STREAM_THREADS_CONFIG,
        config.getInt(DelayConfig.NUM_STREAM_THREADS_CONFIG));
    props.put(
        StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG,
        config.getInt(DelayConfig.NUM_STANDBY_REPLICAS_CONFIG));
    props.put(
        StreamsConfig.COMMIT_INTERVAL_MS_CONFIG,
        config.getLong(DelayConfig.COMMIT_INTERVAL_CONFIG));
    // The stream thread blocks in poll() for at most poll.ms; wall-clock punctuations can only
    // run between polls, so this bounds how late an idle instance notices a due task.
    props.put(StreamsConfig.POLL_MS_CONFIG, config.getLong(DelayConfig.POLL_CONFIG));
    // The request and reroute topics need no timestamp alignment between them: order per id is
    // decided by request timestamps in the processor, so never idle waiting for the other one.
    props.put(StreamsConfig.MAX_TASK_IDLE_MS_CONFIG, StreamsConfig.MAX_TASK_IDLE_MS_DISABLED);
    // At least once, a fired record is visible once sent: do not let the producer linger. Exactly
    // once, it is visible only when its transaction commits, and the commit flushes the producer
    // whatever its linger, so lingering costs no lateness; it only saves the one small produce
    // request (and one wake-up of the sender thread) per record that linger 0 makes for the
    // four to six records a task writes.
    props.put(
        StreamsConfig.producerPrefix(ProducerConfig.LINGER_MS_CONFIG),
        StreamsConfig.AT_LEAST_ONCE.equals(
                config.getString(DelayConfig.PROCESSING_GUARANTEE_CONFIG))
            ? 0
            : EXACTLY_ONCE_LINGER_MS);
    // Prefixed, so set only when no plain key is passed through (the rule below): a plain
    // max.poll.records used to be overridden without a word.
    unlessPassed(passed, props, StreamsConfig::consumerPrefix, MAX_POLL_RECORDS_CONFIG, 1000);
    // Failover: the restore consumer adds the changelogs of tasks taken over one after the other,
    // and each waits for the fetch in flight, which an idle broker holds for fetch.max.wait.ms
    // (500 ms by default): a takeover of three tasks spent 1 s there before restoring anything.
    // Standbys are kept up to date by the same consumer, which now asks up to 10 times a second
    // when nothing changes. Prefixed, as it is the restore consumer's alone; so set only when no
    // plain key is passed through, which the prefixed one would silently override.
    unlessPassed(
        passed, props, StreamsConfig::restoreConsumerPrefix, FETCH_MAX_WAIT_MS_CONFIG, 100);
    // Restore: a fresh instance reads its whole changelog back. With the consumer's defaults
    // (1 MiB per partition per fetch, 1,000 records per poll), a 10 M-task restore took some 500
    // fetch round trips and 10,000 passes of the state updater. With larger steps the restore
    // consumer holds at most 8 MiB of heap per restoring partition (and fetch.max.bytes, 50 MiB,
    // per broker) while a fetch is consumed. Same rule as above for plain keys.
    unlessPassed(
        passed,
        props,
        StreamsConfig::restoreConsumerPrefix,
        MAX_PARTITION_FETCH_BYTES_CONFIG,
        RESTORE_FETCH_BYTES_PER_PARTITION);
    unlessPassed(
        passed,
        props,
        StreamsConfig::restoreConsumerPrefix,
        MAX_POLL_RECORDS_CONFIG,
        RESTORE_RECORDS_PER_POLL);
    // Under exactly_once_v2 (transaction version 2) a transaction's first produce to a partition
    // is refused with CONCURRENT_TRANSACTIONS while the coordinator still completes the previous
    // transaction, and the batches behind it with OUT_OF_ORDER_SEQUENCE_NUMBER. The producer
    // retries them with its general exponential back-off, 100 ms doubling to 1 s: when the broker
    // is slow to write the previous markers (its log cleaner busy after heavy runs) a commit waited
    // 0.1 + 0.2 + 0.4 + 0.8 s and more, stalling every fire of the thread for ~2 s. Retry within
    // tens of ms instead, as the producer itself does for this error before version 2 (20 ms).
    // Plain keys, for the same reason as below.
    props.put(CommonClientConfigs.RETRY_BACKOFF_MS_CONFIG, 20);
    props.put(CommonClientConfigs.RETRY_BACKOFF_MAX_MS_CONFIG, 100);
    // Failover: a killed instance's tasks are late by the session timeout (until the group
    // evicts it) plus a heartbeat (until the survivors rejoin); kdelay's peer eviction usually ends
    // that sooner. 6 s is the lowest session timeout a broker with default settings accepts
    // (group.min.session.timeout.ms). Lower costs evictions during GC pauses: see
    // docs/configuration.md, "Failover tuning".
    // The transaction timeout is a backstop: the dead instance's open transaction, which blocks
    // read_committed readers of every partition it wrote, is aborted by its tasks' new owner
    // right after the rebalance (OrphanedTransactions in the service). What the timeout must do
    // is outlast a broker's death: a live transaction held up by a dead, frozen or vanished
    // broker (its partitions move after broker.session.timeout.ms, 9 s; a request in flight to a
    // silent one waits the request timeout below, 10 s) and aborted by the broker on its timeout
    // makes every stream thread close its tasks as lost, and under exactly-once that wipes their
    // stores, each restored again from its changelog. With 5 s the cluster fault test's frozen
    // broker did that to both instances in the run compared; with 20 s the broker's own timeout no
    // longer does, though a freeze as long as 20 s can still end in a fence (docs/operations.md).
    // Plain keys, not consumer./producer.-prefixed ones: Kafka Streams lets a prefixed key win
    // over a plain one, so a prefixed default would silently override a user's plain one.
    props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 6_000);
    props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 1_500);
    props.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, TRANSACTION_TIMEOUT_MS);
    // A broker that vanishes without closing its connections (a host crash, a killed container or
    // pod, whose address goes with it) answers nothing: a request in flight to it waits out the
    // request timeout, and a stream thread's commit waits for it. With Kafka's 30 s, the compose
    // scenario's survivors were still held 31 s after the controller had fenced the dead broker
    // and moved its partitions; with 10 s, for 10 s (docs/operations.md, "When a broker dies"). A
    // slower answer is asked again, which the idempotent producer makes safe. Plain key, as above.
    props.put(CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG, REQUEST_TIMEOUT_MS);
    // kdelay has no global stores; Kafka Streams 4.3 warns at every start until this is set.
    props.put(StreamsConfig.PROCESSING_EXCEPTION_HANDLER_GLOBAL_ENABLED_CONFIG, true);
    props.put(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG, BoundedMemoryRocksDbConfig.class);
    props.put(
        BoundedMemoryRocksDbConfig.BLOCK_CACHE_BYTES_CONFIG,
        config.getLong(DelayConfig.ROCKSDB_BLOCK_CACHE_BYTES_CONFIG));
    props.put(
        BoundedMemoryRocksDbConfig.WRITE_BUFFER_BYTES_CONFIG,
        config.getLong(DelayConfig.ROCKSDB_WRITE_BUFFER_BYTES_CONFIG));
    props.putAll(passed);
    // Appended to the main consumer's interceptors that apply, which a prefixed key would replace.
    List<String> interceptors = new ArrayList<>(mainConsumerInterceptors(props));
    interceptors.add(PolledRequests.class.getName());
    props.put(
        StreamsConfig.mainConsumerPrefix(ConsumerConfig.INTERCEPTOR_CLASSES_CONFIG),
        String.join(",", interceptors));
    if (!config.tenants().isEmpty()) {
      props.put(
          StreamsConfig.mainConsumerPrefix(PolledRequests.TENANT_TOPICS_CONFIG),
          PolledRequests.tenantTopics(config.tenants()));
    }
    return props;
  }

  /**
   * Sets a client's prefixed key only when no plain key is passed through: Kafka Streams lets a
   * prefixed key win over a plain one, so a prefixed default would silently override the user's.
   */
  private static void unlessPassed(
      Map<String, Object> passed,
      Properties props,
      UnaryOperator<String> prefix,
      String key,
      Object value) {
    if (!passed.containsKey(key)) {
      props.put(prefix.apply(key), value);
    }
  }

  /**
   * The interceptors the main consumer would have from {@code props}: Kafka Streams lets {@code
   * main.consumer.} win over {@code consumer.}, and that over the plain key.
   */
  private static List<String> mainConsumerInterceptors(Properties props) {
    String key = ConsumerConfig.INTERCEPTOR_CLASSES_CONFIG;
    for (String name :
        List.of(StreamsConfig.mainConsumerPrefix(key), StreamsConfig.consumerPrefix(key), key)) {
      if (props.containsKey(name)) {
        Object value = props.get(name);
        List<?> classes =
            value instanceof Class<?> one
                ? List.of(one)
                : (List<?>) ConfigDef.parseType(name, value, Type.LIST);
        List<String> names = new ArrayList<>();
        for (Object entry : classes) {
          names.add(entry instanceof Class<?> type ? type.getName() : String.valueOf(entry));
        }
        return names;
      }
    }
    return List.of();
  }

  /**
   * How often Kafka Streams commits on its own: its {@code commit.interval.ms} as in effect in an
   * application's configuration (a pass-through Kafka property may set it apart from {@code
   * delay.commit.interval.ms}), or {@code fallbackMs} if it is not set there.
   */
  public static long commitIntervalMs(Map<String, Object> appConfigs, long fallbackMs) {
    Object configured = appConfigs.get(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG);
    if (configured instanceof Number number) {
      return number.longValue();
    }
    if (configured instanceof String text) {
      try {
        return Long.parseLong(text.trim());
      } catch (NumberFormatException e) {
        // Kafka Streams refuses such a configuration before any processor starts.
      }
    }
    return fallbackMs;
  }
}

package dev.kdelay.benchmarks;

import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.topology.DelayConfig;
import java.util.HashMap;
import java.util.Map;

/**
 * The applications the benchmark compares. All take their Kafka Streams configuration from {@link
 * dev.kdelay.topology.StreamsTuning#streamsProperties}, so the ceiling and the textbook delay app
 * run with exactly kdelay's settings: exactly_once_v2, stream threads, commit interval, poll time,
 * producer linger, max poll records.
 */
enum AppKind {
  /** kdelay as the service runs it: {@code DelayService} with {@code DelayTopology}. */
  KDELAY,
  /** The ceiling: a source wired straight to a sink, nothing stored. */
  PASS_THROUGH,
  /**
   * What a team writes in an afternoon with Kafka Streams alone to delay messages: {@link
   * dev.kdelay.benchmarks.textbook.TextbookDelay}.
   */
  TEXTBOOK;

  /**
   * The configuration of one instance.
   *
   * @param bootstrap the broker
   * @param applicationId the Kafka Streams application id
   * @param stateDir its state directory
   * @param input the requests topic (kdelay, textbook) or the input topic (pass-through)
   * @param overrides settings the benchmark was told to use for every application ({@code --set})
   */
  static ServiceConfig config(
      String bootstrap,
      String applicationId,
      String stateDir,
      String input,
      Map<String, String> overrides) {
    Map<String, Object> props = new HashMap<>();
    props.put(DelayConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(DelayConfig.APPLICATION_ID_CONFIG, applicationId);
    props.put(DelayConfig.STATE_DIR_CONFIG, stateDir);
    props.put(DelayConfig.REQUESTS_TOPIC_CONFIG, input);
    props.put(DelayConfig.DLQ_TOPIC_CONFIG, input + "-dlq");
    props.put(ServiceConfig.HTTP_PORT_CONFIG, 0);
    props.put(ServiceConfig.TOPIC_PARTITIONS_CONFIG, Benchmark.PARTITIONS);
    props.putAll(overrides);
    return new ServiceConfig(props);
  }
}

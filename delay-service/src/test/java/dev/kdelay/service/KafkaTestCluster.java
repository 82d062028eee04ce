package dev.kdelay.service;

/** A Kafka cluster integration tests run against; {@link KafkaClusterExtension} provides it. */
public interface KafkaTestCluster extends AutoCloseable {

  /** The {@code host:port} list clients connect to. */
  String bootstrapServers();

  /** Stops the cluster. */
  @Override
  void close() throws Exception;
}

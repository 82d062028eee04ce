/**
 * The single-node Apache Kafka broker kdelay runs on itself: {@link
 * dev.kdelay.service.broker.EmbeddedKafka}, in this JVM when no bootstrap servers are configured,
 * and its settings as named {@link dev.kdelay.service.broker.BrokerProfile}s (Apache Kafka's
 * defaults, or the tuning kdelay recommends), one definition shared by the service, the tests and
 * the benchmark.
 */
package dev.kdelay.service.broker;

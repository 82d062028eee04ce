/**
 * The service's configuration: its keys ({@link dev.kdelay.service.config.ServiceConfig}, which
 * holds the topology's {@code DelayConfig} too), where they are read from ({@link
 * dev.kdelay.service.config.ConfigSources}: a properties file and the environment), which of them
 * are secrets never to be printed ({@code SecretKeys}, package-private), and the properties each
 * plain Kafka client gets from them ({@link dev.kdelay.service.config.ClientProperties}).
 */
package dev.kdelay.service.config;

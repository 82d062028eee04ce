package dev.kdelay.service.config;

import java.util.List;
import java.util.Locale;

/**
 * Which configuration keys hold secrets, so that kdelay never prints their values: in configuration
 * errors, in its own log lines, anywhere.
 *
 * <p>Kafka's clients mask the keys they declare as passwords ({@code sasl.jaas.config}, {@code
 * ssl.key.password}, {@code ssl.keystore.key}, ...) when they log their configuration. kdelay also
 * sees keys no Kafka client declares (a misspelt one, a Schema Registry's {@code
 * basic.auth.user.info}, a {@code producer.}-prefixed password), so it decides by the name: a key
 * is secret if its name says password, secret, JAAS, token, credential, private or user info, or it
 * ends in {@code .key}. Keys that only say where a secret is ({@code ...file}, {@code ...location})
 * are not: their values are paths, and an error about a path must show the path.
 *
 * <pre>{@code
 * String shown = SecretKeys.isSecret(key) ? SecretKeys.HIDDEN : value;
 * }</pre>
 */
final class SecretKeys {

  /** What is printed in place of a secret value; the text Kafka's own clients print. */
  static final String HIDDEN = "[hidden]";

  private static final List<String> SECRET_WORDS =
      List.of("password", "secret", "jaas", "token", "credential", "private", "user.info");

  private static final List<String> LOCATION_SUFFIXES = List.of(".file", ".location");

  private SecretKeys() {}

  /**
   * Whether a key holds a secret.
   *
   * @param key a configuration key, a {@code delay.*} key or a (possibly prefixed) Kafka property
   * @return true if its value must never be printed
   */
  static boolean isSecret(String key) {
    String name = key.toLowerCase(Locale.ROOT).replace('_', '.');
    if (LOCATION_SUFFIXES.stream().anyMatch(name::endsWith)) {
      return false;
    }
    return name.endsWith(".key") || SECRET_WORDS.stream().anyMatch(name::contains);
  }
}

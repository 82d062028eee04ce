package dev.kdelay.service.config;

import static java.util.Objects.requireNonNull;

import dev.kdelay.schemas.LogValues;
import dev.kdelay.topology.DelayConfig;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.ConfigValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loads the service's {@link ServiceConfig} from a properties file and the environment.
 *
 * <p>Sources, later ones winning where both set a key:
 *
 * <ol>
 *   <li>the properties file given with {@code --config FILE}: {@code delay.*} keys and any Kafka
 *       client, Streams or security property;
 *   <li>environment variables {@code DELAY_<NAME>}, mapped by {@link
 *       DelayConfig#keyOfEnvironmentVariable} ({@code DELAY_REQUESTS_TOPIC} is {@code
 *       delay.requests.topic});
 *   <li>environment variables {@code DELAY_KAFKA_<NAME>}, passed through as the Kafka property
 *       {@code <name>} ({@code DELAY_KAFKA_SECURITY_PROTOCOL} is {@code security.protocol}).
 * </ol>
 *
 * <pre>{@code
 * ServiceConfig config = ConfigSources.load(Optional.of(Path.of("kdelay.properties")), System.getenv());
 * }</pre>
 */
public final class ConfigSources {
  private static final Logger LOG = LoggerFactory.getLogger(ConfigSources.class);

  /** Prefix of the environment variables that set kdelay's own keys. */
  public static final String ENV_PREFIX = "DELAY_";

  /** Prefix of the environment variables that pass a Kafka property through. */
  public static final String KAFKA_ENV_PREFIX = "DELAY_KAFKA_";

  private ConfigSources() {}

  /**
   * Loads and validates the configuration.
   *
   * @param file the properties file, if one was given
   * @param environment the process environment; variables outside {@code DELAY_*} are ignored
   * @return the validated configuration
   * @throws ConfigException naming, for every bad setting, the key, the value received, where it
   *     came from and what is allowed; or if the file cannot be read
   */
  public static ServiceConfig load(Optional<Path> file, Map<String, String> environment) {
    requireNonNull(file, "file cannot be null");
    requireNonNull(environment, "environment cannot be null");
    Settings settings = new Settings();
    file.ifPresent(path -> readFile(path, settings));
    new TreeMap<>(environment).forEach((name, value) -> readVariable(name, value, settings));
    settings.dropRetired();
    settings.validate(ServiceConfig.configDef());
    return new ServiceConfig(settings.values);
  }

  /**
   * The configuration key an environment variable sets, or empty if the variable is not kdelay's.
   *
   * @param variable an environment variable name
   * @return the key: a Kafka property for {@code DELAY_KAFKA_*}, a {@code delay.*} key for other
   *     {@code DELAY_*} variables
   */
  static Optional<String> keyOfVariable(String variable) {
    if (variable.startsWith(KAFKA_ENV_PREFIX) && variable.length() > KAFKA_ENV_PREFIX.length()) {
      String name = variable.substring(KAFKA_ENV_PREFIX.length());
      return Optional.of(name.toLowerCase(Locale.ROOT).replace('_', '.'));
    }
    if (variable.startsWith(ENV_PREFIX) && variable.length() > ENV_PREFIX.length()) {
      return Optional.of(DelayConfig.keyOfEnvironmentVariable(variable));
    }
    return Optional.empty();
  }

  private static void readFile(Path path, Settings settings) {
    Properties properties = new Properties();
    try (Reader reader = Files.newBufferedReader(path, StandardCharsets.UTF_8)) {
      properties.load(reader);
    } catch (IOException e) {
      throw new ConfigException("Cannot read configuration file " + path + ": " + e);
    }
    for (String key : properties.stringPropertyNames()) {
      settings.put(key, properties.getProperty(key), "file " + path);
    }
  }

  private static void readVariable(String name, String value, Settings settings) {
    keyOfVariable(name).ifPresent(key -> settings.put(key, value, "environment variable " + name));
  }

  /**
   * The merged settings and where each came from, so that errors can say so. Errors never show a
   * secret's value (see {@link SecretKeys}), nor the value of an unknown key: a misspelt {@code
   * DELAY_SASL_JAAS_CONFIGG} must not print the password it carries.
   */
  static final class Settings {
    private final Map<String, String> values = new HashMap<>();
    private final Map<String, String> sources = new HashMap<>();

    void put(String key, String value, String source) {
      values.put(key, value);
      sources.put(key, source);
    }

    /**
     * Checks the {@code delay.*} settings against their definition.
     *
     * @throws ConfigException naming every unknown key and every bad value
     */
    /**
     * Forgets the keys kdelay no longer uses ({@link DelayConfig#RETIRED_KEYS}), saying so: an
     * upgrade must not stop on a key that did nothing, nor leave it unmentioned.
     */
    void dropRetired() {
      for (String key : new TreeMap<>(values).keySet()) {
        String reason = DelayConfig.RETIRED_KEYS.get(key);
        if (reason != null) {
          LOG.warn(
              "event=config-key-retired key={} from={} ignored=true why={}",
              key,
              LogValues.quote(sources.get(key)),
              LogValues.quote(reason));
          values.remove(key);
          sources.remove(key);
        }
      }
    }

    void validate(ConfigDef definition) {
      List<String> errors = new ArrayList<>();
      values.keySet().stream()
          .filter(
              key ->
                  key.startsWith("delay.")
                      && !definition.names().contains(key)
                      && !DelayConfig.isTenantKey(key))
          .sorted()
          .forEach(
              key ->
                  errors.add(
                      key + " (from " + sources.get(key) + "): unknown kdelay configuration key"));
      Map<String, String> known = new HashMap<>(values);
      known.keySet().retainAll(definition.names());
      for (ConfigValue checked : definition.validate(known)) {
        if (!checked.errorMessages().isEmpty() && values.containsKey(checked.name())) {
          errors.add(
              describe(checked.name(), definition)
                  + ": "
                  // The first message is the cause; later ones repeat it (a value that did not
                  // parse is then also "null").
                  + hideSecret(checked.name(), checked.errorMessages().get(0), definition)
                  + " (allowed: "
                  + allowed(definition.configKeys().get(checked.name()))
                  + ")");
        }
      }
      if (!errors.isEmpty()) {
        if (errors.stream().anyMatch(error -> error.endsWith("unknown kdelay configuration key"))) {
          errors.add(
              "Known keys: " + String.join(", ", new TreeMap<>(definition.configKeys()).keySet()));
        }
        throw new ConfigException("Invalid configuration:\n  " + String.join("\n  ", errors));
      }
    }

    private String describe(String key, ConfigDef definition) {
      String value = isSecret(key, definition) ? SecretKeys.HIDDEN : values.get(key);
      return key + "=" + value + " (from " + sources.get(key) + ")";
    }

    /** Kafka's validators quote the value they reject; a secret's is cut out of the message. */
    private String hideSecret(String key, String message, ConfigDef definition) {
      String value = values.get(key);
      if (!isSecret(key, definition) || value == null || value.isBlank()) {
        return message;
      }
      return message.replace(value, SecretKeys.HIDDEN).replace(value.trim(), SecretKeys.HIDDEN);
    }

    private static boolean isSecret(String key, ConfigDef definition) {
      ConfigDef.ConfigKey defined = definition.configKeys().get(key);
      return SecretKeys.isSecret(key)
          || (defined != null && defined.type == ConfigDef.Type.PASSWORD);
    }

    private static String allowed(ConfigDef.ConfigKey key) {
      String type = key.type.name().toLowerCase(Locale.ROOT);
      // Validators declared as lambdas have no readable toString; their message says enough.
      boolean readable =
          key.validator != null
              && !key.validator.getClass().isSynthetic()
              && !key.validator.getClass().isHidden();
      return readable ? type + " " + key.validator : type;
    }
  }
}

package dev.kdelay.service.docs;

import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.topology.DelayConfig;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.ConfigKey;

/**
 * Renders the configuration reference of {@code docs/configuration.md} from the {@link ConfigDef}s
 * that define the keys ({@link ServiceConfig#configDef()}, which holds {@link
 * DelayConfig#configDef()}), as Kafka renders its own tables with {@code ConfigDef.toHtml}.
 *
 * <p>The text sits in the document between {@link #BEGIN} and {@link #END}; what is around it is
 * written by hand. {@link ConfigurationDocTest} fails when the two differ, and rewrites the
 * document when run with {@code -Dkdelay.docs.regenerate=true}.
 */
final class ConfigurationReference {

  static final String BEGIN =
      "<!-- BEGIN GENERATED from ServiceConfig.configDef(): do not edit by hand -->";

  static final String END = "<!-- END GENERATED -->";

  private static final long SECOND = 1_000;
  private static final long MINUTE = 60 * SECOND;
  private static final long HOUR = 60 * MINUTE;
  private static final long DAY = 24 * HOUR;
  private static final long MIB = 1024 * 1024;

  private ConfigurationReference() {}

  /** The generated text, without the markers, ending with a line break. */
  static String render() {
    ConfigDef all = ServiceConfig.configDef();
    Set<String> topology = DelayConfig.configDef().names();
    List<ConfigKey> topologyKeys =
        all.configKeys().values().stream().filter(key -> topology.contains(key.name)).toList();
    List<ConfigKey> serviceKeys =
        all.configKeys().values().stream().filter(key -> !topology.contains(key.name)).toList();
    StringBuilder out = new StringBuilder();
    out.append("### Keys of the topology (`DelayConfig`)\n\n");
    out.append("Requests, topics, firing, the store and Kafka Streams.\n\n");
    table(out, topologyKeys);
    out.append("\n### Keys of the service (`ServiceConfig`)\n\n");
    out.append(
        "HTTP endpoints, security, the topics the service creates, the embedded broker.\n\n");
    table(out, serviceKeys);
    return out.toString();
  }

  private static void table(StringBuilder out, List<ConfigKey> keys) {
    out.append("| key (environment variable) | type | default | valid values | importance |")
        .append(" meaning |\n");
    out.append("| --- | --- | --- | --- | --- | --- |\n");
    for (ConfigKey key : keys) {
      out.append("| `")
          .append(key.name)
          .append("` (`")
          .append(environmentVariable(key.name))
          .append("`) | ")
          .append(key.type.name().toLowerCase(Locale.ROOT))
          .append(" | ")
          .append(defaultValue(key))
          .append(" | ")
          .append(validValues(key))
          .append(" | ")
          .append(key.importance.name().toLowerCase(Locale.ROOT))
          .append(" | ")
          .append(cell(key.documentation))
          .append(" |\n");
    }
  }

  /** {@code delay.requests.topic} is set by {@code DELAY_REQUESTS_TOPIC}. */
  static String environmentVariable(String key) {
    return key.toUpperCase(Locale.ROOT).replace('.', '_');
  }

  private static String defaultValue(ConfigKey key) {
    if (!key.hasDefault() || key.defaultValue == null) {
      return "unset";
    }
    String text = ConfigDef.convertToString(key.defaultValue, key.type);
    if (text == null || text.isEmpty()) {
      return "empty";
    }
    String readable = readable(key.name, key.defaultValue);
    return "`" + text + "`" + (readable.isEmpty() ? "" : " (" + readable + ")");
  }

  /** Milliseconds and bytes in the unit a reader thinks in, when the value is a round one. */
  private static String readable(String name, Object value) {
    if (!(value instanceof Number number)) {
      return "";
    }
    long n = number.longValue();
    if (name.endsWith(".ms") && n >= SECOND) {
      for (long[] unit : new long[][] {{DAY, 'd'}, {HOUR, 'h'}, {MINUTE, 'm'}, {SECOND, 's'}}) {
        if (n % unit[0] == 0) {
          return n / unit[0] + " " + unitName((char) unit[1], n / unit[0]);
        }
      }
    }
    if (name.endsWith(".bytes") && n >= MIB && n % MIB == 0) {
      return n / MIB + " MiB";
    }
    return "";
  }

  private static String unitName(char unit, long count) {
    String name =
        switch (unit) {
          case 'd' -> "day";
          case 'h' -> "hour";
          case 'm' -> "minute";
          default -> "second";
        };
    return count == 1 ? name : name + "s";
  }

  private static String validValues(ConfigKey key) {
    if (key.validator == null) {
      return "";
    }
    String text = key.validator.toString();
    // A method reference has no description of its own, only a class name that changes per run.
    if (text.contains("$$Lambda") || text.contains("$Lambda")) {
      return "";
    }
    return cell(text);
  }

  /**
   * A table cell: one line, no column break, and the characters Markdown would take for markup (an
   * HTML tag, emphasis) escaped; an underscore inside a word ({@code exactly_once_v2}) is not
   * markup and stays as it is.
   */
  private static String cell(String text) {
    if (text == null) {
      return "";
    }
    return text.replace("\n", " ")
        .replace("|", "\\|")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("*", "\\*")
        .replaceAll("(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])", "\\\\_")
        .strip();
  }
}

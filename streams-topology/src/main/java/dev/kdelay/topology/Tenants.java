package dev.kdelay.topology;

import dev.kdelay.schemas.TenantIds;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.apache.kafka.common.config.ConfigException;

/**
 * The tenants of a deployment ({@code delay.tenants}): teams that share it, each decided by Kafka
 * and not by anything a producer writes.
 *
 * <ul>
 *   <li>A tenant schedules through a request topic of its own, {@code <requests topic>.<tenant>}:
 *       Kafka's ACLs on that topic decide who schedules as whom.
 *   <li>Its schedule ids are its own ({@link TenantIds}): no other tenant can touch them.
 *   <li>Its tasks may target only the topics {@code delay.tenant.<tenant>.target.topic.allow}
 *       matches, by default those named {@code <tenant>.*}; the deployment's target policy applies
 *       too.
 *   <li>Its dead letters go to {@code <dead-letter topic>.<tenant>}, which ACLs can let it read.
 *   <li>It may hold at most {@code delay.tenant.<tenant>.max.pending} pending schedules, each
 *       partition its share.
 * </ul>
 *
 * <p>The shared request topic stays: who can write to it acts for every tenant (an id there in
 * {@link TenantIds}' qualified form addresses a tenant's schedule). With no tenants, one namespace,
 * as before.
 */
public final class Tenants {

  /** The prefix of a tenant's own keys: {@code delay.tenant.<tenant>.<key>}. */
  public static final String KEY_PREFIX = "delay.tenant.";

  /** A tenant's own target allowlist: {@code delay.tenant.<tenant>.target.topic.allow}. */
  public static final String TARGET_TOPIC_ALLOW_SUFFIX = ".target.topic.allow";

  /**
   * A tenant's largest payload, at most {@code delay.max.payload.bytes}: {@code
   * delay.tenant.<tenant>.max.payload.bytes}.
   */
  public static final String MAX_PAYLOAD_BYTES_SUFFIX = ".max.payload.bytes";

  /**
   * The most pending schedules a tenant may hold, each partition of the request topic its share:
   * {@code delay.tenant.<tenant>.max.pending}.
   */
  public static final String MAX_PENDING_SUFFIX = ".max.pending";

  private static final List<String> SUFFIXES =
      List.of(TARGET_TOPIC_ALLOW_SUFFIX, MAX_PAYLOAD_BYTES_SUFFIX, MAX_PENDING_SUFFIX);

  /** No tenants: one namespace. */
  public static final Tenants NONE = new Tenants(List.of());

  /**
   * One tenant.
   *
   * @param name its name, lowercase letters and digits
   * @param requestsTopic the request topic it schedules through
   * @param dlqTopic the topic of its dead letters
   * @param targetAllow what its targets must match in full
   * @param maxPayloadBytes its largest payload
   * @param maxPending the most pending schedules it may hold; {@link Long#MAX_VALUE} for no limit
   */
  public record Tenant(
      String name,
      String requestsTopic,
      String dlqTopic,
      Pattern targetAllow,
      int maxPayloadBytes,
      long maxPending) {

    /**
     * The most pending schedules one of {@code partitions} partitions may hold for it: its share,
     * rounded up, so that the whole holds at least the limit when ids spread evenly.
     */
    public long maxPendingPerPartition(int partitions) {
      return maxPending == Long.MAX_VALUE
          ? Long.MAX_VALUE
          : (maxPending + partitions - 1) / Math.max(1, partitions);
    }
  }

  private final Map<String, Tenant> byName = new LinkedHashMap<>();
  private final Map<String, Tenant> byRequestsTopic = new LinkedHashMap<>();
  private final List<String> dlqTopics;

  private Tenants(List<Tenant> tenants) {
    for (Tenant tenant : tenants) {
      byName.put(tenant.name(), tenant);
      byRequestsTopic.put(tenant.requestsTopic(), tenant);
    }
    this.dlqTopics = tenants.stream().map(Tenant::dlqTopic).toList();
  }

  /**
   * The tenants a configuration names.
   *
   * @param names {@code delay.tenants}: comma-separated
   * @param maxPayloadBytes {@code delay.max.payload.bytes}, the most a tenant's may be
   * @param setting the value of a tenant's own key ({@code delay.tenant.<tenant>.*}), if set
   * @throws ConfigException if a name is not lowercase letters and digits, is there twice, or a
   *     tenant's key has a value that cannot be read
   */
  static Tenants of(
      String names,
      String requestsTopic,
      String dlqTopic,
      int maxPayloadBytes,
      java.util.function.Function<String, Optional<String>> setting) {
    List<Tenant> tenants = new ArrayList<>();
    List<String> seen = new ArrayList<>();
    for (String part : names.split(",", -1)) {
      String name = part.strip();
      if (name.isEmpty() && names.isBlank()) {
        break;
      }
      if (!TenantIds.NAME.matcher(name).matches()) {
        throw new ConfigException(
            DelayConfig.TENANTS_CONFIG,
            names,
            "'" + name + "' is not a tenant name: 1 to 32 lowercase letters and digits");
      }
      if (seen.contains(name)) {
        throw new ConfigException(DelayConfig.TENANTS_CONFIG, names, name + " is there twice");
      }
      seen.add(name);
      String allow =
          setting
              .apply(KEY_PREFIX + name + TARGET_TOPIC_ALLOW_SUFFIX)
              // a tenant's name is letters and digits: nothing in it to escape
              .orElse(name + "\\..*");
      Pattern pattern;
      try {
        pattern = Pattern.compile(allow);
      } catch (PatternSyntaxException e) {
        throw new ConfigException(
            KEY_PREFIX + name + TARGET_TOPIC_ALLOW_SUFFIX,
            allow,
            "not a valid regular expression: " + e.getMessage());
      }
      String payloadKey = KEY_PREFIX + name + MAX_PAYLOAD_BYTES_SUFFIX;
      int maxPayload =
          setting
              .apply(payloadKey)
              .map(value -> bytes(payloadKey, value, maxPayloadBytes))
              .orElse(maxPayloadBytes);
      String pendingKey = KEY_PREFIX + name + MAX_PENDING_SUFFIX;
      long maxPending =
          setting.apply(pendingKey).map(value -> count(pendingKey, value)).orElse(Long.MAX_VALUE);
      tenants.add(
          new Tenant(
              name,
              requestsTopic + "." + name,
              dlqTopic + "." + name,
              pattern,
              maxPayload,
              maxPending));
    }
    return tenants.isEmpty() ? NONE : new Tenants(tenants);
  }

  private static long count(String key, String value) {
    try {
      long count = Long.parseLong(value.strip());
      if (count >= 1) {
        return count;
      }
    } catch (NumberFormatException e) {
      // said below
    }
    throw new ConfigException(key, value, "a number of schedules, at least 1");
  }

  private static int bytes(String key, String value, int most) {
    try {
      int bytes = Integer.parseInt(value.strip());
      if (bytes >= 0 && bytes <= most) {
        return bytes;
      }
    } catch (NumberFormatException e) {
      // said below
    }
    throw new ConfigException(key, value, "a number of bytes from 0 to " + most);
  }

  /**
   * The tenant a key of its own names ({@code delay.tenant.<tenant>.<setting>}, for a setting a
   * tenant has), or empty if the key is none.
   */
  public static Optional<String> tenantOfKey(String key) {
    if (!key.startsWith(KEY_PREFIX)) {
      return Optional.empty();
    }
    for (String suffix : SUFFIXES) {
      if (key.endsWith(suffix) && key.length() > KEY_PREFIX.length() + suffix.length()) {
        return Optional.of(key.substring(KEY_PREFIX.length(), key.length() - suffix.length()));
      }
    }
    return Optional.empty();
  }

  /** Whether there are none: one namespace. */
  public boolean isEmpty() {
    return byName.isEmpty();
  }

  /** Every tenant, in the configuration's order. */
  public Collection<Tenant> all() {
    return byName.values();
  }

  /** The tenant of a name. */
  public Optional<Tenant> named(String name) {
    return Optional.ofNullable(byName.get(name));
  }

  /** The tenant whose request topic this is. */
  public Optional<Tenant> ofRequestsTopic(String topic) {
    return Optional.ofNullable(byRequestsTopic.get(topic));
  }

  /** The tenants' request topics. */
  public List<String> requestsTopics() {
    return List.copyOf(byRequestsTopic.keySet());
  }

  /** The tenants' dead-letter topics. */
  public List<String> dlqTopics() {
    return dlqTopics;
  }

  @Override
  public String toString() {
    return String.join(",", byName.keySet());
  }
}

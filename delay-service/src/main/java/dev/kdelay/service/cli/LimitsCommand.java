package dev.kdelay.service.cli;

import dev.kdelay.service.limits.LimitsTopic;
import dev.kdelay.topology.DelayConfig;
import dev.kdelay.topology.FireRateLimits;
import dev.kdelay.topology.FireRateLimits.Limit;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Timer;

/**
 * {@code limits list | set | clear}: the fire-rate limits set while kdelay runs, written to its
 * limits topic, which every instance follows.
 *
 * <pre>
 * kdelay limits list
 * kdelay limits set TOPIC RATE[/BURST]     fires a second, and the most at once
 * kdelay limits set TOPIC none             no limit, whatever the configuration says
 * kdelay limits clear TOPIC                back to the configuration's limit, if any
 * </pre>
 *
 * <p>{@code TOPIC} may be {@code tenant:NAME}, the limit of all of a tenant's fires.
 *
 * @param verb list, set or clear
 * @param line the rest of the command line
 */
public record LimitsCommand(String verb, CommandLine line) {

  private static final Duration READ_TIMEOUT = Duration.ofSeconds(30);

  /**
   * Reads the verb and checks its arguments.
   *
   * @param args the arguments after {@code limits}
   * @throws UsageException if the verb is unknown or its arguments are wrong
   */
  public static LimitsCommand parse(List<String> args) {
    boolean named = !args.isEmpty() && !args.get(0).startsWith("-");
    String verb = named ? args.get(0) : "list";
    List<String> rest = named ? args.subList(1, args.size()) : args;
    CommandLine line = CommandLine.parse(rest, ClientOptions.OPTIONS, Set.of());
    int positionals =
        switch (verb) {
          case "list" -> 0;
          case "set" -> 2;
          case "clear" -> 1;
          default -> throw new UsageException("unknown limits verb '" + verb + "'");
        };
    if (line.positionals().size() != positionals) {
      throw new UsageException(
          switch (verb) {
            case "set" -> "limits set needs TOPIC and RATE[/BURST] (or none)";
            case "clear" -> "limits clear needs TOPIC";
            default -> "limits list takes no arguments";
          });
    }
    if (!verb.equals("list") && !FireRateLimits.isSubject(line.positionals().get(0))) {
      throw new UsageException(
          "'"
              + line.positionals().get(0)
              + "' is not a topic name, nor tenant: and a tenant's name");
    }
    if (verb.equals("set")) {
      try {
        LimitsTopic.readValue(line.positionals().get(1));
      } catch (IllegalArgumentException e) {
        throw new UsageException(e.getMessage());
      }
    }
    return new LimitsCommand(verb, line);
  }

  /** Runs the verb. */
  public int run(ClientOptions options, PrintStream out) {
    String topic = limitsTopic(options);
    return switch (verb) {
      case "set" ->
          write(options, topic, line.positionals().get(0), line.positionals().get(1), out);
      case "clear" -> write(options, topic, line.positionals().get(0), null, out);
      default -> list(options, topic, out);
    };
  }

  /** The limits topic: as configured, else the one beside the requests topic the options name. */
  static String limitsTopic(ClientOptions options) {
    String configured = options.config().getString(DelayConfig.FIRE_RATE_LIMITS_TOPIC_CONFIG);
    return configured.isEmpty() ? options.requestsTopic() + "-limits" : configured;
  }

  private static int write(
      ClientOptions options, String topic, String target, String value, PrintStream out) {
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(
            options.producerProperties(), new StringSerializer(), new StringSerializer())) {
      RecordMetadata written =
          ClientOptions.awaitAck(
              producer.send(
                  new ProducerRecord<>(topic, target, value == null ? null : value.strip())),
              "the limit of " + target);
      out.printf(
          "%s for %s (%s-%d@%d); every instance applies it to the tasks that come due from now%n",
          value == null ? "Cleared the limit set" : "Set " + value.strip(),
          target,
          written.topic(),
          written.partition(),
          written.offset());
    }
    return CommandLine.OK;
  }

  private static int list(ClientOptions options, String topic, PrintStream out) {
    Map<String, Optional<Limit>> set = read(options, topic);
    FireRateLimits configured = options.config().fireRateLimits();
    FireRateLimits effective = configured.overriddenBy(set);
    Set<String> targets = new TreeSet<>(configured.byTopic().keySet());
    targets.addAll(set.keySet());
    if (targets.isEmpty()) {
      out.println("No fire-rate limits: every topic fires as fast as its tasks come due.");
      return CommandLine.OK;
    }
    for (String target : targets) {
      out.printf(
          "%s %s (%s)%n",
          target,
          effective.of(target).map(Limit::toString).orElse("none"),
          set.containsKey(target) ? "set in " + topic : "configured");
    }
    return CommandLine.OK;
  }

  /** What the limits topic holds now, read to its end. */
  private static Map<String, Optional<Limit>> read(ClientOptions options, String topic) {
    Map<String, Object> props = options.consumerProperties();
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    Map<String, Optional<Limit>> set = new TreeMap<>();
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> partitions = LimitsTopic.fromBeginning(consumer, topic, READ_TIMEOUT);
      if (partitions.isEmpty()) {
        return set; // no instance has created it yet: nothing set
      }
      Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, READ_TIMEOUT);
      Timer timer = Time.SYSTEM.timer(READ_TIMEOUT);
      while (partitions.stream().anyMatch(p -> consumer.position(p) < ends.get(p))) {
        if (timer.isExpired()) {
          throw new KafkaException("the limits topic " + topic + " was not read within 30 s");
        }
        for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
          // one the instances cannot read changes nothing there either (they log it)
          LimitsTopic.read(record).applyTo(set);
        }
        timer.update();
      }
    }
    return set;
  }
}

package dev.kdelay.service.cli;

import dev.kdelay.client.FiredTask;
import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.service.DelayServiceException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * {@code watch [--from-beginning] TOPIC}: prints each record of a target topic as a {@code
 * read_committed} consumer sees it, that is once its transaction committed, with its lateness:
 * receipt time minus due time. Runs until ctrl-C.
 *
 * @param topic the target topic
 * @param fromBeginning whether to start at the topic's earliest records rather than its end
 */
public record WatchCommand(String topic, boolean fromBeginning) {

  public static final Set<String> OPTIONS = ClientOptions.OPTIONS;
  public static final Set<String> FLAGS = Set.of("--from-beginning");

  private static final Duration POLL_TIMEOUT = Duration.ofMillis(500);

  /**
   * Reads the command's arguments.
   *
   * @throws UsageException unless exactly one topic is given
   */
  public static WatchCommand parse(CommandLine line) {
    return new WatchCommand(line.singlePositional("TOPIC"), line.flag("--from-beginning"));
  }

  /** Prints records until the JVM is asked to stop (ctrl-C, SIGTERM). */
  public int run(ClientOptions options, PrintStream out) {
    CountDownLatch closed = new CountDownLatch(1);
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(
            consumerProperties(options), new StringDeserializer(), new StringDeserializer())) {
      // wakeup() is the one consumer method that is safe from another thread; the hook then
      // waits for the loop to close the consumer, so that it leaves its group cleanly.
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> {
                    consumer.wakeup();
                    awaitQuietly(closed);
                  },
                  "kdelay-watch-stop"));
      createIfAbsent(options, out);
      consumer.subscribe(List.of(topic));
      out.printf(
          "Watching %s on %s (read_committed); ctrl-C stops%n", topic, options.bootstrapServers());
      while (true) {
        for (ConsumerRecord<String, String> record : consumer.poll(POLL_TIMEOUT)) {
          out.println(describe(record, Instant.now()));
        }
        out.flush();
      }
    } catch (WakeupException e) {
      return CommandLine.OK;
    } finally {
      closed.countDown();
    }
  }

  /**
   * One line about a record.
   *
   * @param record the record
   * @param receivedAt when the consumer received it
   * @return id, idempotency key, key, due and fired times, lateness and value of a fired record;
   *     key and value of any other record
   */
  static String describe(ConsumerRecord<String, String> record, Instant receivedAt) {
    String where = record.topic() + "-" + record.partition() + "@" + record.offset();
    if (!FiredTask.isFired(record)) {
      return String.format(
          "record %s (not fired by kdelay) key=%s value=%s", where, record.key(), record.value());
    }
    FiredTask task = FiredTask.from(record);
    long latenessMs = Duration.between(task.dueAt(), receivedAt).toMillis();
    Header tenant = record.headers().lastHeader(DelayHeaders.TENANT);
    return String.format(
        "fired %s %sid=%s idempotency-key=%s key=%s due=%s fired=%s lateness=%d ms value=%s",
        where,
        tenant == null || tenant.value() == null
            ? ""
            : "tenant=" + new String(tenant.value(), StandardCharsets.UTF_8) + " ",
        task.id(),
        task.idempotencyKey(),
        record.key(),
        task.dueAt(),
        task.firedAt(),
        latenessMs,
        record.value());
  }

  /**
   * Creates the watched topic if it does not exist: kdelay dead-letters requests for missing
   * targets (UNKNOWN_TOPIC), so watching a topic first makes it ready to schedule to.
   */
  private void createIfAbsent(ClientOptions options, PrintStream out) {
    try (Admin admin = Admin.create(options.adminProperties())) {
      admin
          .createTopics(List.of(new NewTopic(topic, Optional.empty(), Optional.empty())))
          .all()
          .get(30, TimeUnit.SECONDS);
      out.printf("Created topic %s%n", topic);
    } catch (ExecutionException e) {
      if (!(e.getCause() instanceof TopicExistsException)) {
        throw new DelayServiceException("cannot create topic " + topic + ": " + e.getCause(), e);
      }
    } catch (TimeoutException e) {
      throw new DelayServiceException("creating topic " + topic + " timed out", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new DelayServiceException("interrupted while creating topic " + topic, e);
    }
  }

  private Map<String, Object> consumerProperties(ClientOptions options) {
    Map<String, Object> props = options.consumerProperties();
    // Only committed fires: what a real consumer of the target topic sees.
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    // A throw-away group of its own, so that watching never takes records from anyone.
    props.put(ConsumerConfig.GROUP_ID_CONFIG, "kdelay-watch-" + UUID.randomUUID());
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, fromBeginning ? "earliest" : "latest");
    return props;
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

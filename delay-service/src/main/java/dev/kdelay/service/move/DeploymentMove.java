package dev.kdelay.service.move;

import dev.kdelay.service.DelayServiceException;
import dev.kdelay.topology.ScheduleMove;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Moves a stopped deployment's schedules into another deployment's requests topic: the supported
 * way to grow the partition count ({@link ScheduleMove} says what moves, in what records).
 *
 * <p>Everything happens in Kafka transactions of one producer, whose transactional id is the old
 * application's ({@code kdelay-move-<application.id>}), so that a second run fences a first that is
 * still alive. Each transaction writes, for a batch of ids, their imports to the new requests topic
 * and a tombstone for each to the old changelog; and, for a batch of requests the old deployment
 * had not applied, their copies to the new topic with the old group's offsets past them. A move cut
 * short (a crash, a kill) leaves every id either moved and gone from the old deployment or still
 * there, never both; running it again moves the rest. The old deployment must be stopped (its group
 * empty), or its instances would fire what moved.
 */
public final class DeploymentMove {

  /**
   * The deployment the schedules leave.
   *
   * @param applicationId its {@code application.id}
   * @param requestsTopic its requests topic
   * @param rerouteTopic its reroute topic
   */
  public record Source(String applicationId, String requestsTopic, String rerouteTopic) {}

  /**
   * What moved.
   *
   * @param scheduled live schedules (one-shots and recurring)
   * @param paused paused recurring schedules
   * @param markers cancels and fires that still order late requests
   * @param expired markers past their retention, left behind
   * @param unreadable entries this version cannot read, moved as they are (dead-lettered there)
   * @param forwarded requests the old deployment had not applied, forwarded
   * @param toPartitions the new requests topic's partition count
   */
  public record Report(
      long scheduled,
      long paused,
      long markers,
      long expired,
      long unreadable,
      long forwarded,
      int toPartitions) {

    /** How many ids moved. */
    public long moved() {
      return scheduled + paused + markers + unreadable;
    }
  }

  /** How many ids, or requests, one transaction moves unless told otherwise. */
  public static final int DEFAULT_BATCH = 1_000;

  private static final Duration POLL = Duration.ofMillis(200);

  private final Map<String, Object> adminProperties;
  private final Map<String, Object> consumerProperties;
  private final Map<String, Object> producerProperties;
  private final Source from;
  private final String to;
  private final int batch;
  private final Duration wait;
  private final LongSupplier clock;

  /**
   * @param to the new deployment's requests topic, which must exist
   * @param batch how many ids, or requests, one transaction moves
   * @param wait how long to wait for open transactions of the stopped deployment to end
   */
  public DeploymentMove(
      Map<String, Object> adminProperties,
      Map<String, Object> consumerProperties,
      Map<String, Object> producerProperties,
      Source from,
      String to,
      int batch,
      Duration wait,
      LongSupplier clock) {
    this.adminProperties = adminProperties;
    this.consumerProperties = consumerProperties;
    this.producerProperties = producerProperties;
    this.from = from;
    this.to = to;
    this.batch = batch;
    this.wait = wait;
    this.clock = clock;
  }

  /**
   * Moves every schedule, and every request not yet applied.
   *
   * @throws DelayServiceException if the old deployment still runs, a topic is missing, or a
   *     transaction of it stays open longer than the wait
   */
  public Report run() {
    String changelog = ScheduleMove.changelogTopic(from.applicationId());
    if (to.equals(from.requestsTopic()) || to.equals(from.rerouteTopic())) {
      throw new DelayServiceException(
          "the schedules move to another deployment's requests topic, not to '" + to + "'");
    }
    try (Admin admin = Admin.create(adminProperties)) {
      requireStopped(admin);
      Map<String, TopicDescription> topics =
          describe(admin, List.of(changelog, from.requestsTopic(), from.rerouteTopic(), to));
      if (!topics.containsKey(changelog)) {
        throw new DelayServiceException(
            "no topic "
                + changelog
                + ": application '"
                + from.applicationId()
                + "' has no schedules to move (is that its application id?)");
      }
      if (!topics.containsKey(to)) {
        throw new DelayServiceException(
            "no topic "
                + to
                + ": start the new deployment first (delay.requests.topic="
                + to
                + ", delay.import.from="
                + from.applicationId()
                + "), with the partition count it needs");
      }
      if (!topics.containsKey(from.requestsTopic())) {
        throw new DelayServiceException(
            "no topic "
                + from.requestsTopic()
                + ": name the requests topic of application '"
                + from.applicationId()
                + "' (--requests-topic, or its configuration with --config)");
      }
      int toPartitions = topics.get(to).partitions().size();
      List<TopicPartition> entries = partitions(topics.get(changelog));
      List<TopicPartition> inputs = new ArrayList<>(partitions(topics.get(from.requestsTopic())));
      if (topics.containsKey(from.rerouteTopic())) {
        inputs.addAll(partitions(topics.get(from.rerouteTopic())));
      }
      List<TopicPartition> all = new ArrayList<>(entries);
      all.addAll(inputs);
      try (Consumer<byte[], byte[]> consumer = consumer();
          Producer<byte[], byte[]> producer = producer()) {
        // First: this aborts the open transaction of an earlier run that was cut short, which
        // would otherwise hold the ends below until its timeout.
        producer.initTransactions();
        Map<TopicPartition, Long> ends = awaitNoOpenTransactions(admin, all);
        Map<TopicPartition, OffsetAndMetadata> applied =
            get(
                admin
                    .listConsumerGroupOffsets(from.applicationId())
                    .partitionsToOffsetAndMetadata());
        Counts counts = new Counts();
        for (TopicPartition partition : entries) {
          moveEntries(consumer, producer, partition, ends.get(partition), toPartitions, counts);
        }
        // Again before the offsets move: an instance started meanwhile would apply what follows.
        requireStopped(admin);
        for (TopicPartition partition : inputs) {
          OffsetAndMetadata committed = applied.get(partition);
          long start =
              committed != null
                  ? committed.offset()
                  : consumer.beginningOffsets(List.of(partition)).get(partition);
          counts.forwarded +=
              forward(consumer, producer, partition, start, ends.get(partition), toPartitions);
        }
        return new Report(
            counts.scheduled,
            counts.paused,
            counts.markers,
            counts.expired,
            counts.unreadable,
            counts.forwarded,
            toPartitions);
      }
    }
  }

  private static final class Counts {
    long scheduled;
    long paused;
    long markers;
    long expired;
    long unreadable;
    long forwarded;
  }

  /** Refuses to move while an instance of the old deployment is in its group. */
  private void requireStopped(Admin admin) {
    ConsumerGroupDescription group;
    try {
      group =
          get(admin.describeConsumerGroups(List.of(from.applicationId())).all())
              .get(from.applicationId());
    } catch (KafkaException e) {
      if (rootCause(e) instanceof GroupIdNotFoundException) {
        return;
      }
      throw e;
    }
    if (group != null && !group.members().isEmpty()) {
      List<String> hosts = group.members().stream().map(member -> member.host()).toList();
      throw new DelayServiceException(
          "application '"
              + from.applicationId()
              + "' still runs ("
              + group.members().size()
              + " members, on "
              + hosts
              + "): stop every instance of it first. Its schedules move only from a stopped"
              + " deployment; a running one would fire what moved. An instance that was killed"
              + " stays a member until its session times out, a few seconds.");
    }
  }

  private static Map<String, TopicDescription> describe(Admin admin, List<String> names) {
    Map<String, TopicDescription> found = new HashMap<>();
    admin
        .describeTopics(names)
        .topicNameValues()
        .forEach(
            (name, future) -> {
              try {
                found.put(name, get(future));
              } catch (KafkaException e) {
                if (!(rootCause(e) instanceof UnknownTopicOrPartitionException)) {
                  throw e;
                }
              }
            });
    return found;
  }

  private static List<TopicPartition> partitions(TopicDescription topic) {
    return topic.partitions().stream()
        .map(p -> new TopicPartition(topic.name(), p.partition()))
        .toList();
  }

  /**
   * Waits until no transaction is open on the partitions (an instance killed mid-transaction leaves
   * one open until its timeout), and returns their ends: what a {@code read_committed} consumer
   * reads to.
   */
  private Map<TopicPartition, Long> awaitNoOpenTransactions(
      Admin admin, Collection<TopicPartition> partitions) {
    long deadline = System.nanoTime() + wait.toNanos();
    while (true) {
      Map<TopicPartition, Long> committed = ends(admin, partitions, IsolationLevel.READ_COMMITTED);
      Map<TopicPartition, Long> written = ends(admin, partitions, IsolationLevel.READ_UNCOMMITTED);
      List<TopicPartition> open =
          partitions.stream().filter(p -> !committed.get(p).equals(written.get(p))).toList();
      if (open.isEmpty()) {
        return committed;
      }
      if (System.nanoTime() > deadline) {
        throw new DelayServiceException(
            "a transaction of application '"
                + from.applicationId()
                + "' is still open on "
                + open
                + " after "
                + wait.toSeconds()
                + " s: an instance that was killed leaves one open until its transaction timeout."
                + " Run the move again once it ended, or with a longer --wait.");
      }
      sleep(Duration.ofMillis(500));
    }
  }

  private static Map<TopicPartition, Long> ends(
      Admin admin, Collection<TopicPartition> partitions, IsolationLevel isolation) {
    Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
    partitions.forEach(p -> latest.put(p, OffsetSpec.latest()));
    Map<TopicPartition, Long> ends = new HashMap<>();
    get(admin.listOffsets(latest, new ListOffsetsOptions(isolation)).all())
        .forEach((p, info) -> ends.put(p, info.offset()));
    return ends;
  }

  /**
   * Moves the ids of one changelog partition: the last record of each up to the end sets its entry.
   * Each moved id gets a plain tombstone, which a restore of the old deployment reads as the id
   * forgotten.
   */
  private void moveEntries(
      Consumer<byte[], byte[]> consumer,
      Producer<byte[], byte[]> producer,
      TopicPartition changelog,
      long end,
      int toPartitions,
      Counts counts) {
    Map<ByteBuffer, byte[]> latest = new LinkedHashMap<>();
    read(
        consumer,
        changelog,
        consumer.beginningOffsets(List.of(changelog)).get(changelog),
        end,
        record -> {
          if (record.key() == null) {
            return;
          }
          ByteBuffer id = ByteBuffer.wrap(record.key());
          byte[] entry = ScheduleMove.entryOf(record);
          if (entry == null) {
            latest.remove(id);
          } else {
            latest.put(id, entry);
          }
        });
    long now = clock.getAsLong();
    List<Map.Entry<ByteBuffer, byte[]>> pending = new ArrayList<>(latest.entrySet());
    for (int start = 0; start < pending.size(); start += batch) {
      List<Map.Entry<ByteBuffer, byte[]>> chunk =
          pending.subList(start, Math.min(pending.size(), start + batch));
      inTransaction(
          producer,
          () -> {
            for (Map.Entry<ByteBuffer, byte[]> entry : chunk) {
              byte[] id = entry.getKey().array();
              ScheduleMove.Kind kind = ScheduleMove.kindOf(entry.getValue(), now);
              switch (kind) {
                case SCHEDULED -> counts.scheduled++;
                case PAUSED -> counts.paused++;
                case MARKER -> counts.markers++;
                case EXPIRED_MARKER -> counts.expired++;
                case UNREADABLE -> counts.unreadable++;
              }
              if (kind != ScheduleMove.Kind.EXPIRED_MARKER) {
                producer.send(
                    ScheduleMove.imported(
                        from.applicationId(), id, entry.getValue(), to, toPartitions));
              }
              producer.send(
                  new ProducerRecord<>(changelog.topic(), changelog.partition(), id, null));
            }
          });
    }
  }

  /**
   * Forwards the requests of one input partition from the old group's committed offset to the end,
   * moving the offset past them in the same transactions.
   *
   * @return how many were forwarded
   */
  private long forward(
      Consumer<byte[], byte[]> consumer,
      Producer<byte[], byte[]> producer,
      TopicPartition input,
      long start,
      long end,
      int toPartitions) {
    if (start >= end) {
      return 0;
    }
    boolean rerouted = input.topic().equals(from.rerouteTopic());
    List<ProducerRecord<byte[], byte[]>> chunk = new ArrayList<>();
    long[] forwarded = {0};
    read(
        consumer,
        input,
        start,
        end,
        record -> {
          ScheduleMove.forwarded(record, rerouted, to, toPartitions).ifPresent(chunk::add);
          if (chunk.size() >= batch) {
            forwarded[0] += send(producer, chunk, input, record.offset() + 1);
          }
        });
    forwarded[0] += send(producer, chunk, input, end);
    return forwarded[0];
  }

  /** Sends forwarded requests, and the old group's offset past them, in one transaction. */
  private long send(
      Producer<byte[], byte[]> producer,
      List<ProducerRecord<byte[], byte[]>> chunk,
      TopicPartition input,
      long nextOffset) {
    int count = chunk.size();
    inTransaction(
        producer,
        () -> {
          chunk.forEach(producer::send);
          producer.sendOffsetsToTransaction(
              Map.of(input, new OffsetAndMetadata(nextOffset)),
              new ConsumerGroupMetadata(from.applicationId()));
        });
    chunk.clear();
    return count;
  }

  private static void inTransaction(Producer<byte[], byte[]> producer, Runnable writes) {
    producer.beginTransaction();
    try {
      writes.run();
      producer.commitTransaction();
    } catch (KafkaException e) {
      try {
        producer.abortTransaction();
      } catch (KafkaException ignored) {
        // A fenced or failed producer cannot abort; the broker aborts at its timeout.
      }
      throw e;
    }
  }

  /** Reads a partition from an offset to an end offset, {@code read_committed}. */
  private void read(
      Consumer<byte[], byte[]> consumer,
      TopicPartition partition,
      long start,
      long end,
      java.util.function.Consumer<ConsumerRecord<byte[], byte[]>> each) {
    consumer.assign(List.of(partition));
    consumer.seek(partition, start);
    long deadline = System.nanoTime() + wait.toNanos();
    while (consumer.position(partition) < end) {
      boolean any = false;
      for (ConsumerRecord<byte[], byte[]> record : consumer.poll(POLL).records(partition)) {
        if (record.offset() >= end) {
          break;
        }
        each.accept(record);
        any = true;
      }
      if (any) {
        deadline = System.nanoTime() + wait.toNanos();
      } else if (System.nanoTime() > deadline) {
        throw new DelayServiceException(
            "reading "
                + partition
                + " made no progress for "
                + wait.toSeconds()
                + " s at offset "
                + consumer.position(partition)
                + " of "
                + end);
      }
    }
  }

  private Consumer<byte[], byte[]> consumer() {
    Map<String, Object> props = new HashMap<>(consumerProperties);
    props.remove(ConsumerConfig.GROUP_ID_CONFIG);
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    return new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }

  private Producer<byte[], byte[]> producer() {
    Map<String, Object> props = new HashMap<>(producerProperties);
    props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "kdelay-move-" + from.applicationId());
    props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
  }

  private static <T> T get(org.apache.kafka.common.KafkaFuture<T> future) {
    try {
      return future.get();
    } catch (ExecutionException e) {
      throw e.getCause() instanceof KafkaException kafka
          ? kafka
          : new KafkaException(e.getCause().getMessage(), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new KafkaException("interrupted", e);
    }
  }

  private static Throwable rootCause(Throwable e) {
    Throwable cause = e;
    while (cause.getCause() != null && cause.getCause() != cause) {
      cause = cause.getCause();
    }
    return cause;
  }

  private static void sleep(Duration duration) {
    try {
      Thread.sleep(duration.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new KafkaException("interrupted", e);
    }
  }
}

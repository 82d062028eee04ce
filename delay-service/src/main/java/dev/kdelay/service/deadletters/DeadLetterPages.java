package dev.kdelay.service.deadletters;

import static java.util.Objects.requireNonNull;

import dev.kdelay.client.DeadLetter;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Reads the dead-letter topic a page at a time, for the admin API and the CLI: in partition order,
 * each partition from its oldest retained record, optionally only one code or one schedule id.
 *
 * <p>A page ends at its limit, at the end of the topic, or when it has read {@link #MAX_SCANNED}
 * records or for the time allowed, whichever comes first: a filter that matches little in a long
 * topic answers with fewer dead letters and a {@link Position} to go on from, never with a wait
 * that grows with the topic. Each call uses a consumer of its own, assigned, without a group, that
 * reads committed records only: a dead letter of an aborted transaction was never written.
 */
public final class DeadLetterPages {

  /** Most records one page reads, matching or not. */
  public static final int MAX_SCANNED = 5_000;

  /**
   * Where a page starts: the next record to read.
   *
   * @param partition the partition
   * @param offset the offset in it
   */
  public record Position(int partition, long offset) {

    private static final Pattern TEXT = Pattern.compile("(\\d{1,9})\\.(\\d{1,19})");

    /** The position a cursor names, {@code <partition>.<offset>}. */
    public static Optional<Position> parse(String cursor) {
      Matcher matcher = TEXT.matcher(cursor);
      if (!matcher.matches()) {
        return Optional.empty();
      }
      try {
        return Optional.of(
            new Position(Integer.parseInt(matcher.group(1)), Long.parseLong(matcher.group(2))));
      } catch (NumberFormatException e) {
        return Optional.empty();
      }
    }

    /** As a cursor. */
    public String cursor() {
      return partition + "." + offset;
    }
  }

  /**
   * Which dead letters a page shows.
   *
   * @param code only this {@code delay-error} code, if given
   * @param id only this schedule id, if given
   */
  public record Filter(Optional<String> code, Optional<String> id) {

    public static final Filter ALL = new Filter(Optional.empty(), Optional.empty());

    boolean matches(DeadLetter letter) {
      return code.map(letter.code()::equals).orElse(true)
          && id.map(wanted -> letter.scheduleId().map(wanted::equals).orElse(false)).orElse(true);
    }
  }

  /**
   * A page.
   *
   * @param letters the dead letters, in partition and offset order
   * @param next where the next page starts; empty at the end of the topic
   */
  public record Page(List<DeadLetter> letters, Optional<Position> next) {}

  private final Supplier<Consumer<byte[], byte[]>> consumers;
  private final String topic;
  private final Duration timeout;
  private final Clock clock;

  /**
   * @param consumers makes a consumer with byte-array deserializers, no group, auto-commit off and
   *     {@code isolation.level=read_committed}; each call closes the one it made
   * @param topic the dead-letter topic
   * @param timeout how long one call may read
   * @param clock when a call's time is up
   */
  public DeadLetterPages(
      Supplier<Consumer<byte[], byte[]>> consumers, String topic, Duration timeout, Clock clock) {
    this.consumers = requireNonNull(consumers, "consumers cannot be null");
    this.topic = requireNonNull(topic, "topic cannot be null");
    this.timeout = requireNonNull(timeout, "timeout cannot be null");
    this.clock = requireNonNull(clock, "clock cannot be null");
  }

  /**
   * Makes the consumers a reader needs from a client configuration (bootstrap servers and security
   * settings).
   */
  public static Supplier<Consumer<byte[], byte[]>> consumers(Map<String, Object> clientProperties) {
    Map<String, Object> properties = new HashMap<>(clientProperties);
    properties.remove(ConsumerConfig.GROUP_ID_CONFIG);
    properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    properties.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    properties.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 500);
    properties.putIfAbsent(ConsumerConfig.CLIENT_ID_CONFIG, "kdelay-dead-letters");
    Map<String, Object> fixed = Map.copyOf(properties);
    return () ->
        new KafkaConsumer<>(fixed, new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }

  /** The dead-letter topic. */
  public String topic() {
    return topic;
  }

  /** Pages of another dead-letter topic (a tenant's), read the same way. */
  public DeadLetterPages onTopic(String other) {
    return new DeadLetterPages(consumers, other, timeout, clock);
  }

  /**
   * One page.
   *
   * @param filter which dead letters to show
   * @param from where to start; empty for the oldest record of the first partition
   * @param limit most dead letters on the page, at least 1
   */
  public Page page(Filter filter, Optional<Position> from, int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1, got " + limit);
    }
    long deadline = clock.millis() + timeout.toMillis();
    try (Consumer<byte[], byte[]> consumer = consumers.get()) {
      List<TopicPartition> partitions = partitions(consumer);
      // Assigned while their offsets are listed: a read_committed consumer warns of every listed
      // partition it does not own ("Not updating last stable offset").
      consumer.assign(partitions);
      Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, timeout);
      Map<TopicPartition, Long> begins = consumer.beginningOffsets(partitions, timeout);
      List<DeadLetter> letters = new ArrayList<>();
      int scanned = 0;
      int first = from.map(Position::partition).orElse(0);
      for (TopicPartition partition : partitions) {
        if (partition.partition() < first) {
          continue;
        }
        long position =
            Math.max(
                begins.get(partition),
                partition.partition() == first ? from.map(Position::offset).orElse(0L) : 0L);
        long end = ends.get(partition);
        consumer.assign(List.of(partition));
        consumer.seek(partition, position);
        while (position < end) {
          if (letters.size() >= limit || scanned >= MAX_SCANNED || clock.millis() >= deadline) {
            return new Page(letters, Optional.of(new Position(partition.partition(), position)));
          }
          for (ConsumerRecord<byte[], byte[]> record :
              consumer.poll(Duration.ofMillis(Math.max(1, deadline - clock.millis())))) {
            if (record.offset() < position || record.offset() >= end) {
              continue;
            }
            scanned++;
            DeadLetter letter = DeadLetter.from(record);
            if (letters.size() < limit && filter.matches(letter)) {
              letters.add(letter);
              position = record.offset() + 1;
            } else if (letters.size() < limit) {
              position = record.offset() + 1;
            }
          }
          // Past transaction markers, which take offsets but hold no record.
          position = Math.max(position, letters.size() < limit ? consumer.position(partition) : 0);
        }
      }
      return new Page(letters, Optional.empty());
    }
  }

  /**
   * The dead letter at one position, if the topic holds a record there.
   *
   * @param partition the partition
   * @param offset the offset
   */
  public Optional<DeadLetter> at(int partition, long offset) {
    long deadline = clock.millis() + timeout.toMillis();
    try (Consumer<byte[], byte[]> consumer = consumers.get()) {
      TopicPartition wanted = new TopicPartition(topic, partition);
      if (partitions(consumer).stream().noneMatch(wanted::equals)) {
        return Optional.empty();
      }
      consumer.assign(List.of(wanted)); // before listing its offsets, as in page()
      long end = consumer.endOffsets(List.of(wanted), timeout).get(wanted);
      if (offset < 0 || offset >= end) {
        return Optional.empty();
      }
      consumer.seek(wanted, offset);
      while (clock.millis() < deadline) {
        for (ConsumerRecord<byte[], byte[]> record :
            consumer.poll(Duration.ofMillis(Math.max(1, deadline - clock.millis())))) {
          if (record.offset() == offset) {
            return Optional.of(DeadLetter.from(record));
          }
          if (record.offset() > offset) {
            return Optional.empty(); // a transaction marker, or a record deleted meanwhile
          }
        }
        if (consumer.position(wanted) > offset) {
          return Optional.empty();
        }
      }
      throw new IllegalStateException(
          "the dead letter at " + partition + "." + offset + " was not read in " + timeout);
    }
  }

  private List<TopicPartition> partitions(Consumer<byte[], byte[]> consumer) {
    List<PartitionInfo> infos = consumer.partitionsFor(topic, timeout);
    if (infos == null) {
      return List.of();
    }
    return infos.stream()
        .map(info -> new TopicPartition(topic, info.partition()))
        .sorted(Comparator.comparingInt(TopicPartition::partition))
        .toList();
  }
}

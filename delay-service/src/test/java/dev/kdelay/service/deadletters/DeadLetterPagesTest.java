package dev.kdelay.service.deadletters;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.client.DeadLetter;
import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.service.deadletters.DeadLetterPages.Filter;
import dev.kdelay.service.deadletters.DeadLetterPages.Page;
import dev.kdelay.service.deadletters.DeadLetterPages.Position;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.internals.AutoOffsetResetStrategy;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

/**
 * Paging over a dead-letter topic of three partitions, with Kafka's own MockConsumer standing in
 * for the broker (the paging logic only; OperationsIT reads a real one).
 */
class DeadLetterPagesTest {

  private static final String TOPIC = "delay-dlq";

  /** Partition 0: 3 records, partition 1: none, partition 2: 4; codes alternate. */
  private final List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();

  DeadLetterPagesTest() {
    add(0, 0, "a", "UNKNOWN_TOPIC");
    add(0, 1, "b", "BAD_TIME");
    add(0, 2, "c", "UNKNOWN_TOPIC");
    add(2, 5, "d", "BAD_TIME"); // the partition's oldest retained record is at 5
    add(2, 6, "e", "UNKNOWN_TOPIC");
    add(2, 7, "f", "BAD_TIME");
    add(2, 8, "g", "UNKNOWN_TOPIC");
  }

  @Test
  void shouldWalkEveryDeadLetterOnceInPartitionAndOffsetOrder() {
    DeadLetterPages pages = pages();

    List<String> seen = new ArrayList<>();
    Optional<Position> next = Optional.empty();
    int calls = 0;
    do {
      Page page = pages.page(Filter.ALL, next, 2);
      page.letters().forEach(letter -> seen.add(letter.scheduleId().orElseThrow()));
      next = page.next();
      calls++;
    } while (next.isPresent() && calls < 10);

    assertThat(seen).containsExactly("a", "b", "c", "d", "e", "f", "g");
    assertThat(next).isEmpty();
  }

  @Test
  void shouldShowOnlyTheCodeAskedFor() {
    Page page =
        pages()
            .page(new Filter(Optional.of("UNKNOWN_TOPIC"), Optional.empty()), Optional.empty(), 10);

    assertThat(page.letters()).extracting(DeadLetter::code).containsOnly("UNKNOWN_TOPIC");
    assertThat(page.letters())
        .extracting(letter -> letter.scheduleId().orElseThrow())
        .containsExactly("a", "c", "e", "g");
    assertThat(page.next()).isEmpty();
  }

  @Test
  void shouldStartAPageWhereTheCursorSays() {
    Page page = pages().page(Filter.ALL, Position.parse("2.7"), 10);

    assertThat(page.letters()).extracting(DeadLetter::offset).containsExactly(7L, 8L);
  }

  @Test
  void shouldFindOneDeadLetterByPosition() {
    DeadLetterPages pages = pages();

    assertThat(pages.at(2, 6)).hasValueSatisfying(l -> assertThat(l.scheduleId()).hasValue("e"));
    assertThat(pages.at(2, 9)).isEmpty();
    assertThat(pages.at(7, 0)).isEmpty();
  }

  @Test
  void shouldReadCursorsItWritesAndRefuseOthers() {
    assertThat(Position.parse(new Position(3, 1742).cursor())).hasValue(new Position(3, 1742));
    assertThat(Position.parse("3:1742")).isEmpty();
    assertThat(Position.parse("-1.5")).isEmpty();
  }

  private DeadLetterPages pages() {
    return new DeadLetterPages(this::consumer, TOPIC, Duration.ofSeconds(5), Clock.systemUTC());
  }

  /** A fresh consumer holding the records, as each call makes its own. */
  private MockConsumer<byte[], byte[]> consumer() {
    MockConsumer<byte[], byte[]> consumer =
        new MockConsumer<>(AutoOffsetResetStrategy.EARLIEST.name()) {
          @Override
          public synchronized ConsumerRecords<byte[], byte[]> poll(Duration timeout) {
            // What a broker would return: the assigned partitions' records from the position on.
            for (ConsumerRecord<byte[], byte[]> record : records) {
              TopicPartition partition = new TopicPartition(TOPIC, record.partition());
              if (assignment().contains(partition) && record.offset() >= position(partition)) {
                addRecord(record);
              }
            }
            return super.poll(timeout);
          }
        };
    Node node = new Node(0, "localhost", 9092);
    List<PartitionInfo> infos = new ArrayList<>();
    Map<TopicPartition, Long> begins = new HashMap<>();
    Map<TopicPartition, Long> ends = new HashMap<>();
    for (int partition = 0; partition < 3; partition++) {
      infos.add(new PartitionInfo(TOPIC, partition, node, new Node[0], new Node[0]));
      TopicPartition topicPartition = new TopicPartition(TOPIC, partition);
      begins.put(topicPartition, partition == 2 ? 5L : 0L);
      ends.put(topicPartition, partition == 0 ? 3L : partition == 2 ? 9L : 0L);
    }
    consumer.updatePartitions(TOPIC, infos);
    consumer.updateBeginningOffsets(begins);
    consumer.updateEndOffsets(ends);
    return consumer;
  }

  private void add(int partition, long offset, String id, String code) {
    RecordHeaders headers = new RecordHeaders();
    headers.add(DelayHeaders.ERROR, code.getBytes(StandardCharsets.UTF_8));
    records.add(
        new ConsumerRecord<>(
            TOPIC,
            partition,
            offset,
            1_000L + offset,
            TimestampType.CREATE_TIME,
            -1,
            -1,
            id.getBytes(StandardCharsets.UTF_8),
            "p".getBytes(StandardCharsets.UTF_8),
            headers,
            Optional.empty()));
  }
}

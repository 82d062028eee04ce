package dev.kdelay.topology.internals;

import dev.kdelay.schemas.TenantIds;
import dev.kdelay.topology.Tenants;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerInterceptor;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * The requests a stream thread has read from Kafka and not yet processed, by id: a fire waits while
 * a request for its own id is among them.
 *
 * <p>Why: Kafka Streams runs wall-clock punctuations between the records of one poll. When a
 * schedule and, right behind it, its replacement or cancel are read together (after an outage, a
 * restart, or under a backlog that outlasted the due time), the schedule is applied overdue, a
 * punctuation fires it, and only then is the request behind it processed: it meets a fired id and
 * is too late, although it was written before the task was due. Holding that one id's fire until
 * the requests already read for it are processed applies them in the order they were written. It
 * costs the id one pass of the stream thread's loop; other ids fire as before.
 *
 * <p>How it knows: Kafka Streams offers a processor no view of what its consumer has buffered, so
 * this is the main consumer's interceptor ({@code main.consumer.interceptor.classes}, set by {@link
 * dev.kdelay.topology.StreamsTuning#streamsProperties}). {@link #onConsume} runs inside {@code
 * poll()} on the stream thread that polls, and notes every record's key and offset; the processor
 * of the same thread removes them as it processes their offsets ({@link Buffer#processed}). So the
 * state is per thread, and touched by one thread only.
 *
 * <p>Records Kafka Streams polls but never hands to the processor (dropped, or thrown away when a
 * task is closed or its transaction aborted) are forgotten when a later offset of their partition
 * is processed, when their partition is read again from an earlier offset, when the task is closed,
 * and in any case after {@link #STALE_NANOS}. A fire waits at most that long in a row however many
 * requests for its id keep coming ({@link FirePunctuator#MAX_WAIT_FOR_REQUESTS_MS}). Without a
 * consumer (as under {@code TopologyTestDriver}, which processes each record before any
 * punctuation) nothing is noted and nothing waits.
 *
 * <p>Only what was read is seen: a replacement still on the broker when its id comes due does not
 * hold the fire.
 */
public final class PolledRequests implements ConsumerInterceptor<byte[], byte[]> {

  /** After this, a noted record is taken as never to be processed. */
  static final long STALE_NANOS = 10_000_000_000L;

  private static final ThreadLocal<Buffer> THREAD = ThreadLocal.withInitial(Buffer::new);

  /**
   * kdelay's key of the main consumer's configuration that names the tenants' request topics,
   * {@code topic=tenant} comma-separated, so that their requests are noted by their qualified ids
   * ({@link TenantIds}), as the processor knows them.
   */
  public static final String TENANT_TOPICS_CONFIG = "kdelay.polled.tenant.topics";

  private Map<String, String> tenantOfTopic = Map.of();

  /** Kafka creates the interceptor from its class name. */
  public PolledRequests() {}

  /** What the calling stream thread has read and not processed. */
  static Buffer ofThisThread() {
    return THREAD.get();
  }

  @Override
  public ConsumerRecords<byte[], byte[]> onConsume(ConsumerRecords<byte[], byte[]> records) {
    Buffer buffer = THREAD.get();
    long now = System.nanoTime();
    buffer.expire(now);
    if (!records.isEmpty()) {
      buffer.polled(records, now, tenantOfTopic);
    }
    return records;
  }

  @Override
  public void onCommit(Map<TopicPartition, OffsetAndMetadata> offsets) {}

  @Override
  public void close() {}

  @Override
  public void configure(Map<String, ?> configs) {
    Object topics = configs.get(TENANT_TOPICS_CONFIG);
    if (topics == null || topics.toString().isBlank()) {
      return;
    }
    Map<String, String> tenants = new HashMap<>();
    for (String pair : topics.toString().split(",")) {
      int equals = pair.lastIndexOf('=');
      tenants.put(pair.substring(0, equals), pair.substring(equals + 1));
    }
    tenantOfTopic = Map.copyOf(tenants);
  }

  /** The value of {@link #TENANT_TOPICS_CONFIG} for a deployment's tenants. */
  public static String tenantTopics(Tenants tenants) {
    return tenants.all().stream()
        .map(tenant -> tenant.requestsTopic() + "=" + tenant.name())
        .collect(java.util.stream.Collectors.joining(","));
  }

  /** One stream thread's records read and not yet processed. */
  static final class Buffer {

    private final Map<TopicPartition, ArrayDeque<Read>> byPartition = new HashMap<>();
    private final Map<ByteBuffer, Integer> unprocessed = new HashMap<>();

    /** Notes what one poll returned: for tests, none from a tenant's topic. */
    void polled(ConsumerRecords<byte[], byte[]> records, long nowNanos) {
      polled(records, nowNanos, Map.of());
    }

    /**
     * Notes what one poll returned.
     *
     * @param tenantOfTopic the tenant of each tenant's request topic, whose keys are noted
     *     qualified
     */
    void polled(
        ConsumerRecords<byte[], byte[]> records, long nowNanos, Map<String, String> tenantOfTopic) {
      for (TopicPartition partition : records.partitions()) {
        List<ConsumerRecord<byte[], byte[]>> read = records.records(partition);
        if (read.isEmpty()) {
          continue;
        }
        ArrayDeque<Read> noted = byPartition.computeIfAbsent(partition, p -> new ArrayDeque<>());
        String tenant = tenantOfTopic.get(partition.topic());
        // Read again from an earlier offset (a seek after an aborted transaction or a new
        // assignment): what was noted from there on was thrown away.
        long first = read.get(0).offset();
        while (!noted.isEmpty() && noted.peekLast().offset() >= first) {
          release(noted.pollLast());
        }
        for (ConsumerRecord<byte[], byte[]> record : read) {
          if (record.key() != null) {
            ByteBuffer key =
                ByteBuffer.wrap(
                    tenant == null ? record.key() : TenantIds.qualified(tenant, record.key()));
            noted.addLast(new Read(record.offset(), key, nowNanos));
            unprocessed.merge(key, 1, Integer::sum);
          }
        }
      }
    }

    /**
     * The keys of {@code partition}'s records read and not processed, from {@code offset} on, at
     * most {@code max}, in offset order; with the offset of the last of them.
     */
    Ahead ahead(TopicPartition partition, long offset, int max) {
      ArrayDeque<Read> noted = byPartition.get(partition);
      if (noted == null || noted.isEmpty()) {
        return Ahead.NOTHING;
      }
      List<byte[]> keys = new ArrayList<>(Math.min(max, noted.size()));
      long last = -1;
      for (Iterator<Read> reads = noted.iterator(); reads.hasNext() && keys.size() < max; ) {
        Read read = reads.next();
        if (read.offset() >= offset) {
          keys.add(read.key().array());
          last = read.offset();
        }
      }
      return keys.isEmpty() ? Ahead.NOTHING : new Ahead(keys, last);
    }

    /** Forgets the records of {@code partition} up to {@code offset}, which is being processed. */
    void processed(TopicPartition partition, long offset) {
      if (unprocessed.isEmpty()) {
        return;
      }
      ArrayDeque<Read> noted = byPartition.get(partition);
      while (noted != null && !noted.isEmpty() && noted.peekFirst().offset() <= offset) {
        release(noted.pollFirst());
      }
    }

    /** Forgets every record of {@code partition}: its task closed or started anew. */
    void forget(TopicPartition partition) {
      ArrayDeque<Read> noted = byPartition.remove(partition);
      while (noted != null && !noted.isEmpty()) {
        release(noted.pollFirst());
      }
    }

    /** Forgets records noted before {@code nowNanos - STALE_NANOS}; cheap when nothing is noted. */
    void expire(long nowNanos) {
      if (unprocessed.isEmpty()) {
        return;
      }
      for (Iterator<ArrayDeque<Read>> partitions = byPartition.values().iterator();
          partitions.hasNext(); ) {
        ArrayDeque<Read> noted = partitions.next();
        while (!noted.isEmpty() && nowNanos - noted.peekFirst().polledNanos() > STALE_NANOS) {
          release(noted.pollFirst());
        }
        if (noted.isEmpty()) {
          partitions.remove();
        }
      }
    }

    /** Whether a request for {@code id} was read and is not processed yet. */
    boolean hasRequestFor(String id) {
      return !unprocessed.isEmpty()
          && unprocessed.containsKey(ByteBuffer.wrap(id.getBytes(StandardCharsets.UTF_8)));
    }

    /** How many records are noted: for tests. */
    int size() {
      return unprocessed.values().stream().mapToInt(Integer::intValue).sum();
    }

    private void release(Read read) {
      unprocessed.computeIfPresent(read.key(), (key, count) -> count == 1 ? null : count - 1);
    }
  }

  /**
   * Keys of records read and not processed, in offset order.
   *
   * @param keys the records' keys (the request ids' bytes)
   * @param lastOffset the offset of the last of them, or -1 if none
   */
  record Ahead(List<byte[]> keys, long lastOffset) {
    static final Ahead NOTHING = new Ahead(List.of(), -1);
  }

  /** A record read: its offset, its key and when it was read. */
  private record Read(long offset, ByteBuffer key, long polledNanos) {}
}

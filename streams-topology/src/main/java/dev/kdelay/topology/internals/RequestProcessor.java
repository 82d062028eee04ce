package dev.kdelay.topology.internals;

import dev.kdelay.schemas.Action;
import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.DelayRequest;
import dev.kdelay.schemas.ParseResult;
import dev.kdelay.schemas.Rejection;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.schemas.RequestLimits;
import dev.kdelay.schemas.RequestParser;
import dev.kdelay.topology.DelayConfig;
import dev.kdelay.topology.DelayMetrics;
import dev.kdelay.topology.LogValues;
import dev.kdelay.topology.TargetTopic;
import dev.kdelay.topology.TargetTopics;
import dev.kdelay.topology.internals.delivery.DeadLetters;
import dev.kdelay.topology.internals.delivery.Deliverability;
import dev.kdelay.topology.internals.delivery.Delivery;
import dev.kdelay.topology.internals.delivery.DeliveryCheck;
import dev.kdelay.topology.internals.delivery.DeliveryQuarantine;
import dev.kdelay.topology.internals.delivery.FireCommits;
import dev.kdelay.topology.internals.delivery.FireSteps;
import dev.kdelay.topology.internals.delivery.OutputRecords;
import dev.kdelay.topology.internals.delivery.TargetPolicy;
import dev.kdelay.topology.internals.store.MeteredScheduleStore;
import dev.kdelay.topology.internals.store.RocksDBScheduleStore;
import dev.kdelay.topology.internals.store.StoreFormat;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.Cancellable;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies schedule requests and fires due tasks, for one partition.
 *
 * <p>A request first goes to the partition its id hashes to (Kafka's murmur2), through the reroute
 * topic if it arrived elsewhere. It is then parsed and checked; a bad one becomes a dead letter
 * with its reason, a good one updates the schedules. A wall-clock {@link FirePunctuator} fires what
 * is due.
 *
 * <p>What it does is reported to a {@link DelayMetrics}: a counter call per request and per fire,
 * never a log line. The partition's gauges are opened in {@link #init} and closed in {@link
 * #close}.
 *
 * <p>Runs on the stream thread only.
 */
public final class RequestProcessor implements Processor<byte[], byte[], Object, Object> {

  private static final Logger log = LoggerFactory.getLogger(RequestProcessor.class);

  /**
   * Stored schedules counted per step when a partition starts here, and how often a step runs: a
   * step costs a few milliseconds of the stream thread, so fires due meanwhile are barely delayed.
   */
  private static final int COUNT_STEP = 5_000;

  private static final Duration COUNT_INTERVAL = Duration.ofMillis(50);

  private final DelayConfig config;

  /**
   * Read once: the configuration's getters look the keys up (and build the reroute topic's name).
   */
  private final String requestsTopic;

  private final String rerouteTopic;
  private final int requestsPartitions;
  private final long maxClockSkewMs;

  private final RequestParser parser;
  private final TargetTopics targetTopics;
  private final DelayMetrics metrics;
  private final DeliveryQuarantine quarantine;
  private final Deliverability deliverability;
  private final DeliveryCheck check;
  private TopicWaits waits;
  private ProcessorContext<Object, Object> context;
  private TopicPartition requestsPartition;
  private TopicPartition reroutePartition;
  private DeadLetters deadLetters;
  private Delivery delivery;
  private FireCommits commits;
  private Schedules schedules;
  private ScheduleWrites writes;
  private PartitionState gauges;
  private TaskFence fence;
  private Rerouting rerouting;
  private Cancellable counting;
  private MeteredScheduleStore store;

  /**
   * Per input partition, the offset up to which the ids of requests read were looked up ahead
   * ({@link MeteredScheduleStore#readAhead}): the next lookup starts past it.
   */
  private final Map<TopicPartition, Long> readAheadTo = new HashMap<>();

  /** Ids of requests read that one read-ahead looks up at most. */
  public static final int READ_AHEAD = 512;

  /** Creates the processor of a configuration. */
  public RequestProcessor(DelayConfig config, TargetTopics targetTopics) {
    this(config, targetTopics, DelayMetrics.NOOP, new DeliveryQuarantine(config));
  }

  /**
   * Creates the processor of a configuration, reporting to a metrics listener.
   *
   * @param quarantine the records the producer refused, shared with the instance's {@link
   *     dev.kdelay.topology.internals.delivery.DeliveryFailureHandler}
   */
  public RequestProcessor(
      DelayConfig config,
      TargetTopics targetTopics,
      DelayMetrics metrics,
      DeliveryQuarantine quarantine) {
    this.targetTopics = targetTopics;
    this.metrics = metrics;
    this.config = config;
    this.requestsTopic = config.requestsTopic();
    this.rerouteTopic = config.rerouteTopic();
    this.requestsPartitions = config.requestsPartitions();
    this.maxClockSkewMs = config.maxClockSkewMs();
    this.quarantine = quarantine;
    this.deliverability = Deliverability.of(config);
    this.check =
        new DeliveryCheck(new TargetPolicy(config), targetTopics, deliverability, quarantine);
    this.parser =
        new RequestParser(
            new RequestLimits(
                config.maxIdBytes(),
                config.maxPayloadBytes(),
                config.maxHeaders(),
                config.horizonMs()));
  }

  @Override
  public void init(ProcessorContext<Object, Object> context) {
    this.context = context;
    this.requestsPartition = new TopicPartition(requestsTopic, context.taskId().partition());
    this.reroutePartition = new TopicPartition(rerouteTopic, context.taskId().partition());
    this.rerouting =
        new Rerouting(
            context, requestsTopic, rerouteTopic, requestsPartitions, quarantine, metrics);
    forgetPolled();
    // Anew at every start: a copy whose transaction aborted never comes back.
    this.waits = new TopicWaits(config.targetTopicsLookupTimeout().toMillis());
    this.deadLetters =
        new DeadLetters(context, deliverability, targetTopics, config.dlqTopic(), quarantine);
    // One per task: the fires of a punctuation and those of requests share its commit requests.
    this.commits =
        new FireCommits(
            config.fireCommitIntervalMs(),
            config.commitIntervalMs(),
            regularCommitIntervalMs(context),
            config.maxFiresPerCommit());
    this.delivery = new Delivery(context, check, deadLetters, metrics, commits);
    // Learn the dead-letter topic's limits now, in the background, not when the first is due.
    targetTopics.cached(config.dlqTopic());
    this.store = context.getStateStore(StoreFormat.SCHEDULES_STORE);
    Recurrence recurrence =
        new Recurrence(
            new Occurrences(config.horizonMs()),
            config.misfireThresholdMs(),
            config.catchUpWindowMs());
    this.gauges = new PartitionState(context.taskId().partition());
    this.fence = new TaskFence(!atLeastOnce(context), rerouteTopic, context.taskId().partition());
    this.writes = new ScheduleWrites(store, gauges, atLeastOnce(context));
    DueEntries due = new DueEntries(writes, recurrence, metrics, config.firedRetentionMs());
    this.schedules =
        new Schedules(store, writes, due, config.cancelRetentionMs(), recurrence, metrics);
    store.onCommit(
        () -> {
          FireCommits.committed();
          writes.committing();
        });
    context.schedule(
        config.punctuateInterval(),
        PunctuationType.WALL_CLOCK_TIME,
        new FirePunctuator(
            context,
            store,
            writes,
            due,
            delivery,
            config.maxFiresPerPunctuation(),
            commits,
            metrics,
            gauges,
            new FireSteps(quarantine, config.maxFiresPerPunctuation()),
            fence,
            id -> waits.hasWaiting(id) || PolledRequests.ofThisThread().hasRequestFor(id)));
    if (!gauges.countSome(store.bytes(), COUNT_STEP)) {
      counting =
          context.schedule(
              COUNT_INTERVAL,
              PunctuationType.WALL_CLOCK_TIME,
              timestamp -> {
                if (gauges.countSome(store.bytes(), COUNT_STEP)) {
                  counting.cancel();
                }
              });
    }
    metrics.partitionOpened(gauges);
  }

  /**
   * Whether the application runs at least once: read from Kafka Streams' own configuration, which
   * is what decides whether a fired record and its store write share a transaction.
   */
  private static boolean atLeastOnce(ProcessorContext<?, ?> context) {
    return StreamsConfig.AT_LEAST_ONCE.equals(
        context.appConfigs().get(StreamsConfig.PROCESSING_GUARANTEE_CONFIG));
  }

  /**
   * How often Kafka Streams commits on its own: its {@code commit.interval.ms} as in effect (a
   * pass-through Kafka property may set it apart from {@code delay.commit.interval.ms}).
   */
  private long regularCommitIntervalMs(ProcessorContext<?, ?> context) {
    Object configured = context.appConfigs().get(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG);
    if (configured instanceof Number number) {
      return number.longValue();
    }
    if (configured instanceof String text) {
      try {
        return Long.parseLong(text.trim());
      } catch (NumberFormatException e) {
        // Kafka Streams refuses such a configuration before any processor starts.
      }
    }
    return config.commitIntervalMs();
  }

  @Override
  public void close() {
    if (gauges != null) {
      metrics.partitionClosed(gauges);
    }
    if (requestsPartition != null) {
      forgetPolled();
    }
  }

  /**
   * Looks up ahead the ids of this record and the requests read behind it, when the last read-ahead
   * did not reach it: a poll's requests are looked up a few hundred at a time, not one by one (see
   * {@link RocksDBScheduleStore#readAhead}). Then forgets this record as unprocessed.
   */
  private void beforeProcessing(RecordMetadata metadata) {
    TopicPartition partition = inputPartition(metadata);
    PolledRequests.Buffer polled = PolledRequests.ofThisThread();
    if (metadata.offset() > readAheadTo.getOrDefault(partition, -1L)) {
      PolledRequests.Ahead ahead = polled.ahead(partition, metadata.offset(), READ_AHEAD);
      if (!ahead.keys().isEmpty()) {
        store.readAhead(ahead.keys());
        readAheadTo.put(partition, ahead.lastOffset());
      }
    }
    polled.processed(partition, metadata.offset());
  }

  /** Records of this task read before it (re)started, or left when it closes, are not its own. */
  private void forgetPolled() {
    readAheadTo.clear();
    PolledRequests.Buffer polled = PolledRequests.ofThisThread();
    polled.forget(requestsPartition);
    polled.forget(reroutePartition);
  }

  @Override
  public void process(Record<byte[], byte[]> record) {
    context.recordMetadata().ifPresent(this::beforeProcessing);
    long now = context.currentSystemTimeMs();
    TopicWaits.Copy copy = TopicWaits.copyOf(record.headers(), rerouting.fromRerouteTopic());
    if (record.headers().lastHeader(TopicWaits.HEADER) != null) {
      // kdelay's own, read above: never carried into a stored task or a dead letter.
      Headers headers = new RecordHeaders(record.headers().toArray());
      headers.remove(TopicWaits.HEADER);
      record = record.withHeaders(headers);
    }
    try {
      handle(record, now, copy);
    } catch (RuntimeException failure) {
      if (UnexpectedFailure.concernsThread(failure)) {
        throw failure;
      }
      // This request's failure, not the thread's: it goes to the dead-letter topic, the rest flow.
      goesOn(record, copy);
      failed(record, now, failure);
    }
  }

  private void handle(Record<byte[], byte[]> record, long now, TopicWaits.Copy copy) {
    fence.consumed();
    if (fence.isFence(record, context.recordMetadata())) {
      return; // kdelay's own, read so that this task's commits carry its offsets
    }
    if (rerouting.misrouted(record)) {
      reroute(record, now, null);
      return;
    }
    if (heldBack(record)) {
      // At least once, its id's fire is not acknowledged yet, and the write that records it waits
      // for the commit that flushes it. Applied now, this request's write would wait with it and
      // be lost with it if the task closed first, its offset committed; so it takes the reroute
      // topic's detour to this same partition, durably, and applies when it comes back. A copy
      // waiting for its topic keeps its place among its id's (TopicWaits).
      reroute(record, now, copy == null ? null : TopicWaits.header(copy.sinceMs(), copy.token()));
      context.commit();
      return;
    }
    ParseResult result =
        parser.parse(record.key(), record.value(), record.headers(), stamped(record, now), now);
    if (result instanceof ParseResult.Rejected rejected) {
      goesOn(record, copy);
      deadLetter(record, actionOf(record), rejected.rejection(), now);
      return;
    }
    DelayRequest request = ((ParseResult.Accepted) result).request();
    Optional<TargetTopic> target = Optional.of(TargetTopic.UNKNOWN);
    if (request.schedule() != null) {
      Optional<Rejection> refused = check.byPolicy(request.schedule());
      if (refused.isPresent()) {
        goesOn(record, copy);
        deadLetter(record, request.action(), refused.get(), now);
        return;
      }
      target = check.target(request.schedule());
    }
    if (waitsAside(record, request, target.isPresent(), copy, now)) {
      return;
    }
    goesOn(record, copy);
    Optional<Rejection> refused =
        (request.schedule() == null
                ? Optional.<Rejection>empty()
                : check.atIntake(
                    request.id(), request.schedule(), target.orElse(TargetTopic.UNKNOWN)))
            .or(() -> schedules.apply(request, rerouting.originOf(record), now, delivery));
    if (refused.isPresent()) {
      deadLetter(record, request.action(), refused.get(), now);
      return;
    }
    if (request.action() == Action.TRIGGER) {
      // Fired as it was applied: ask for its commit now, not at the next punctuation's.
      commits.maybeRequest(context, now);
    }
    Delivery.afterward(
        () -> {
          metrics.requestApplied(request.action());
          if (log.isDebugEnabled()) {
            log.debug(
                "event=applied id={} action={}",
                LogValues.quote(request.id()),
                request.action().wireName());
          }
        });
  }

  /**
   * Sends a request aside to wait for the look-up of its target topic, or behind its id's requests
   * that do ({@link TopicWaits}); a copy that came back waits again unless it may go on now.
   *
   * @param topicKnown whether intake knows what it needs of the request's target topic
   * @return whether it waits: then there is nothing more to do with it now
   */
  private boolean waitsAside(
      Record<byte[], byte[]> record,
      DelayRequest request,
      boolean topicKnown,
      TopicWaits.Copy copy,
      long now) {
    String id = request.id();
    if (copy != null) {
      if (waits.mayGoOn(id, copy, topicKnown, now)) {
        if (!topicKnown && waits.timedOut(copy, now) && log.isDebugEnabled()) {
          log.debug(
              "event=target-topic-lookup-slow id={} topic={} waited_ms={} response=take-unchecked",
              LogValues.quote(id),
              LogValues.quote(request.schedule().target().topic()),
              now - copy.sinceMs());
        }
        return false;
      }
      if (!reroute(record, now, TopicWaits.header(copy.sinceMs(), copy.token()))) {
        waits.done(id, copy.token());
        return true;
      }
    } else {
      if (topicKnown && !waits.hasWaiting(id)) {
        return false;
      }
      String token = tokenOf(now);
      if (!reroute(record, now, TopicWaits.header(now, token))) {
        return true;
      }
      waits.started(id, token);
    }
    if (!atLeastOnce(context)) {
      // The copy comes back once the transaction that wrote it commits; at least once, it comes
      // back once the producer sent it, and the commit waits for that anyway.
      context.commit();
    }
    Delivery.afterward(metrics::requestWaited);
    return true;
  }

  /** A copy that waited goes on, or is dead-lettered: its id's next copy is now first. */
  private void goesOn(Record<byte[], byte[]> record, TopicWaits.Copy copy) {
    if (copy != null && record.key() != null) {
      waits.done(new String(record.key(), StandardCharsets.UTF_8), copy.token());
    }
  }

  /** A waiting request's token: the position it was read from, which nothing else has. */
  private String tokenOf(long now) {
    return context
        .recordMetadata()
        .map(m -> m.topic() + "-" + m.partition() + "@" + m.offset())
        .orElse("t" + now + "-" + System.nanoTime());
  }

  /** The input partition a record was read from; the task's own two are kept. */
  private TopicPartition inputPartition(RecordMetadata metadata) {
    if (metadata.partition() == requestsPartition.partition()) {
      if (requestsTopic.equals(metadata.topic())) {
        return requestsPartition;
      }
      if (rerouteTopic.equals(metadata.topic())) {
        return reroutePartition;
      }
    }
    return new TopicPartition(metadata.topic(), metadata.partition());
  }

  /** Dead-letters a request kdelay failed on unexpectedly, naming the error in the log. */
  private void failed(Record<byte[], byte[]> record, long now, RuntimeException failure) {
    String source =
        context
            .recordMetadata()
            .map(m -> m.topic() + "-" + m.partition() + "@" + m.offset())
            .orElse("?");
    String errorId = UnexpectedFailure.errorId(source, failure);
    log.error(
        "event=internal-error error_id={} source={} response=dead-letter",
        errorId,
        LogValues.quote(source),
        failure);
    Rejection rejection = UnexpectedFailure.rejection("request", errorId, failure);
    deadLetters.write(
        OutputRecords.withErrorId(
            OutputRecords.deadLetter(record, context.recordMetadata(), rejection, now), errorId));
    Delivery.afterward(() -> metrics.requestRejected(actionOf(record), RejectionReason.INTERNAL));
  }

  /** The action a rejected request asked for, or null if it names none: only for metrics. */
  private static Action actionOf(Record<byte[], byte[]> record) {
    Header action = record.headers().lastHeader(DelayHeaders.ACTION);
    if (action == null || action.value() == null) {
      return record.value() == null ? Action.CANCEL : Action.SCHEDULE;
    }
    return Action.fromWireName(new String(action.value(), StandardCharsets.UTF_8)).orElse(null);
  }

  /**
   * The time a request counts as stamped: its record timestamp, unless that lies further ahead of
   * kdelay's clock than {@code delay.max.clock.skew.ms}. Requests for an id apply in timestamp
   * order, so one from a producer whose clock runs years ahead would pin the id: no cancel or
   * replacement stamped by a correct clock could overtake it.
   */
  private long stamped(Record<byte[], byte[]> record, long now) {
    if (record.timestamp() - now <= maxClockSkewMs) {
      return record.timestamp();
    }
    if (log.isDebugEnabled()) {
      log.debug(
          "event=clock-skew id={} stamped={} now={} counted_as={}",
          LogValues.quote(
              record.key() == null ? null : new String(record.key(), StandardCharsets.UTF_8)),
          record.timestamp(),
          now,
          now);
    }
    return now;
  }

  /** Whether the request's id has a write held (at least once): see {@link HeldWrites}. */
  private boolean heldBack(Record<byte[], byte[]> record) {
    if (record.key() == null || writes.heldCount() == 0) {
      return false;
    }
    writes.releaseIfCommitted();
    return writes.isHeld(new String(record.key(), StandardCharsets.UTF_8));
  }

  /**
   * Forwards a request through the reroute topic ({@link Rerouting}), or dead-letters it if the
   * reroute topic refused it once already.
   *
   * @return whether it was forwarded
   */
  private boolean reroute(Record<byte[], byte[]> record, long now, byte[] waiting) {
    Optional<Rejection> refused = rerouting.forward(record, now, waiting);
    refused.ifPresent(rejection -> deadLetter(record, actionOf(record), rejection, now));
    return refused.isEmpty();
  }

  private void deadLetter(
      Record<byte[], byte[]> record, Action action, Rejection rejection, long now) {
    deadLetters.write(OutputRecords.deadLetter(record, context.recordMetadata(), rejection, now));
    Delivery.afterward(
        () -> {
          metrics.requestRejected(action, rejection.reason());
          if (log.isDebugEnabled()) {
            log.debug(
                "event=rejected id={} action={} reason={} message={}",
                LogValues.quote(
                    record.key() == null ? null : new String(record.key(), StandardCharsets.UTF_8)),
                action == null ? "-" : action.wireName(),
                rejection.reason(),
                LogValues.quote(rejection.message()));
          }
        });
  }
}

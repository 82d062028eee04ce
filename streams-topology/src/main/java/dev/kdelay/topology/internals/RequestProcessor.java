package dev.kdelay.topology.internals;

import dev.kdelay.schemas.Action;
import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.DelayRequest;
import dev.kdelay.schemas.LogValues;
import dev.kdelay.schemas.ParseResult;
import dev.kdelay.schemas.Rejection;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.schemas.RequestLimits;
import dev.kdelay.schemas.RequestParser;
import dev.kdelay.schemas.Schedule;
import dev.kdelay.schemas.TenantIds;
import dev.kdelay.topology.DelayConfig;
import dev.kdelay.topology.DelayMetrics;
import dev.kdelay.topology.FireRateLimitsInEffect;
import dev.kdelay.topology.ScheduleMove;
import dev.kdelay.topology.StreamsTuning;
import dev.kdelay.topology.TargetTopic;
import dev.kdelay.topology.TargetTopics;
import dev.kdelay.topology.Tenants;
import dev.kdelay.topology.internals.delivery.DeadLetters;
import dev.kdelay.topology.internals.delivery.Deliverability;
import dev.kdelay.topology.internals.delivery.Delivery;
import dev.kdelay.topology.internals.delivery.DeliveryCheck;
import dev.kdelay.topology.internals.delivery.DeliveryQuarantine;
import dev.kdelay.topology.internals.delivery.FireCommits;
import dev.kdelay.topology.internals.delivery.FireSteps;
import dev.kdelay.topology.internals.delivery.OutputRecords;
import dev.kdelay.topology.internals.delivery.TargetPolicy;
import dev.kdelay.topology.internals.limits.FireSlots;
import dev.kdelay.topology.internals.store.MeteredScheduleStore;
import dev.kdelay.topology.internals.store.StoreFormat;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
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

  private final DelayConfig config;

  /**
   * Read once: the configuration's getters look the keys up (and build the reroute topic's name).
   */
  private final String requestsTopic;

  private final String rerouteTopic;
  private final Tenants tenants;
  private final int requestsPartitions;
  private final FireRateLimitsInEffect limits;
  private final long maxClockSkewMs;

  private final RequestParser parser;
  private final TargetTopics targetTopics;
  private final DelayMetrics metrics;
  private final DeliveryQuarantine quarantine;
  private final Deliverability deliverability;
  private final DeliveryCheck check;
  private final Imports imports;
  private WaitingAside aside;
  private ProcessorContext<Object, Object> context;
  private DeadLetters deadLetters;
  private Delivery delivery;
  private FireCommits commits;
  private Schedules schedules;
  private ScheduleWrites writes;
  private PartitionState gauges;
  private TaskFence fence;
  private Rerouting rerouting;
  private IntakeReadAhead readAhead;

  /** Creates the processor of a configuration. */
  public RequestProcessor(DelayConfig config, TargetTopics targetTopics) {
    this(config, targetTopics, DelayMetrics.NOOP, new DeliveryQuarantine(config));
  }

  /**
   * Creates the processor of a configuration, reporting to a metrics listener, with the fire-rate
   * limits the configuration sets.
   *
   * @param quarantine the records the producer refused, shared with the instance's {@link
   *     dev.kdelay.topology.internals.delivery.DeliveryFailureHandler}
   */
  public RequestProcessor(
      DelayConfig config,
      TargetTopics targetTopics,
      DelayMetrics metrics,
      DeliveryQuarantine quarantine) {
    this(
        config,
        targetTopics,
        metrics,
        quarantine,
        new FireRateLimitsInEffect(config.fireRateLimits()));
  }

  /**
   * Creates the processor of a configuration, reporting to a metrics listener, with fire-rate
   * limits that may change while it runs.
   *
   * @param quarantine the records the producer refused, shared with the instance's {@link
   *     dev.kdelay.topology.internals.delivery.DeliveryFailureHandler}
   * @param limits the fire-rate limits as they are now, asked at each fire
   */
  public RequestProcessor(
      DelayConfig config,
      TargetTopics targetTopics,
      DelayMetrics metrics,
      DeliveryQuarantine quarantine,
      FireRateLimitsInEffect limits) {
    this.limits = limits;
    this.targetTopics = targetTopics;
    this.metrics = metrics;
    this.config = config;
    this.requestsTopic = config.requestsTopic();
    this.rerouteTopic = config.rerouteTopic();
    this.tenants = config.tenants();
    this.requestsPartitions = config.requestsPartitions();
    this.maxClockSkewMs = config.maxClockSkewMs();
    this.quarantine = quarantine;
    this.deliverability = Deliverability.of(config);
    this.check =
        new DeliveryCheck(new TargetPolicy(config), targetTopics, deliverability, quarantine);
    this.imports = new Imports(config.importFrom(), config.maxIdBytes(), config.maxClockSkewMs());
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
    int partition = context.taskId().partition();
    MeteredScheduleStore store = context.getStateStore(StoreFormat.SCHEDULES_STORE);
    this.readAhead = new IntakeReadAhead(store, inputPartitions(partition));
    readAhead.forget();
    this.rerouting =
        new Rerouting(
            context,
            config::isRequestsTopic,
            rerouteTopic,
            requestsPartitions,
            quarantine,
            metrics);
    this.aside =
        new WaitingAside(
            context,
            config.targetTopicsLookupTimeout().toMillis(),
            this::reroute,
            metrics,
            atLeastOnce(context));
    this.deadLetters = new DeadLetters(context, deliverability, targetTopics, config, quarantine);
    // One per task: the fires of a punctuation and those of requests share its commit requests.
    this.commits =
        new FireCommits(
            config.fireCommitIntervalMs(),
            config.commitIntervalMs(),
            StreamsTuning.commitIntervalMs(context.appConfigs(), config.commitIntervalMs()),
            config.maxFiresPerCommit());
    this.delivery = new Delivery(context, check, deadLetters, metrics, commits);
    // Learn the dead-letter topic's limits now, in the background, not when the first is due.
    targetTopics.cached(config.dlqTopic());
    Recurrence recurrence =
        new Recurrence(
            new Occurrences(config.horizonMs()),
            config.misfireThresholdMs(),
            config.catchUpWindowMs());
    this.gauges = new PartitionState(partition);
    this.fence = new TaskFence(!atLeastOnce(context), rerouteTopic, partition);
    this.writes = new ScheduleWrites(store, gauges, atLeastOnce(context));
    FireSlots slots =
        new FireSlots(limits, requestsPartitions, context.getStateStore(FireSlots.STORE));
    DueEntries due = new DueEntries(writes, recurrence, metrics, config.firedRetentionMs(), slots);
    this.schedules =
        new Schedules(
            store,
            writes,
            due,
            config.cancelRetentionMs(),
            recurrence,
            metrics,
            new TenantPending(tenants, requestsPartitions, gauges));
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
            id -> aside.hasWaiting(id) || PolledRequests.ofThisThread().hasRequestFor(id)));
    gauges.countInSteps(context, store.bytes());
    metrics.partitionOpened(gauges);
  }

  /**
   * This task's partitions of the request topics, the shared one first, and of the reroute topic.
   */
  private List<TopicPartition> inputPartitions(int partition) {
    List<TopicPartition> partitions = new ArrayList<>();
    partitions.add(new TopicPartition(requestsTopic, partition));
    partitions.add(new TopicPartition(rerouteTopic, partition));
    for (String topic : tenants.requestsTopics()) {
      partitions.add(new TopicPartition(topic, partition));
    }
    return partitions;
  }

  /**
   * Whether the application runs at least once: read from Kafka Streams' own configuration, which
   * is what decides whether a fired record and its store write share a transaction.
   */
  private static boolean atLeastOnce(ProcessorContext<?, ?> context) {
    return StreamsConfig.AT_LEAST_ONCE.equals(
        context.appConfigs().get(StreamsConfig.PROCESSING_GUARANTEE_CONFIG));
  }

  @Override
  public void close() {
    if (gauges != null) {
      metrics.partitionClosed(gauges);
    }
    if (readAhead != null) {
      readAhead.forget();
    }
  }

  @Override
  public void process(Record<byte[], byte[]> record) {
    context.recordMetadata().ifPresent(readAhead::beforeProcessing);
    long now = context.currentSystemTimeMs();
    record = ofItsTenant(record);
    TopicWaits.Copy copy = TopicWaits.copyOf(record.headers(), rerouting.fromRerouteTopic());
    record = WaitingAside.withoutHeader(record);
    try {
      handle(record, now, copy);
    } catch (RuntimeException failure) {
      if (UnexpectedFailure.concernsThread(failure)) {
        throw failure;
      }
      // This request's failure, not the thread's: it goes to the dead-letter topic, the rest flow.
      aside.goesOn(record, copy);
      failed(record, now, failure);
    }
  }

  /**
   * A tenant's request, keyed by its qualified id ({@link TenantIds}): from here on, in the store,
   * the reroute topic and every map of ids, it is that tenant's id and no other's.
   */
  private Record<byte[], byte[]> ofItsTenant(Record<byte[], byte[]> record) {
    if (tenants.isEmpty() || record.key() == null) {
      return record;
    }
    Optional<Tenants.Tenant> tenant =
        context.recordMetadata().flatMap(metadata -> tenants.ofRequestsTopic(metadata.topic()));
    return tenant.isEmpty()
        ? record
        : record.withKey(TenantIds.qualified(tenant.get().name(), record.key()));
  }

  /**
   * Why a request's key is refused before anything else, or empty: one that starts with U+0000
   * addresses a tenant's id ({@link TenantIds}), and must name a tenant of this deployment.
   */
  private Optional<Rejection> badTenant(Record<byte[], byte[]> record) {
    if (!TenantIds.isQualified(record.key())) {
      return Optional.empty();
    }
    Optional<TenantIds.Split> split =
        TenantIds.split(new String(record.key(), StandardCharsets.UTF_8));
    if (split.isPresent() && tenants.named(split.get().tenant()).isPresent()) {
      return Optional.empty();
    }
    return Optional.of(
        new Rejection(
            RejectionReason.BAD_ID,
            split.isEmpty()
                ? "a schedule id that starts with U+0000 addresses a tenant's id: U+0000, the"
                    + " tenant, U+0000, the id"
                : "'" + split.get().tenant() + "' is not a tenant of this deployment"));
  }

  private void handle(Record<byte[], byte[]> record, long now, TopicWaits.Copy copy) {
    fence.consumed();
    if (fence.isFence(record, context.recordMetadata())) {
      return; // kdelay's own, read so that this task's commits carry its offsets
    }
    Optional<Rejection> badTenant = badTenant(record);
    if (badTenant.isPresent()) {
      aside.goesOn(record, copy);
      deadLetter(record, actionOf(record), badTenant.get(), now);
      return;
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
      reroute(record, now, WaitingAside.place(copy));
      context.commit();
      return;
    }
    if (Imports.isImport(record)) {
      takeIn(record, now, copy);
      return;
    }
    // A tenant's id is checked as the tenant sent it, and kept qualified.
    ParseResult result =
        parser.parse(
            TenantIds.idBytes(record.key()),
            record.value(),
            record.headers(),
            RequestTimestamps.counted(record, now, maxClockSkewMs),
            now);
    if (result instanceof ParseResult.Rejected rejected) {
      aside.goesOn(record, copy);
      deadLetter(record, actionOf(record), rejected.rejection(), now);
      return;
    }
    DelayRequest request = ofItsTenant(record, ((ParseResult.Accepted) result).request());
    Optional<TargetTopic> target = Optional.of(TargetTopic.UNKNOWN);
    if (request.schedule() != null) {
      Optional<Rejection> refused =
          tooLargeForItsTenant(request).or(() -> check.byPolicy(request.id(), request.schedule()));
      if (refused.isPresent()) {
        aside.goesOn(record, copy);
        deadLetter(record, request.action(), refused.get(), now);
        return;
      }
      target = check.target(request.schedule());
    }
    if (aside.waitsAside(record, request, target.isPresent(), copy, now)) {
      return;
    }
    aside.goesOn(record, copy);
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

  /** Why a tenant's schedule is larger than its tenant may send ({@code TOO_LARGE}), or empty. */
  private Optional<Rejection> tooLargeForItsTenant(DelayRequest request) {
    byte[] payload = request.schedule().payload();
    if (tenants.isEmpty() || payload == null || !TenantIds.isQualified(request.id())) {
      return Optional.empty();
    }
    String tenant = TenantIds.tenantOf(request.id());
    int most = tenants.named(tenant).map(Tenants.Tenant::maxPayloadBytes).orElse(Integer.MAX_VALUE);
    return payload.length <= most
        ? Optional.empty()
        : Optional.of(
            new Rejection(
                RejectionReason.TOO_LARGE,
                "payload of "
                    + payload.length
                    + " bytes exceeds tenant "
                    + tenant
                    + "'s limit of "
                    + most
                    + " (delay.tenant."
                    + tenant
                    + ".max.payload.bytes)"));
  }

  /** The request with the id kdelay keeps for it: qualified, if its key is a tenant's. */
  private static DelayRequest ofItsTenant(Record<byte[], byte[]> record, DelayRequest request) {
    if (!TenantIds.isQualified(record.key())) {
      return request;
    }
    String tenant = TenantIds.tenantOf(new String(record.key(), StandardCharsets.UTF_8));
    return new DelayRequest(
        request.action(),
        TenantIds.qualified(tenant, request.id()),
        request.timestamp(),
        request.schedule(),
        request.newTiming());
  }

  /**
   * Takes in a schedule moved here from another deployment ({@link ScheduleMove}), checked as a
   * schedule request is: by the target policy, and against its target topic.
   */
  private void takeIn(Record<byte[], byte[]> record, long now, TopicWaits.Copy copy) {
    Imports.Read read = imports.read(record, now);
    if (read instanceof Imports.Refused refused) {
      aside.goesOn(record, copy);
      deadLetter(record, null, refused.rejection(), now);
      return;
    }
    Imports.Taken taken = (Imports.Taken) read;
    String id = taken.id();
    Schedule schedule = taken.schedule();
    Optional<TargetTopic> target = Optional.of(TargetTopic.UNKNOWN);
    if (schedule != null) {
      Optional<Rejection> refused = check.byPolicy(id, schedule);
      if (refused.isPresent()) {
        aside.goesOn(record, copy);
        deadLetter(record, null, refused.get(), now);
        return;
      }
      target = check.target(schedule);
    }
    // What the entry sets, as a request would: it keeps its place among its id's waiting requests.
    DelayRequest sets =
        schedule == null
            ? new DelayRequest(Action.CANCEL, id, taken.entry().requestMs(), null)
            : new DelayRequest(Action.SCHEDULE, id, taken.entry().requestMs(), schedule);
    if (aside.waitsAside(record, sets, target.isPresent(), copy, now)) {
      return;
    }
    aside.goesOn(record, copy);
    Optional<Rejection> refused =
        (schedule == null
                ? Optional.<Rejection>empty()
                : check.atIntake(id, schedule, target.orElse(TargetTopic.UNKNOWN)))
            .or(() -> schedules.takeIn(id, taken.entry(), now));
    if (refused.isPresent()) {
      deadLetter(record, null, refused.get(), now);
      return;
    }
    if (log.isDebugEnabled()) {
      Delivery.afterward(
          () ->
              log.debug(
                  "event=imported id={} state={}",
                  LogValues.quote(id),
                  taken.entry().state().name().toLowerCase(Locale.ROOT)));
    }
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

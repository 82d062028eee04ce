package dev.kdelay.topology.internals;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.schemas.Action;
import dev.kdelay.schemas.DelayRequest;
import dev.kdelay.schemas.Rejection;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.schemas.Schedule;
import dev.kdelay.schemas.Target;
import dev.kdelay.schemas.Timing;
import dev.kdelay.topology.DelayMetrics;
import dev.kdelay.topology.internals.delivery.DeliveryQuarantine;
import dev.kdelay.topology.internals.delivery.FireCommits;
import dev.kdelay.topology.internals.delivery.FireSteps;
import dev.kdelay.topology.internals.delivery.FiredKey;
import dev.kdelay.topology.internals.delivery.Firing;
import dev.kdelay.topology.internals.limits.FireSlots;
import dev.kdelay.topology.internals.store.MeteredScheduleStore;
import dev.kdelay.topology.internals.store.ScheduleEntry;
import dev.kdelay.topology.internals.store.ScheduleEntry.State;
import dev.kdelay.topology.internals.store.ScheduleStoreBuilder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Properties;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Held fire writes ({@link Schedules}, at least once) over the real store, with requests for the
 * fired id arriving before any commit: in a running stream thread a punctuation and the records
 * polled after it run with no commit between them, which the topology test driver, committing after
 * every call, never does. So each step here runs inside one record's processing.
 */
class HeldFireWritesTest {

  private static final String STORE = "schedules";
  private static final Instant START = Instant.parse("2026-06-01T12:00:00Z");

  @TempDir Path stateDir;
  private TopologyTestDriver driver;
  private TestInputTopic<byte[], byte[]> steps;
  private MeteredScheduleStore store;
  private Schedules schedules;
  private ScheduleWrites writes;
  private DueEntries due;
  private final List<Record<FiredKey, byte[]>> fired = new ArrayList<>();
  private Consumer<Long> step;
  private ProcessorContext<Object, Object> context;

  @BeforeEach
  void start() {
    Topology topology =
        new Topology()
            .addSource("steps", new ByteArrayDeserializer(), new ByteArrayDeserializer(), "steps")
            .addProcessor("script", Script::new, "steps")
            .addStateStore(
                new ScheduleStoreBuilder(STORE, Duration.ofDays(1).toMillis()), "script");
    Properties props = new Properties();
    props.put(StreamsConfig.APPLICATION_ID_CONFIG, "held-fire-writes");
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
    props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
    props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
    driver = new TopologyTestDriver(topology, props, START);
    steps = driver.createInputTopic("steps", new ByteArraySerializer(), new ByteArraySerializer());
  }

  @AfterEach
  void stop() {
    driver.close();
  }

  /** A quarantine that learned nothing: punctuations fire whole batches. */
  private DeliveryQuarantine noRefusals() {
    return new DeliveryQuarantine(
        new dev.kdelay.topology.DelayConfig(
            java.util.Map.of(
                dev.kdelay.topology.DelayConfig.BOOTSTRAP_SERVERS_CONFIG,
                "unused:9092",
                dev.kdelay.topology.DelayConfig.STATE_DIR_CONFIG,
                stateDir.toString())));
  }

  @Test
  void shouldHoldTheFireWriteAndNeverApplyARequestOverIt() {
    // given: a one-shot due in a second
    long dueMs = START.toEpochMilli() + 1_000;
    run(now -> assertThat(apply(Action.SCHEDULE, now, schedule(dueMs))).isEmpty());
    driver.advanceWallClockTime(Duration.ofSeconds(2));

    run(
        now -> {
          // when: it fires
          List<MeteredScheduleStore.Due> dueNow = store.due(now, 10, Long.MAX_VALUE);
          assertThat(dueNow).hasSize(1);
          due.onDue(dueNow.get(0), now, firing());

          // then: its write waits, and a request for it is no longer applied here (the processor
          // sends it round the reroute topic until the write is made: a request applied over a
          // held write was lost when the task closed after the commit of its offset)
          assertThat(fired).hasSize(1);
          assertThat(writes.heldCount()).isEqualTo(1);
          assertThat(writes.isHeld("order-1")).isTrue();
          assertThat(state()).isEqualTo(State.SCHEDULED);
          assertThatThrownBy(() -> apply(Action.CANCEL, now + 1, null))
              .isInstanceOf(IllegalStateException.class);
        });

    // when: the next call after the commit that ended the last one
    run(now -> writes.releaseIfCommitted());

    // then: the fired marker is written, and a request applies over it
    run(
        now -> {
          assertThat(writes.heldCount()).isZero();
          assertThat(state()).isEqualTo(State.FIRED);
          assertThat(store.due(now, 10, Long.MAX_VALUE)).isEmpty();
          assertThat(apply(Action.CANCEL, now + 1, null)).isEmpty();
          assertThat(state()).isEqualTo(State.CANCELLED);
        });
  }

  @Test
  void shouldStoreAReplacementThatIsDueAlreadyAndFireItFromTheStore() {
    // given: a one-shot due in a minute, stored
    run(now -> assertThat(apply(Action.SCHEDULE, now, schedule(now + 60_000))).isEmpty());

    run(
        now -> {
          FirePunctuator punctuator = punctuator(10, id -> false);

          // when: replaced by one that is due already
          assertThat(apply(Action.SCHEDULE, now + 1, schedule(now - 1))).isEmpty();

          // then: stored at once over the old entry, as any schedule is, and nothing fired yet
          assertThat(fired).isEmpty();
          assertThat(writes.heldCount()).isZero();
          assertThat(store.lookup("order-1").orElseThrow().entry().value().timeMs())
              .isEqualTo(now - 1);

          // when: the punctuation
          punctuator.punctuate(now);

          // then: the replacement fires, once
          assertThat(fired).extracting(Record::timestamp).containsExactly(now - 1);
        });

    // and: after the commit, its marker; the old entry never fires
    run(now -> writes.releaseIfCommitted());
    run(
        now -> {
          assertThat(state()).isEqualTo(State.FIRED);
          assertThat(store.due(now + 120_000, 10, Long.MAX_VALUE)).isEmpty();
          assertThat(fired).hasSize(1);
        });
  }

  @Test
  void shouldWriteARequestForAnotherIdAtOnce() {
    // given: a fired one-shot, its write held
    long dueMs = START.toEpochMilli() + 1_000;
    run(now -> apply(Action.SCHEDULE, now, schedule(dueMs)));
    driver.advanceWallClockTime(Duration.ofSeconds(2));
    run(
        now -> {
          due.onDue(store.due(now, 10, Long.MAX_VALUE).get(0), now, firing());

          // when
          schedules.apply(
              new DelayRequest(Action.SCHEDULE, "other", now, schedule(now + 60_000)),
              ScheduleEntry.Origin.UNKNOWN,
              now,
              firing());

          // then: the other id is stored, the fired one still waits
          assertThat(store.lookup("other")).isPresent();
          assertThat(state()).isEqualTo(State.SCHEDULED);
          assertThat(writes.heldCount()).isEqualTo(1);
        });
  }

  @Test
  void shouldFireTasksDueAfterAHeldBatchBeforeItsCommitAndNeverTheHeldOnesAgain() {
    // given: a one-shot due in a second
    long dueMs = START.toEpochMilli() + 1_000;
    run(now -> assertThat(apply(Action.SCHEDULE, now, schedule(dueMs))).isEmpty());
    driver.advanceWallClockTime(Duration.ofSeconds(2));
    FirePunctuator[] punctuator = new FirePunctuator[1];

    run(
        now -> {
          punctuator[0] = punctuator(3, id -> false);
          punctuator[0].punctuate(now);
          assertThat(writes.heldCount()).isEqualTo(1);

          // when: one comes due after it, one before it, and punctuations follow with no commit
          schedule("order-2", now - 1, now);
          punctuator[0].punctuate(now);
          schedule("order-3", dueMs - 500, now);
          punctuator[0].punctuate(now);

          // then: the later one fired, the held one was not read again, the earlier one waits
          assertThat(firedIds()).containsExactly("order-1", "order-2");
          assertThat(writes.heldCount()).isEqualTo(2);
        });

    // when: the next punctuation after the commit
    run(now -> punctuator[0].punctuate(now));

    // then: the held writes are made, and the one that waited fires
    assertThat(firedIds()).containsExactly("order-1", "order-2", "order-3");
    run(now -> assertThat(state()).isEqualTo(State.FIRED));
  }

  /**
   * A due entry that waited for requests for its id fires once they are applied, also when they
   * wrote nothing to the store (a request dead-lettered, say): the scan that passed it over had
   * moved the store's bounds past it, and in a partition with no other write it was never scanned
   * again.
   */
  @Test
  void shouldFireADueEntryThatWaitedOnceTheRequestsForItsIdAreAppliedWithoutAWrite() {
    // given: a one-shot due already, and a request for its id read and not applied yet
    long dueMs = START.toEpochMilli() - 1;
    run(now -> assertThat(apply(Action.SCHEDULE, now, schedule(dueMs))).isEmpty());
    boolean[] unapplied = {true};
    FirePunctuator[] punctuator = new FirePunctuator[1];
    run(now -> punctuator[0] = punctuator(10, id -> unapplied[0]));
    run(now -> punctuator[0].punctuate(now));
    assertThat(fired).isEmpty();

    // when: the request is applied and writes nothing; the next punctuation
    unapplied[0] = false;
    driver.advanceWallClockTime(Duration.ofMillis(5));
    run(now -> punctuator[0].punctuate(now));

    // then
    assertThat(firedIds()).containsExactly("order-1");
  }

  /**
   * A due entry waits while a request for its id was read and not applied yet (PolledRequests), but
   * not for ever: a producer that sends requests for one id without pause would hold its fire for
   * good. Here every id always has such a request.
   */
  @Test
  void shouldFireADueEntryThatWaitedForRequestsForItsIdAtMostTheLongestWait() {
    // given: a one-shot due already, and requests for its id read and not applied, always
    long dueMs = START.toEpochMilli() - 1;
    run(now -> assertThat(apply(Action.SCHEDULE, now, schedule(dueMs))).isEmpty());
    FirePunctuator[] punctuator = new FirePunctuator[1];
    run(now -> punctuator[0] = punctuator(10, id -> true));

    // when: punctuations up to just before the longest wait
    long longest = FirePunctuator.MAX_WAIT_FOR_REQUESTS_MS;
    run(now -> punctuator[0].punctuate(now));
    driver.advanceWallClockTime(Duration.ofMillis(longest / 2));
    run(now -> punctuator[0].punctuate(now));
    driver.advanceWallClockTime(Duration.ofMillis(longest / 2 - 1));
    run(now -> punctuator[0].punctuate(now));

    // then: it waits
    assertThat(fired).isEmpty();

    // when: the longest wait is over
    driver.advanceWallClockTime(Duration.ofMillis(1));
    run(now -> punctuator[0].punctuate(now));

    // then: it fires, once
    assertThat(firedIds()).containsExactly("order-1");
  }

  /**
   * A punctuator over this test's store that fires at most {@code maxFires} per punctuation and
   * lets an entry wait while {@code unapplied} says a request for its id was read; call in a step.
   */
  private FirePunctuator punctuator(int maxFires, Predicate<String> unapplied) {
    return new FirePunctuator(
        context,
        store,
        writes,
        due,
        firing(),
        maxFires,
        new FireCommits(10, 100, 1_000, 10_000),
        DelayMetrics.NOOP,
        new PartitionState(0),
        new FireSteps(noRefusals(), maxFires),
        new TaskFence(false, "reroute", 0),
        unapplied);
  }

  private void schedule(String id, long dueMs, long nowMs) {
    assertThat(
            schedules.apply(
                new DelayRequest(Action.SCHEDULE, id, nowMs, schedule(dueMs)),
                ScheduleEntry.Origin.UNKNOWN,
                nowMs,
                firing()))
        .isEmpty();
  }

  private List<String> firedIds() {
    return fired.stream()
        .map(record -> new String(record.key().key(), StandardCharsets.UTF_8))
        .toList();
  }

  /** Runs a step inside the processing of one record, at the driver's wall-clock time. */
  private void run(Consumer<Long> step) {
    this.step = step;
    steps.pipeInput(new byte[0], new byte[0]);
  }

  private Optional<Rejection> apply(Action action, long nowMs, Schedule schedule) {
    return schedules.apply(
        new DelayRequest(action, "order-1", nowMs, schedule),
        ScheduleEntry.Origin.UNKNOWN,
        nowMs,
        firing());
  }

  private Firing firing() {
    return new Firing() {
      @Override
      public void fire(Record<FiredKey, byte[]> record, long nowMs, long readyMs) {
        fired.add(record);
      }

      @Override
      public void deadLetter(Record<byte[], byte[]> deadLetter, RejectionReason reason) {
        throw new AssertionError("no entry here is dead-lettered: " + reason);
      }
    };
  }

  private State state() {
    return store.lookup("order-1").orElseThrow().entry().value().state();
  }

  private static Schedule schedule(long dueMs) {
    return new Schedule(
        new Target("target", null, OptionalInt.empty()),
        new Timing.Once(dueMs),
        "v".getBytes(StandardCharsets.UTF_8),
        List.of());
  }

  /** Runs the test's step for each record, with the real store and held fire writes. */
  private class Script implements Processor<byte[], byte[], Object, Object> {

    @Override
    public void init(ProcessorContext<Object, Object> processorContext) {
      context = processorContext;
      store = context.getStateStore(STORE);
      Recurrence recurrence =
          new Recurrence(new Occurrences(Duration.ofDays(365).toMillis()), 0, 0);
      writes = new ScheduleWrites(store, new PartitionState(0), true);
      due =
          new DueEntries(
              writes,
              recurrence,
              DelayMetrics.NOOP,
              Duration.ofHours(1).toMillis(),
              FireSlots.none());
      schedules =
          new Schedules(
              store,
              writes,
              due,
              Duration.ofHours(1).toMillis(),
              recurrence,
              DelayMetrics.NOOP,
              TenantPending.NONE);
      store.onCommit(writes::committing);
    }

    @Override
    public void process(Record<byte[], byte[]> record) {
      step.accept(context.currentSystemTimeMs());
    }
  }
}

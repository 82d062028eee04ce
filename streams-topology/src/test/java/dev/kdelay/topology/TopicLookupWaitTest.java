package dev.kdelay.topology;

import static dev.kdelay.topology.DelayDriver.TARGET;
import static dev.kdelay.topology.DelayDriver.header;
import static dev.kdelay.topology.DelayDriver.headerText;
import static dev.kdelay.topology.DelayDriver.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A request for a target topic kdelay has not seen before waits aside, on the reroute topic, for
 * the topic's look-up, while the other requests flow; its id's later requests wait behind it, in
 * order; it is dead-lettered {@code UNKNOWN_TOPIC} only once the topic is known to be absent, and
 * taken unchecked when the look-up does not answer in time.
 */
class TopicLookupWaitTest {

  private static final String NEW = "new-topic";
  private static final String WAITING_HEADER = "kdelay-waiting";

  @TempDir Path stateDir;

  /**
   * What the cluster answers, once a topic has been asked about {@link #PENDING_ROUNDS} times:
   * until then its look-up is under way. Kafka Streams' test driver brings every copy written to
   * the reroute topic straight back, so a copy goes round until the answer comes.
   */
  private static final int PENDING_ROUNDS = 3;

  private final Map<String, TargetTopic> answered = new ConcurrentHashMap<>();
  private final Map<String, Integer> asked = new ConcurrentHashMap<>();

  private final TargetTopics targetTopics =
      new TargetTopics() {
        @Override
        public TargetTopic lookUp(String topic) {
          throw new AssertionError("a stream thread waited for the look-up of " + topic);
        }

        @Override
        public TargetTopic cached(String topic) {
          return answered.getOrDefault(topic, TargetTopic.UNKNOWN);
        }

        @Override
        public Optional<TargetTopic> known(String topic) {
          if (asked.merge(topic, 1, Integer::sum) <= PENDING_ROUNDS && !topic.equals(TARGET)) {
            return Optional.empty();
          }
          return Optional.of(answered.getOrDefault(topic, TargetTopic.UNKNOWN));
        }
      };

  @Test
  void shouldStoreARequestOnceItsTopicIsLookedUpAndFireItOnTime() {
    answered.put(TARGET, TargetTopic.present(1));
    answered.put(NEW, TargetTopic.present(2));
    try (DelayDriver delay = driver()) {
      Instant due = delay.now().plusSeconds(1);

      // when
      delay.request("a", "to-new", header(DelayHeaders.TARGET_TOPIC, NEW), fireAt(due));
      delay.scheduleAt("b", due, "to-known");

      // then a went round the reroute topic until the look-up answered, keeping its place
      List<TestRecord<byte[], byte[]>> rounds = delay.reroutes();
      assertThat(rounds).hasSize(PENDING_ROUNDS).allMatch(r -> text(r.key()).equals("a"));
      assertThat(rounds)
          .extracting(r -> headerText(r.headers(), WAITING_HEADER))
          .doesNotContainNull()
          .containsOnly(headerText(rounds.get(0).headers(), WAITING_HEADER));
      assertThat(asked.get(TARGET)).isEqualTo(1); // b never waited
      assertThat(delay.deadLetters()).isEmpty();

      // and both fire at their due time, without kdelay's header
      delay.advanceTo(due.plusMillis(10));
      assertThat(delay.fired()).extracting(r -> text(r.key())).containsExactly("b");
      List<TestRecord<byte[], byte[]>> fromNew = delay.output(NEW).readRecordsToList();
      assertThat(fromNew).extracting(r -> text(r.value())).containsExactly("to-new");
      assertThat(fromNew.get(0).timestamp()).isEqualTo(due.toEpochMilli());
      assertThat(fromNew.get(0).headers().lastHeader(WAITING_HEADER)).isNull();
      assertThat(delay.reroutes()).isEmpty();
      assertThat(delay.deadLetters()).isEmpty();
    }
  }

  @Test
  void shouldDeadLetterUnknownTopicOnlyOnceTheTopicIsKnownAbsent() {
    answered.put(NEW, TargetTopic.ABSENT);
    try (DelayDriver delay = driver()) {
      delay.request("a", "v", header(DelayHeaders.TARGET_TOPIC, NEW), fireAt(delay.now()));

      assertThat(delay.reroutes()).hasSize(PENDING_ROUNDS);
      TestRecord<byte[], byte[]> dead = single(delay.deadLetters());
      assertThat(headerText(dead.headers(), DelayHeaders.ERROR)).isEqualTo("UNKNOWN_TOPIC");
      assertThat(text(dead.key())).isEqualTo("a");
      assertThat(dead.headers().lastHeader(WAITING_HEADER)).isNull();
    }
  }

  @Test
  void shouldTakeTheRequestUncheckedWhenTheClusterDoesNotSay() {
    try (DelayDriver delay = driver()) {
      Instant due = delay.now().plusSeconds(1);

      // when the look-up ends without an answer (UNKNOWN)
      delay.request("a", "v", header(DelayHeaders.TARGET_TOPIC, NEW), fireAt(due));

      // then it is stored unchecked, and fires
      assertThat(delay.reroutes()).hasSize(PENDING_ROUNDS);
      delay.advanceTo(due.plusMillis(10));
      assertThat(delay.output(NEW).readRecordsToList()).hasSize(1);
      assertThat(delay.deadLetters()).isEmpty();
    }
  }

  @Test
  void shouldLetACopyThatComesBackBehindAnotherOfItsIdWaitItsTurn() {
    answered.put(NEW, TargetTopic.present(1));
    try (DelayDriver delay = driver()) {
      Instant due = delay.now().plusSeconds(1);
      delay.request("x", "first", header(DelayHeaders.TARGET_TOPIC, NEW), fireAt(due));
      TestRecord<byte[], byte[]> copy = delay.reroutes().get(0);
      delay.advanceTo(due.plusMillis(10));
      assertThat(delay.output(NEW).readRecordsToList()).hasSize(1);

      // when a copy comes back that this task did not send (a restart lost what it knew): adopted
      delay.rerouted(copy);

      // then it goes on as its id's only one: it fired already, so it is superseded, not refired
      assertThat(delay.output(NEW).readRecordsToList()).isEmpty();
      assertThat(delay.reroutes()).isEmpty();
      assertThat(headerText(single(delay.deadLetters()).headers(), DelayHeaders.ERROR))
          .isEqualTo("SUPERSEDED");
    }
  }

  @Test
  void shouldIgnoreAWaitingHeaderWrittenToTheRequestTopic() {
    answered.put(TARGET, TargetTopic.present(1));
    try (DelayDriver delay = driver()) {
      Instant due = delay.now().plusSeconds(1);

      // when a producer writes kdelay's waiting header itself
      delay.scheduleAt("a", due, "v", header(WAITING_HEADER, "0 forged"));

      // then the request is an ordinary one: stored at once, fired without it
      assertThat(delay.reroutes()).isEmpty();
      delay.advanceTo(due.plusMillis(10));
      List<TestRecord<byte[], byte[]>> fired = delay.fired();
      assertThat(fired).extracting(r -> text(r.key())).containsExactly("a");
      assertThat(fired.get(0).headers().lastHeader(WAITING_HEADER)).isNull();
    }
  }

  private DelayDriver driver() {
    return new DelayDriver(stateDir, Map.of(), targetTopics);
  }

  private static org.apache.kafka.common.header.Header fireAt(Instant due) {
    return header(DelayHeaders.FIRE_AT, Long.toString(due.toEpochMilli()));
  }

  private static TestRecord<byte[], byte[]> single(List<TestRecord<byte[], byte[]>> records) {
    assertThat(records).hasSize(1);
    return records.get(0);
  }
}

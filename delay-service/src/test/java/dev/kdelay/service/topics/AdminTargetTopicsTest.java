package dev.kdelay.service.topics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.service.SettableClock;
import dev.kdelay.topology.TargetTopic;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The timing and bookkeeping of {@link AdminTargetTopics}: reads the test completes when it wants,
 * which a real broker cannot be made to do. What the cluster answers is {@link
 * AdminTargetTopicsIT}.
 */
class AdminTargetTopicsTest {

  private final SettableClock clock = new SettableClock();
  private final HeldReads reads = new HeldReads();
  private final List<Collection<String>> warmed = new CopyOnWriteArrayList<>();
  private final AdminTargetTopics topics =
      new AdminTargetTopics(
          reads,
          new TargetTopicCache(100, Duration.ofSeconds(5), clock),
          Duration.ofMillis(50),
          Duration.ofHours(1), // refresh() is called by the tests
          warmed::add,
          Duration.ZERO); // a first absence is read again at once

  @AfterEach
  void close() {
    topics.close();
  }

  @Test
  void shouldReadATopicOnceWhenAskedAgainWhileTheReadIsInFlight() {
    assertThat(topics.cached("t")).isEqualTo(TargetTopic.UNKNOWN);
    assertThat(topics.cached("t")).isEqualTo(TargetTopic.UNKNOWN);
    assertThat(topics.lookUp("t")).isEqualTo(TargetTopic.UNKNOWN);

    assertThat(reads.batches()).containsExactly(List.of("t"));
  }

  @Test
  void shouldAnswerFromMemoryWhenTheSlowReadHasFinished() {
    // given: a look-up that gave up waiting
    assertThat(topics.lookUp("t")).isEqualTo(TargetTopic.UNKNOWN);

    // when
    reads.answer(Map.of("t", TargetTopic.present(4)));

    // then
    assertThat(topics.cached("t")).isEqualTo(TargetTopic.present(4));
    assertThat(topics.lookUp("t")).isEqualTo(TargetTopic.present(4));
    assertThat(reads.batches()).hasSize(1);
  }

  @Test
  void shouldTellIntakeNothingWhileATopicIsLookedUpAndNeverWait() {
    // when: intake asks twice while the read is in flight
    assertThat(topics.known("t")).isEmpty();
    assertThat(topics.known("t")).isEmpty();

    // then one read, and the answer once it came (an absence once read again)
    reads.answer(Map.of("t", TargetTopic.ABSENT));
    reads.awaitBatches(2);
    assertThat(topics.known("t")).isEmpty();
    reads.answer(Map.of("t", TargetTopic.ABSENT));
    assertThat(settled("t")).isEqualTo(TargetTopic.ABSENT);
    assertThat(reads.batches()).containsExactly(List.of("t"), List.of("t"));
  }

  @Test
  void shouldBelieveAFirstAbsenceOnlyWhenASecondReadSaysItToo() {
    // given: a topic created a moment ago, which one broker does not know yet
    assertThat(topics.known("new")).isEmpty();
    reads.answer(Map.of("new", TargetTopic.ABSENT));

    // then: still being looked up (intake keeps its requests aside), and read again
    reads.awaitBatches(2);
    assertThat(topics.known("new")).isEmpty();
    assertThat(topics.cached("new")).isEqualTo(TargetTopic.UNKNOWN);

    // when: the second read finds it
    reads.answer(Map.of("new", TargetTopic.present(3)));

    // then: present, never absent, and warmed
    assertThat(settled("new")).isEqualTo(TargetTopic.present(3));
    assertThat(warmed).containsExactly(List.of("new"));
    assertThat(reads.batches()).hasSize(2);
  }

  @Test
  void shouldNotReadAgainAnAbsenceItAlreadyBelieved() {
    // given: an absence confirmed, then expired
    believedAbsent("gone");
    clock.advance(Duration.ofSeconds(5));

    // when: read again, and still absent
    topics.cached("gone");
    reads.awaitBatches(3);
    reads.answer(Map.of("gone", TargetTopic.ABSENT));

    // then: believed at once
    assertThat(settled("gone")).isEqualTo(TargetTopic.ABSENT);
    assertThat(reads.batches()).hasSize(3);
  }

  @Test
  void shouldTellIntakeUnknownWhenTheReadEndedWithoutAnAnswer() {
    reads.failNext();

    assertThat(topics.known("t")).contains(TargetTopic.UNKNOWN);
  }

  @Test
  void shouldReadAgainWhenTheClusterDidNotAnswer() {
    topics.cached("t");
    reads.answer(Map.of("t", TargetTopic.UNKNOWN));

    topics.cached("t");

    assertThat(reads.batches()).hasSize(2);
  }

  @Test
  void shouldKeepAnsweringAbsentButReadAgainWhenTheAbsenceHasExpired() {
    // given
    believedAbsent("gone");

    // when
    clock.advance(Duration.ofSeconds(5));

    // then: the fire path still has an answer, and a new read has started
    assertThat(topics.cached("gone")).isEqualTo(TargetTopic.ABSENT);
    assertThat(reads.batches()).hasSize(3);
  }

  @Test
  void shouldRefreshEveryKnownTopicInOneReadAndKeepAnswersWhenTheRefreshFails() {
    // given
    topics.cached("a");
    reads.answer(Map.of("a", TargetTopic.present(1)));
    topics.cached("b");
    reads.answer(Map.of("b", TargetTopic.present(1)));

    // when: the refresh learns of a change to one and hears nothing of the other
    CompletableFuture<Void> refreshed = CompletableFuture.runAsync(topics::refresh);
    reads.awaitBatches(3);
    reads.answer(Map.of("a", TargetTopic.present(2), "b", TargetTopic.UNKNOWN));
    refreshed.join();

    // then
    assertThat(reads.batches().get(2)).containsExactlyInAnyOrder("a", "b");
    assertThat(topics.cached("a")).isEqualTo(TargetTopic.present(2));
    assertThat(topics.cached("b")).isEqualTo(TargetTopic.present(1));
  }

  @Test
  void shouldWarmATopicWhenFirstFoundPresentAndEveryExistingTopicAtEachRefresh() {
    topics.cached("here");
    reads.answer(Map.of("here", TargetTopic.present(1)));
    believedAbsent("gone");
    assertThat(warmed).containsExactly(List.of("here"));

    CompletableFuture<Void> refreshed = CompletableFuture.runAsync(topics::refresh);
    reads.awaitBatches(4);
    reads.answer(Map.of("here", TargetTopic.present(1), "gone", TargetTopic.ABSENT));
    refreshed.join();

    assertThat(warmed).containsExactly(List.of("here"), List.of("here"));
  }

  /** Reads a topic the cluster twice says is absent, until the absence is believed. */
  private void believedAbsent(String topic) {
    int before = reads.batches().size();
    topics.cached(topic);
    reads.answer(Map.of(topic, TargetTopic.ABSENT));
    reads.awaitBatches(before + 2);
    reads.answer(Map.of(topic, TargetTopic.ABSENT));
    settled(topic);
  }

  /**
   * Waits until a topic's read has ended and returns its answer. The second read of a first absence
   * starts on another thread, which may finish handing its answer on just after the test gave it.
   */
  private TargetTopic settled(String topic) {
    long deadline = System.currentTimeMillis() + 10_000;
    Optional<TargetTopic> known;
    while ((known = topics.known(topic)).isEmpty()) {
      assertThat(System.currentTimeMillis()).as("%s settled in time", topic).isLessThan(deadline);
      try {
        Thread.sleep(1);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
    return known.get();
  }

  /** Reads that complete when the test answers them, oldest first. */
  private static final class HeldReads implements AdminTargetTopics.Reader {

    private final List<List<String>> batches = new ArrayList<>();
    private final List<CompletableFuture<Map<String, TargetTopic>>> pending = new ArrayList<>();
    private boolean failNext;

    @Override
    public synchronized CompletableFuture<Map<String, TargetTopic>> read(
        Collection<String> topics) {
      batches.add(List.copyOf(topics));
      if (failNext) {
        failNext = false;
        throw new IllegalStateException("the Admin client is closed");
      }
      CompletableFuture<Map<String, TargetTopic>> read = new CompletableFuture<>();
      pending.add(read);
      notifyAll();
      return read;
    }

    /** The next read fails as it starts, as a closed Admin client's does. */
    synchronized void failNext() {
      failNext = true;
    }

    synchronized List<List<String>> batches() {
      return List.copyOf(batches);
    }

    synchronized void awaitBatches(int count) {
      long deadline = System.currentTimeMillis() + 10_000;
      while (batches.size() < count) {
        long left = deadline - System.currentTimeMillis();
        assertThat(left).as("read %d started in time", count).isPositive();
        try {
          wait(left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new AssertionError(e);
        }
      }
    }

    void answer(Map<String, TargetTopic> found) {
      CompletableFuture<Map<String, TargetTopic>> oldest;
      synchronized (this) {
        oldest = pending.remove(0);
      }
      oldest.complete(found);
    }
  }
}

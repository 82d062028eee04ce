package dev.kdelay.topology.internals.delivery;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.junit.jupiter.api.Test;

class FireCommitsTest {

  @Test
  void shouldCommitAtOnceWhenQuietAndAtMostOncePerIntervalWhenBusy() throws Exception {
    Runnable thread =
        () -> {
          MockProcessorContext<Object, Object> context = new MockProcessorContext<>();
          FireCommits commits = new FireCommits(20, 100, 1_000, 10_000);

          commits.fired(0);
          commits.maybeRequest(context, 1_000);
          assertThat(context.committed()).isTrue();
          context.resetCommit();
          FireCommits.committed(); // the commit runs; the thread is back at 1_002
          commits.maybeRequest(context, 1_002);

          commits.fired(0);
          commits.maybeRequest(context, 1_005); // 3 ms after that commit ended: waits
          assertThat(context.committed()).isFalse();
          commits.maybeRequest(context, 1_021);
          assertThat(context.committed()).isFalse();
          commits.maybeRequest(context, 1_022); // the interval passed: the waiting fire commits
          assertThat(context.committed()).isTrue();
          context.resetCommit();
          FireCommits.committed();

          commits.maybeRequest(context, 1_100); // nothing pending: nothing to commit
          assertThat(context.committed()).isFalse();
        };
    runOnOwnThread(thread);
  }

  @Test
  void shouldNotCommitAgainForFiresTheAskedForCommitIncluded() throws Exception {
    Runnable thread =
        () -> {
          MockProcessorContext<Object, Object> context = new MockProcessorContext<>();
          FireCommits commits = new FireCommits(20, 100, 1_000, 10_000);

          // given: a punctuation fires, asks for a commit, then fires more, seconds late
          commits.fired(0);
          commits.maybeRequest(context, 1_000);
          assertThat(context.committed()).isTrue();
          context.resetCommit();
          commits.fired(3_000);
          commits.maybeRequest(context, 1_001);
          assertThat(context.committed()).isFalse();

          // when: the commit runs, including them all
          FireCommits.committed();
          commits.maybeRequest(context, 1_010);

          // then: no commit of their own, later
          commits.maybeRequest(context, 1_200);
          assertThat(context.committed()).isFalse();

          // and: their lateness went with that commit: an on-time fire waits the short interval
          commits.fired(0);
          commits.maybeRequest(context, 1_030);
          assertThat(context.committed()).isTrue();
        };
    runOnOwnThread(thread);
  }

  @Test
  void shouldShareTheIntervalBetweenTheTasksOfOneThread() throws Exception {
    Runnable thread =
        () -> {
          MockProcessorContext<Object, Object> first = new MockProcessorContext<>();
          MockProcessorContext<Object, Object> second = new MockProcessorContext<>();
          FireCommits firstTask = new FireCommits(20, 100, 1_000, 10_000);
          FireCommits secondTask = new FireCommits(20, 100, 1_000, 10_000);

          firstTask.fired(0);
          firstTask.maybeRequest(first, 1_000);
          secondTask.fired(0);
          secondTask.maybeRequest(second, 1_001);

          assertThat(first.committed()).isTrue();
          assertThat(second.committed()).isFalse();
          secondTask.maybeRequest(second, 1_020);
          assertThat(second.committed()).isTrue();
        };
    runOnOwnThread(thread);
  }

  @Test
  void shouldCountTheIntervalFromTheEndOfTheLastCommit() throws Exception {
    Runnable thread =
        () -> {
          MockProcessorContext<Object, Object> context = new MockProcessorContext<>();
          FireCommits commits = new FireCommits(20, 100, 1_000, 10_000);

          commits.fired(0);
          commits.maybeRequest(context, 1_000);
          assertThat(context.committed()).isTrue();
          context.resetCommit();

          // the commit takes 30 ms, longer than the interval; the next punctuation sees it ended
          FireCommits.committed();
          commits.maybeRequest(context, 1_030);
          commits.fired(0);
          commits.maybeRequest(context, 1_035);
          assertThat(context.committed())
              .as("counted from the request, 35 ms would have passed; from the end, only 5")
              .isFalse();
          commits.maybeRequest(context, 1_049);
          assertThat(context.committed()).isFalse();
          commits.maybeRequest(context, 1_050);
          assertThat(context.committed()).isTrue();
        };
    runOnOwnThread(thread);
  }

  @Test
  void shouldWaitTheBacklogIntervalWhileFiringLateTasksAndGoBackOnceCaughtUp() throws Exception {
    Runnable thread =
        () -> {
          MockProcessorContext<Object, Object> context = new MockProcessorContext<>();
          FireCommits commits = new FireCommits(20, 100, 1_000, 10_000);
          commits.fired(0);
          commits.maybeRequest(context, 1_000);
          context.resetCommit();
          FireCommits.committed(); // that commit ended at 1_010
          commits.maybeRequest(context, 1_010);

          // when: tasks fire seconds late
          commits.fired(3_000);
          commits.maybeRequest(context, 1_030);

          // then: the short interval has passed, the backlog one has not
          assertThat(context.committed()).isFalse();
          commits.maybeRequest(context, 1_109);
          assertThat(context.committed()).isFalse();
          commits.maybeRequest(context, 1_110);
          assertThat(context.committed()).isTrue();
          context.resetCommit();
          FireCommits.committed(); // ended at 1_150
          commits.maybeRequest(context, 1_150);

          // when: caught up, the next fires are on time
          commits.fired(FireCommits.BEHIND_MS);
          commits.maybeRequest(context, 1_170);

          // then: back to the short interval
          assertThat(context.committed()).isTrue();
        };
    runOnOwnThread(thread);
  }

  @Test
  void shouldLeaveLateFiresToTheRegularCommitWhenTheBacklogIntervalIsNoShorter() throws Exception {
    Runnable thread =
        () -> {
          // given: Kafka Streams commits every 100 ms on its own, the backlog interval as long
          MockProcessorContext<Object, Object> context = new MockProcessorContext<>();
          FireCommits commits = new FireCommits(20, 100, 100, 10_000);
          FireCommits.committed(); // a regular commit, ended at 1_000
          commits.maybeRequest(context, 1_000);

          // when: tasks fire seconds late
          commits.fired(3_000);

          // then: no request, however long: one would come on top of the regular commit
          commits.maybeRequest(context, 1_030);
          commits.maybeRequest(context, 1_100);
          commits.maybeRequest(context, 1_500);
          assertThat(context.committed()).isFalse();

          // when: the regular commit carried them, and the next fires are on time
          FireCommits.committed();
          commits.maybeRequest(context, 1_510);
          commits.fired(0);
          commits.maybeRequest(context, 1_530);

          // then: the short interval asks for its commit as before
          assertThat(context.committed()).isTrue();
        };
    runOnOwnThread(thread);
  }

  @Test
  void shouldAskForNothingWhenTheFireIntervalIsNoShorterThanTheRegularOne() throws Exception {
    Runnable thread =
        () -> {
          MockProcessorContext<Object, Object> context = new MockProcessorContext<>();
          FireCommits commits = new FireCommits(100, 100, 100, 10_000);
          FireCommits.committed(); // a regular commit, ended at 1_000
          commits.maybeRequest(context, 1_000);

          commits.fired(0);
          commits.maybeRequest(context, 1_050);
          commits.maybeRequest(context, 5_000);

          assertThat(context.committed()).as("fires wait for the regular commit").isFalse();
        };
    runOnOwnThread(thread);
  }

  @Test
  void shouldAskForTheFirstCommitAtOnceWhenTheThreadHasSeenNoCommitYet() throws Exception {
    Runnable thread =
        () -> {
          // given: commits a minute apart, and no commit seen on this thread yet: Kafka Streams'
          // first regular commit ran before the thread had tasks, the next is a minute away
          MockProcessorContext<Object, Object> context = new MockProcessorContext<>();
          FireCommits commits = new FireCommits(60_000, 60_000, 60_000, 10_000);

          // when: the first fire
          commits.fired(0);
          commits.maybeRequest(context, 1_000);

          // then: it commits at once, not a minute later
          assertThat(context.committed()).isTrue();

          // and once that commit was seen, later fires wait for the regular commit
          context.resetCommit();
          FireCommits.committed();
          commits.maybeRequest(context, 1_020);
          commits.fired(0);
          commits.maybeRequest(context, 1_040);
          commits.maybeRequest(context, 70_000);
          assertThat(context.committed()).isFalse();
        };
    runOnOwnThread(thread);
  }

  @Test
  void shouldShareATransactionAmongTheTasksWithDueWorkAndCommitOnceAShareIsFired()
      throws Exception {
    Runnable thread =
        () -> {
          MockProcessorContext<Object, Object> context = new MockProcessorContext<>();
          FireCommits a = new FireCommits(20, 100, 1_000, 1_000);
          FireCommits b = new FireCommits(20, 100, 1_000, 1_000);
          FireCommits c = new FireCommits(20, 100, 1_000, 1_000);

          // given: a burst; the first task to punctuate knows of no other with due work
          assertThat(a.allowance()).isEqualTo(1_000);
          a.spent(context, 1_000, 1_000);
          assertThat(context.committed()).as("a fired all it was allowed: commit now").isTrue();
          context.resetCommit();
          assertThat(b.allowance()).as("the transaction is full").isZero();
          assertThat(c.allowance()).isZero();
          FireCommits.committed();
          a.maybeRequest(context, 1_010); // the thread's next punctuation: the commit ended

          // when: the next transaction (twice as large: the burst filled the first), three tasks
          // with due work
          // then: a third each, and each commits once it has fired its third
          assertThat(a.allowance()).isEqualTo(667);
          a.spent(context, 1_000, 667);
          assertThat(context.committed()).isTrue();
          context.resetCommit();
          assertThat(b.allowance()).isEqualTo(667);
          b.spent(context, 1_000, 100); // all b had due
          assertThat(context.committed()).isFalse();
          assertThat(b.allowance()).isEqualTo(567);
          assertThat(c.allowance()).isEqualTo(667);
          c.spent(context, 1_000, 667);
          FireCommits.committed(); // not full, no late fire: the burst is over
          c.maybeRequest(context, 1_020);

          // and: once only one task has due work, it has the whole first transaction again
          assertThat(c.allowance()).isEqualTo(334);
          c.spent(context, 1_000, 10);
          FireCommits.committed();
          c.maybeRequest(context, 1_030);
          assertThat(c.allowance()).isEqualTo(1_000);
        };
    runOnOwnThread(thread);
  }

  @Test
  void shouldDoubleTheTransactionWhileABurstFillsItAndStartSmallAfterIt() throws Exception {
    Runnable thread =
        () -> {
          MockProcessorContext<Object, Object> context = new MockProcessorContext<>();
          FireCommits commits = new FireCommits(20, 100, 1_000, 1_000);

          // given: a burst larger than any transaction; each fills the one it may
          int[] seen = new int[FireCommits.MAX_GROWTH + 3];
          for (int i = 0; i < seen.length; i++) {
            seen[i] = commits.allowance();
            commits.spent(context, 1_000, seen[i]);
            assertThat(context.committed()).as("transaction %d full: commit now", i).isTrue();
            context.resetCommit();
            FireCommits.committed();
            commits.maybeRequest(context, 1_010);
          }

          // then: each transaction allowed twice the last, up to 16 times the first
          assertThat(seen).containsExactly(1_000, 2_000, 4_000, 8_000, 16_000, 16_000, 16_000);

          // when: a transaction ends that is not full and fired nothing late
          assertThat(commits.allowance()).isEqualTo(16_000);
          commits.spent(context, 1_000, 5);
          FireCommits.committed();
          commits.maybeRequest(context, 1_020);

          // then: the next burst starts small again
          assertThat(commits.allowance()).isEqualTo(1_000);
        };
    runOnOwnThread(thread);
  }

  @Test
  void shouldKeepTheGrowthThroughARegularCommitThatCutsALateTransactionShort() throws Exception {
    Runnable thread =
        () -> {
          MockProcessorContext<Object, Object> context = new MockProcessorContext<>();
          FireCommits commits = new FireCommits(20, 100, 1_000, 1_000);
          commits.spent(context, 1_000, commits.allowance()); // full: the next may carry 2,000
          context.resetCommit();
          FireCommits.committed();
          commits.maybeRequest(context, 1_010);

          // when: the burst goes on, fires are late, and the regular commit comes before the
          // transaction is full
          assertThat(commits.allowance()).isEqualTo(2_000);
          commits.fired(FireCommits.BEHIND_MS + 1);
          commits.spent(context, 1_000, 1_500);
          assertThat(context.committed()).as("a share not fired yet: no request").isFalse();
          FireCommits.committed();
          commits.maybeRequest(context, 1_110);

          // then: still in the burst, the transaction stays as large
          assertThat(commits.allowance()).isEqualTo(2_000);
        };
    runOnOwnThread(thread);
  }

  @Test
  void shouldAskForNoCommitWhenAPunctuationFiredLessThanItsShareForALimitOfItsOwn()
      throws Exception {
    Runnable thread =
        () -> {
          MockProcessorContext<Object, Object> context = new MockProcessorContext<>();
          FireCommits commits = new FireCommits(20, 100, 1_000, 10_000);

          // when: the punctuation may fire 10,000 into the transaction, but fires 2,000 (its own
          // limit per punctuation)
          assertThat(commits.allowance()).isEqualTo(10_000);
          commits.spent(context, 1_000, 2_000);

          // then: the transaction goes on; the task fires the rest of its share first
          assertThat(context.committed()).isFalse();
          assertThat(commits.allowance()).isEqualTo(8_000);
          commits.spent(context, 1_005, 8_000);
          assertThat(context.committed()).isTrue();
        };
    runOnOwnThread(thread);
  }

  /** Runs on a fresh thread (the state is per thread) and fails if anything there failed. */
  private static void runOnOwnThread(Runnable body) throws Exception {
    java.util.concurrent.atomic.AtomicReference<Throwable> failure =
        new java.util.concurrent.atomic.AtomicReference<>();
    Thread thread =
        new Thread(
            () -> {
              try {
                body.run();
              } catch (Throwable t) {
                failure.set(t);
              }
            });
    thread.start();
    thread.join();
    if (failure.get() != null) {
      throw new AssertionError(failure.get());
    }
  }
}

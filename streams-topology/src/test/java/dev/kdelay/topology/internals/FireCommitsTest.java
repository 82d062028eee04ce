package dev.kdelay.topology.internals;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.junit.jupiter.api.Test;

class FireCommitsTest {

  @Test
  void shouldCommitAtOnceWhenQuietAndAtMostOncePerIntervalWhenBusy() throws Exception {
    Runnable thread =
        () -> {
          MockProcessorContext<Object, Object> context = new MockProcessorContext<>();
          FireCommits commits = new FireCommits(20, 100);

          commits.fired(context, 1_000, 0);
          assertThat(context.committed()).isTrue();
          context.resetCommit();

          commits.fired(context, 1_005, 0); // 5 ms later: waits
          assertThat(context.committed()).isFalse();
          commits.maybeRequest(context, 1_015);
          assertThat(context.committed()).isFalse();
          commits.maybeRequest(context, 1_020); // the interval passed: the waiting fire commits
          assertThat(context.committed()).isTrue();
          context.resetCommit();

          commits.maybeRequest(context, 1_100); // nothing pending: nothing to commit
          assertThat(context.committed()).isFalse();
        };
    runOnOwnThread(thread);
  }

  @Test
  void shouldShareTheIntervalBetweenTheTasksOfOneThread() throws Exception {
    Runnable thread =
        () -> {
          MockProcessorContext<Object, Object> first = new MockProcessorContext<>();
          MockProcessorContext<Object, Object> second = new MockProcessorContext<>();
          FireCommits firstTask = new FireCommits(20, 100);
          FireCommits secondTask = new FireCommits(20, 100);

          firstTask.fired(first, 1_000, 0);
          secondTask.fired(second, 1_001, 0);

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
          FireCommits commits = new FireCommits(20, 100);

          commits.fired(context, 1_000, 0);
          assertThat(context.committed()).isTrue();
          context.resetCommit();

          // the commit takes 30 ms, longer than the interval; the next punctuation sees it ended
          FireCommits.committed();
          commits.maybeRequest(context, 1_030);
          commits.fired(context, 1_035, 0);
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
          FireCommits commits = new FireCommits(20, 100);
          commits.fired(context, 1_000, 0);
          context.resetCommit();
          FireCommits.committed(); // that commit ended at 1_010
          commits.maybeRequest(context, 1_010);

          // when: tasks fire seconds late
          commits.fired(context, 1_030, 3_000);

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
          commits.fired(context, 1_170, FireCommits.BEHIND_MS);

          // then: back to the short interval
          assertThat(context.committed()).isTrue();
        };
    runOnOwnThread(thread);
  }

  /** Runs on a fresh thread (the limit is per thread) and fails if anything there failed. */
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

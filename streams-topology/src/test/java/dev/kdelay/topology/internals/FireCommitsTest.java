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
          FireCommits commits = new FireCommits(20);

          commits.fired(context, 1_000);
          assertThat(context.committed()).isTrue();
          context.resetCommit();

          commits.fired(context, 1_005); // 5 ms later: waits
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
          FireCommits firstTask = new FireCommits(20);
          FireCommits secondTask = new FireCommits(20);

          firstTask.fired(first, 1_000);
          secondTask.fired(second, 1_001);

          assertThat(first.committed()).isTrue();
          assertThat(second.committed()).isFalse();
          secondTask.maybeRequest(second, 1_020);
          assertThat(second.committed()).isTrue();
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

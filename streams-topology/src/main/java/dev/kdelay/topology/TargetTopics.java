package dev.kdelay.topology;

import java.util.Optional;

/**
 * What kdelay knows of the topics requests target ({@link TargetTopic}). Checked when a request
 * arrives (a missing, refused or too small topic is dead-lettered at once) and again when a task
 * fires (a topic deleted or changed since is dead-lettered, never handed to a producer whose
 * transaction the broker's refusal would fail).
 *
 * <p>Implementations are called on stream threads and keep what they learn in a bounded cache that
 * a background thread refreshes. A stream thread never waits for the cluster: {@link #known} and
 * {@link #cached} answer from memory; only {@link #lookUp}, for callers that may wait (the admin
 * API), does.
 */
public interface TargetTopics {

  /** Checks nothing: every topic may exist and has no limits. For tests and tools. */
  TargetTopics UNCHECKED =
      new TargetTopics() {
        @Override
        public TargetTopic lookUp(String topic) {
          return TargetTopic.UNKNOWN;
        }

        @Override
        public TargetTopic cached(String topic) {
          return TargetTopic.UNKNOWN;
        }

        @Override
        public Optional<TargetTopic> known(String topic) {
          return Optional.of(TargetTopic.UNKNOWN);
        }
      };

  /**
   * What is known of a topic, for a caller that may wait (the admin API): a topic not seen before
   * is looked up, waiting a short bounded time; later calls answer from memory.
   *
   * @param topic a legal topic name
   * @return its description, {@link TargetTopic#UNKNOWN} if the cluster did not answer in time
   */
  TargetTopic lookUp(String topic);

  /**
   * What is known of a topic, for a request that names it, never waiting. A topic not in memory, or
   * remembered absent for longer than absences are trusted, is looked up in the background, and
   * until that look-up answers there is nothing to tell: the request then waits aside for it.
   *
   * @param topic a legal topic name
   * @return its description ({@link TargetTopic#UNKNOWN} if the cluster did not say), or empty
   *     while a look-up of it is under way
   */
  Optional<TargetTopic> known(String topic);

  /**
   * What is known of a topic, for a task about to fire: answers from memory and never waits. A
   * topic not in memory is {@link TargetTopic#UNKNOWN}, and a look-up of it starts in the
   * background.
   *
   * @param topic a legal topic name
   * @return its description, or {@link TargetTopic#UNKNOWN}
   */
  TargetTopic cached(String topic);

  /** A fixed answer for every topic, for tests: {@code topic -> TargetTopic.present(3)}. */
  static TargetTopics of(java.util.function.Function<String, TargetTopic> answer) {
    return new TargetTopics() {
      @Override
      public TargetTopic lookUp(String topic) {
        return answer.apply(topic);
      }

      @Override
      public TargetTopic cached(String topic) {
        return answer.apply(topic);
      }

      @Override
      public Optional<TargetTopic> known(String topic) {
        return Optional.of(answer.apply(topic));
      }
    };
  }
}

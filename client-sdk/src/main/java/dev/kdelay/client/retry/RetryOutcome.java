package dev.kdelay.client.retry;

import java.time.Instant;

/**
 * What a {@link RetryHandler} did with a failed record: scheduled it again through kdelay, or sent
 * it to the dead-letter topic.
 */
public sealed interface RetryOutcome {

  /**
   * The 1-based number of the attempt that failed.
   *
   * @return the attempt
   */
  int attempt();

  /**
   * The topic the record goes to: the retry topic, or the dead-letter topic.
   *
   * @return the topic
   */
  String topic();

  /**
   * The record was scheduled to be delivered again.
   *
   * @param attempt the 1-based number of the attempt that failed
   * @param topic where kdelay delivers the retry
   * @param scheduleId the id of the kdelay schedule, derived from the record's origin and the
   *     attempt
   * @param dueAt when kdelay delivers it
   */
  record Retried(int attempt, String topic, String scheduleId, Instant dueAt)
      implements RetryOutcome {}

  /**
   * The record was written to the dead-letter topic.
   *
   * @param attempt the 1-based number of the attempt that failed
   * @param topic the dead-letter topic
   * @param reason why it was not retried
   */
  record DeadLettered(int attempt, String topic, DeadLetterReason reason) implements RetryOutcome {}
}

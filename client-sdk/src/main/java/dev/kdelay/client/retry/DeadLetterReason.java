package dev.kdelay.client.retry;

/**
 * Why a {@link RetryHandler} sent a record to the dead-letter topic instead of retrying it; the
 * dead letter's {@link RetryHeaders#DEAD_LETTER_REASON} header holds the name.
 */
public enum DeadLetterReason {

  /** The record failed as many times as the policy allows. */
  ATTEMPTS_EXHAUSTED,

  /** The exception is one the policy does not retry: the record would fail the same way again. */
  NOT_RETRYABLE,

  /**
   * The record's key is not UTF-8 text, and kdelay can only key a fired record with text ({@code
   * delay-target-key}); retrying it would change its key.
   */
  KEY_NOT_TEXT
}

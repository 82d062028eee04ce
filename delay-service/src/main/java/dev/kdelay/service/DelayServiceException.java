package dev.kdelay.service;

/**
 * The service could not start or keep running: the embedded broker's port is taken, a kdelay topic
 * has the wrong shape, Kafka Streams did not reach RUNNING in time. Fatal for the process; the
 * message says what to change.
 */
public class DelayServiceException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /**
   * Creates an exception.
   *
   * @param message what failed and what to change
   */
  public DelayServiceException(String message) {
    super(message);
  }

  /**
   * Creates an exception with a cause.
   *
   * @param message what failed and what to change
   * @param cause the underlying failure
   */
  public DelayServiceException(String message, Throwable cause) {
    super(message, cause);
  }
}

package dev.kdelay.schemas;

import static java.util.Objects.requireNonNull;

/**
 * A value the wire contract refuses, with the {@link RejectionReason} a request carrying it is
 * rejected with: the request parser dead-letters it under that code, and the HTTP API answers 400
 * with it.
 *
 * <p>Bad input is data, not a fault, so this exception carries no stack trace.
 */
public final class RejectionException extends IllegalArgumentException {

  private static final long serialVersionUID = 1L;

  private final RejectionReason reason;

  /**
   * Creates the exception.
   *
   * @param reason the rejection code
   * @param message what was wrong, naming the field and the value received
   * @throws NullPointerException if reason or message is null
   */
  public RejectionException(RejectionReason reason, String message) {
    super(requireNonNull(message, "message cannot be null"));
    this.reason = requireNonNull(reason, "reason cannot be null");
  }

  /**
   * The rejection code.
   *
   * @return the reason
   */
  public RejectionReason reason() {
    return reason;
  }

  /**
   * The rejection, its message bounded as {@link Rejection} bounds it.
   *
   * @return the rejection
   */
  public Rejection rejection() {
    return new Rejection(reason, getMessage());
  }

  @Override
  public synchronized Throwable fillInStackTrace() {
    return this;
  }
}

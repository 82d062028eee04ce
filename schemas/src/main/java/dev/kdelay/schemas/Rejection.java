package dev.kdelay.schemas;

import java.util.Objects;

/**
 * Why a request was refused: a stable code and a message for people.
 *
 * @param reason the stable code
 * @param message what was wrong, naming the header and the value received
 */
public record Rejection(RejectionReason reason, String message) {

  /**
   * Creates a rejection.
   *
   * @throws NullPointerException if reason or message is null
   */
  public Rejection {
    Objects.requireNonNull(reason, "reason cannot be null");
    Objects.requireNonNull(message, "message cannot be null");
  }
}

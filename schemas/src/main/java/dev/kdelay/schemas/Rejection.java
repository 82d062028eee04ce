package dev.kdelay.schemas;

import java.util.Objects;

/**
 * Why a request was refused: a stable code and a message for people.
 *
 * <p>The message is bounded: one longer than {@link #MAX_MESSAGE_CHARS} characters is cut there,
 * and says how much was left out. Messages echo what a request sent (a 600 KB garbage {@code
 * delay-fire-at} value, say), and a dead letter must never outgrow its request because of that.
 *
 * @param reason the stable code
 * @param message what was wrong, naming the header and the value received
 */
public record Rejection(RejectionReason reason, String message) {

  /** The most characters a message keeps. */
  public static final int MAX_MESSAGE_CHARS = 400;

  /**
   * Creates a rejection, cutting a message longer than {@link #MAX_MESSAGE_CHARS}.
   *
   * @throws NullPointerException if reason or message is null
   */
  public Rejection {
    Objects.requireNonNull(reason, "reason cannot be null");
    Objects.requireNonNull(message, "message cannot be null");
    message = bounded(message);
  }

  private static String bounded(String message) {
    if (message.length() <= MAX_MESSAGE_CHARS) {
      return message;
    }
    int keep = MAX_MESSAGE_CHARS - 40;
    if (Character.isHighSurrogate(message.charAt(keep - 1))) {
      keep--; // never split a surrogate pair: the header must stay valid UTF-8
    }
    return message.substring(0, keep) + "... (" + (message.length() - keep) + " more characters)";
  }
}

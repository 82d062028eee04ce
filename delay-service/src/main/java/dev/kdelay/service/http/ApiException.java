package dev.kdelay.service.http;

import dev.kdelay.schemas.RejectionReason;

/**
 * A request the HTTP API answers with an error: a status, a stable code and a message for people,
 * sent as {@code {"error": CODE, "message": ...}}.
 */
final class ApiException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final int status;
  private final String code;

  ApiException(int status, String code, String message) {
    super(message);
    this.status = status;
    this.code = code;
  }

  static ApiException badRequest(String code, String message) {
    return new ApiException(400, code, message);
  }

  /** A request that is not what the route takes (not JSON, an unknown field, a wrong type). */
  static ApiException malformed(String message) {
    return badRequest("BAD_REQUEST", message);
  }

  /** A request kdelay would reject for its form: 400 with the request topic's rejection code. */
  static ApiException rejected(RejectionReason reason, String message) {
    return badRequest(reason.name(), message);
  }

  /**
   * A well-formed request kdelay would certainly dead-letter (its target topic missing or refused):
   * 422 with the rejection code it would get.
   */
  static ApiException undeliverable(RejectionReason reason, String message) {
    return new ApiException(422, reason.name(), message);
  }

  /** The instance cannot answer now (rebalancing, restoring, a peer unreachable): retry. */
  static ApiException unavailable(String message) {
    return new ApiException(503, "UNAVAILABLE", message);
  }

  int status() {
    return status;
  }

  String code() {
    return code;
  }
}

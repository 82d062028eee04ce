package dev.kdelay.schemas;

import java.util.Objects;

/** The outcome of parsing a request: a {@link DelayRequest} or a {@link Rejection}. */
public sealed interface ParseResult permits ParseResult.Accepted, ParseResult.Rejected {

  /**
   * The request is valid.
   *
   * @param request the parsed request
   */
  record Accepted(DelayRequest request) implements ParseResult {
    /** Creates an accepted result. */
    public Accepted {
      Objects.requireNonNull(request, "request cannot be null");
    }
  }

  /**
   * The request is invalid.
   *
   * @param rejection why
   */
  record Rejected(Rejection rejection) implements ParseResult {
    /** Creates a rejected result. */
    public Rejected {
      Objects.requireNonNull(rejection, "rejection cannot be null");
    }
  }
}

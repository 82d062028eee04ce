package dev.kdelay.schemas;

/**
 * Bounds a request must stay within.
 *
 * @param maxIdBytes longest schedule id in UTF-8 bytes (at most 1024)
 * @param maxPayloadBytes largest payload in bytes
 * @param maxHeaders most headers on one request
 * @param horizonMs furthest a due time may lie ahead of now, in milliseconds
 */
public record RequestLimits(int maxIdBytes, int maxPayloadBytes, int maxHeaders, long horizonMs) {

  /** The id limit of the wire contract. */
  public static final int CONTRACT_MAX_ID_BYTES = 1024;

  /** The defaults: 1024-byte ids, 1 MiB payloads, 64 headers, a ten-year horizon. */
  public static final RequestLimits DEFAULTS =
      new RequestLimits(CONTRACT_MAX_ID_BYTES, 1024 * 1024, 64, 3653L * 24 * 3600 * 1000);

  /**
   * Creates limits.
   *
   * @throws IllegalArgumentException if a limit is out of range
   */
  public RequestLimits {
    if (maxIdBytes < 1 || maxIdBytes > CONTRACT_MAX_ID_BYTES) {
      throw new IllegalArgumentException("maxIdBytes must be in 1..1024, got " + maxIdBytes);
    }
    if (maxPayloadBytes < 0 || maxHeaders < 0 || horizonMs < 1) {
      throw new IllegalArgumentException(
          "limits must be positive, got payload "
              + maxPayloadBytes
              + ", headers "
              + maxHeaders
              + ", horizon "
              + horizonMs);
    }
  }
}

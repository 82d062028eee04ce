package dev.kdelay.client;

import static java.util.Objects.requireNonNull;

import dev.kdelay.schemas.RequestLimits;
import dev.kdelay.schemas.WireText;

/**
 * How the client writes a request key. The other formats (text, topic names, times) are the
 * contract's own, in {@code dev.kdelay.schemas}; this is the one whose limit the client fixes:
 * every check throws {@link IllegalArgumentException} naming the value and what was expected, so
 * that a request the service would dead-letter fails at the caller instead.
 */
final class WireFormat {

  /** Longest schedule id, in UTF-8 bytes. */
  static final int MAX_ID_BYTES = RequestLimits.CONTRACT_MAX_ID_BYTES;

  /** How much of a rejected value an exception message quotes. */
  private static final int QUOTED_CHARS = 64;

  private WireFormat() {}

  /** The request key: the id as 1..{@value #MAX_ID_BYTES} bytes of well-formed UTF-8. */
  static byte[] scheduleId(String id) {
    requireNonNull(id, "id cannot be null");
    byte[] bytes = WireText.requireEncoded(id, "id");
    if (bytes.length == 0 || bytes.length > MAX_ID_BYTES) {
      String quoted = id.length() <= QUOTED_CHARS ? id : id.substring(0, QUOTED_CHARS) + "...";
      throw new IllegalArgumentException(
          "id must be 1.."
              + MAX_ID_BYTES
              + " UTF-8 bytes, got "
              + bytes.length
              + " bytes: '"
              + quoted
              + "'");
    }
    return bytes;
  }
}

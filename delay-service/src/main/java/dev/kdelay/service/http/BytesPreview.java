package dev.kdelay.service.http;

import dev.kdelay.schemas.WireText;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/** How the API shows bytes of any format (payloads, header values): as text when they can be. */
final class BytesPreview {

  private BytesPreview() {}

  /**
   * Bytes as {@code {"text": ...}} when they are UTF-8, else {@code {"base64": ...}}; cut to a
   * length, with {@code "truncated": true} then.
   */
  static Map<String, Object> of(byte[] bytes, int limit) {
    Map<String, Object> json = new LinkedHashMap<>();
    if (bytes == null) {
      json.put("text", null);
      return json;
    }
    byte[] shown = bytes.length > limit ? Arrays.copyOf(bytes, limit) : bytes;
    Optional<String> text = utf8(shown, bytes.length > limit);
    if (text.isPresent()) {
      json.put("text", text.get());
    } else {
      json.put("base64", Base64.getEncoder().encodeToString(shown));
    }
    if (shown.length < bytes.length) {
      json.put("truncated", true);
    }
    return json;
  }

  /** The bytes as text, if they are UTF-8; a cut may split the last character. */
  private static Optional<String> utf8(byte[] bytes, boolean cut) {
    return WireText.decode(bytes, 0, cut ? trimmed(bytes) : bytes.length);
  }

  /** The length without a trailing partial UTF-8 sequence. */
  private static int trimmed(byte[] bytes) {
    int end = bytes.length;
    int back = 0;
    while (back < 3 && end - back - 1 >= 0 && (bytes[end - back - 1] & 0xC0) == 0x80) {
      back++;
    }
    if (end - back - 1 >= 0 && (bytes[end - back - 1] & 0xC0) == 0xC0) {
      return end - back - 1;
    }
    return end;
  }
}

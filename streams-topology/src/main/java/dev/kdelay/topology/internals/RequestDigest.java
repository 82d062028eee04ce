package dev.kdelay.topology.internals;

import dev.kdelay.schemas.DelayHeaders;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;
import java.util.zip.Checksum;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * A 64-bit digest of what a request is: its key, value and headers, in order, without the headers
 * kdelay writes itself or takes off (a reroute copy carries {@code delay-requested-at}, which the
 * original did not, and never {@code kdelay-fence}). Two CRCs of different polynomials side by
 * side: cheap on large payloads, and two different requests of the same millisecond for one id
 * (where it decides) collide once in 2^64.
 */
final class RequestDigest {

  private RequestDigest() {}

  static long of(byte[] key, byte[] value, Headers headers) {
    Checksum crc32c = new CRC32C();
    Checksum crc32 = new CRC32();
    Checksum[] both = {crc32c, crc32};
    update(both, key);
    update(both, value);
    for (Header header : headers) {
      if (!DelayHeaders.OUTPUT_HEADERS.contains(header.key())
          && !header.key().equals(TaskFence.HEADER)) {
        update(both, header.key().getBytes(StandardCharsets.UTF_8));
        update(both, header.value());
      }
    }
    return (crc32c.getValue() << 32) | crc32.getValue();
  }

  /** Bytes, after their length (-1 for null), so that no two sequences read alike. */
  private static void update(Checksum[] checksums, byte[] bytes) {
    int length = bytes == null ? -1 : bytes.length;
    byte[] prefix = {
      (byte) (length >>> 24), (byte) (length >>> 16), (byte) (length >>> 8), (byte) length
    };
    for (Checksum checksum : checksums) {
      checksum.update(prefix, 0, prefix.length);
      if (bytes != null) {
        checksum.update(bytes, 0, bytes.length);
      }
    }
  }
}

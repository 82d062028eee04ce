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
    Digest digest = new Digest();
    digest.add(key);
    digest.add(value);
    for (Header header : headers) {
      if (!DelayHeaders.OUTPUT_HEADERS.contains(header.key())
          && !header.key().equals(TaskFence.HEADER)) {
        digest.add(header.key().getBytes(StandardCharsets.UTF_8));
        digest.add(header.value());
      }
    }
    return digest.value();
  }

  /**
   * Byte slices, each after its length (-1 for null), so that no two sequences read alike. Short
   * slices are gathered into one buffer that each checksum reads at once: a CRC over a
   * concatenation is the CRC of its parts fed one by one, and a profile of the intake had two dozen
   * short updates per request at 6 % of it. Long slices are read where they are.
   */
  private static final class Digest {
    private static final int GATHERED = 512;

    private final Checksum crc32c = new CRC32C();
    private final Checksum crc32 = new CRC32();
    private final byte[] gathered = new byte[GATHERED];
    private int length;

    void add(byte[] slice) {
      int sliceLength = slice == null ? -1 : slice.length;
      if (GATHERED - length < Integer.BYTES) {
        drain();
      }
      gathered[length++] = (byte) (sliceLength >>> 24);
      gathered[length++] = (byte) (sliceLength >>> 16);
      gathered[length++] = (byte) (sliceLength >>> 8);
      gathered[length++] = (byte) sliceLength;
      if (slice == null) {
        return;
      }
      if (GATHERED - length >= slice.length) {
        System.arraycopy(slice, 0, gathered, length, slice.length);
        length += slice.length;
      } else {
        drain();
        crc32c.update(slice, 0, slice.length);
        crc32.update(slice, 0, slice.length);
      }
    }

    long value() {
      drain();
      return (crc32c.getValue() << 32) | crc32.getValue();
    }

    private void drain() {
      crc32c.update(gathered, 0, length);
      crc32.update(gathered, 0, length);
      length = 0;
    }
  }
}

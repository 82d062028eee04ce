package dev.kdelay.topology.internals;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;
import java.util.zip.Checksum;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

class RequestDigestTest {

  /**
   * Digests are stored with each entry and compared with those of later requests, so the digest of
   * a request never changes between versions: here against the first version's, which fed each
   * length and slice to both checksums one by one.
   */
  @Test
  void digestIsTheFirstVersionsOverGeneratedRequests() {
    Random random = new Random(20261127L);
    for (int i = 0; i < 2_000; i++) {
      byte[] key = maybeBytes(random, 64);
      byte[] value = maybeBytes(random, random.nextInt(10) == 0 ? 5_000 : 300);
      Headers headers = new RecordHeaders();
      int count = random.nextInt(6);
      for (int h = 0; h < count; h++) {
        headers.add(randomName(random), maybeBytes(random, random.nextInt(8) == 0 ? 1_000 : 40));
      }
      if (random.nextBoolean()) {
        headers.add(DelayHeaders.FIRED_AT, "1".getBytes(StandardCharsets.UTF_8));
      }
      if (random.nextInt(4) == 0) {
        headers.add(TaskFence.HEADER, "0".getBytes(StandardCharsets.UTF_8));
      }

      assertThat(RequestDigest.of(key, value, headers))
          .as("request %d", i)
          .isEqualTo(firstVersion(key, value, headers));
    }
  }

  @Test
  void headersKdelayWritesOrTakesOffDoNotCount() {
    byte[] key = "id".getBytes(StandardCharsets.UTF_8);
    byte[] value = "payload".getBytes(StandardCharsets.UTF_8);
    Headers plain =
        new RecordHeaders().add("delay-target-topic", "t".getBytes(StandardCharsets.UTF_8));
    Headers more =
        new RecordHeaders()
            .add("delay-target-topic", "t".getBytes(StandardCharsets.UTF_8))
            .add(DelayHeaders.FIRED_AT, "5".getBytes(StandardCharsets.UTF_8))
            .add(TaskFence.HEADER, "1".getBytes(StandardCharsets.UTF_8));

    assertThat(RequestDigest.of(key, value, more)).isEqualTo(RequestDigest.of(key, value, plain));
    assertThat(RequestDigest.of(key, null, plain))
        .isNotEqualTo(RequestDigest.of(key, new byte[0], plain));
  }

  private static long firstVersion(byte[] key, byte[] value, Headers headers) {
    Checksum crc32c = new CRC32C();
    Checksum crc32 = new CRC32();
    Checksum[] both = {crc32c, crc32};
    feed(both, key);
    feed(both, value);
    for (Header header : headers) {
      if (!DelayHeaders.OUTPUT_HEADERS.contains(header.key())
          && !header.key().equals(TaskFence.HEADER)) {
        feed(both, header.key().getBytes(StandardCharsets.UTF_8));
        feed(both, header.value());
      }
    }
    return (crc32c.getValue() << 32) | crc32.getValue();
  }

  private static void feed(Checksum[] checksums, byte[] bytes) {
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

  private static byte[] maybeBytes(Random random, int maxLength) {
    if (random.nextInt(10) == 0) {
      return null;
    }
    byte[] bytes = new byte[random.nextInt(maxLength + 1)];
    random.nextBytes(bytes);
    return bytes;
  }

  private static String randomName(Random random) {
    String[] names = {"delay-target-topic", "delay-fire-at", "trace", "x", "ünï", "delay-cron"};
    return names[random.nextInt(names.length)];
  }
}

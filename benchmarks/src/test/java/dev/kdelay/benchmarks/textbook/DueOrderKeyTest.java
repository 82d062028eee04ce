package dev.kdelay.benchmarks.textbook;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.Test;

class DueOrderKeyTest {

  private static final Comparator<byte[]> STORE_ORDER = Bytes.BYTES_LEXICO_COMPARATOR;

  @Test
  void shouldSortKeysInDueOrderWhenComparedAsTheStoreComparesThem() {
    // given due times of every sign and size, extremes included, with random ids
    Random random = new Random(7);
    List<byte[]> keys = new ArrayList<>();
    long[] special = {Long.MIN_VALUE, -1, 0, 1, 255, 256, Long.MAX_VALUE, 1_760_000_000_000L};
    for (int i = 0; i < 2_000; i++) {
      long due = i < special.length ? special[i] : random.nextLong() >> random.nextInt(64);
      byte[] id = new byte[random.nextInt(6)];
      random.nextBytes(id);
      keys.add(DueOrderKey.of(due, id));
    }

    // when
    keys.sort(STORE_ORDER);

    // then
    for (int i = 1; i < keys.size(); i++) {
      assertThat(DueOrderKey.dueMs(keys.get(i - 1)))
          .isLessThanOrEqualTo(DueOrderKey.dueMs(keys.get(i)));
    }
  }

  @Test
  void shouldSortEntriesDueInTheSameMillisecondById() {
    byte[] a = DueOrderKey.of(1_000, utf8("order-1"));
    byte[] b = DueOrderKey.of(1_000, utf8("order-2"));
    byte[] later = DueOrderKey.of(1_001, utf8("order-0"));

    assertThat(STORE_ORDER.compare(a, b)).isNegative();
    assertThat(STORE_ORDER.compare(b, later)).isNegative();
  }

  @Test
  void shouldReadBackTheDueTimeAndTheId() {
    byte[] key = DueOrderKey.of(-42, utf8("order-42"));

    assertThat(DueOrderKey.dueMs(key)).isEqualTo(-42);
    assertThat(DueOrderKey.id(key)).isEqualTo(utf8("order-42"));
    assertThat(key).hasSize(DueOrderKey.DUE_BYTES + "order-42".length());
  }

  @Test
  void shouldStartAScanAtATimeAfterEverythingDueBeforeAndBeforeEverythingDueThen() {
    byte[] start = DueOrderKey.firstDueAt(5_000);

    assertThat(STORE_ORDER.compare(DueOrderKey.of(4_999, new byte[] {-1, -1}), start)).isNegative();
    assertThat(STORE_ORDER.compare(start, DueOrderKey.of(5_000, new byte[] {0}))).isNegative();
    assertThat(STORE_ORDER.compare(start, DueOrderKey.of(5_000, new byte[0]))).isZero();
  }

  private static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}

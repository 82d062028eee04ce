package dev.kdelay.schemas.generators;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.random.RandomGenerator;

/**
 * The random choices one generated case is made of. Drawing records them, so that a failing case
 * can be run again from its record and shrunk: {@link PropertyCheck} tries shorter and smaller
 * records, and a record replays with its values clamped to what each draw allows and 0 for draws
 * past its end.
 *
 * <p>This is how a shrunk case stays meaningful whatever the generator: generators draw so that a
 * smaller choice is a simpler value (0 picks the first, most common option; numbers shrink towards
 * 0; a list is grown one "another?" choice at a time, so that removing choices removes elements).
 *
 * <pre>{@code
 * Gen<Integer> partitions = c -> c.weighted(9, 1) == 0 ? c.between(0, 5) : c.between(-1, 10);
 * }</pre>
 */
public final class Choices {

  /** The most choices one case may draw: a generator that draws more has a bug. */
  static final int MAX_CHOICES = 100_000;

  private final RandomGenerator random;
  private final long[] replayed;
  private final List<Long> drawn = new ArrayList<>();
  private final List<int[]> spans = new ArrayList<>();

  private Choices(RandomGenerator random, long[] replayed) {
    this.random = random;
    this.replayed = replayed;
  }

  /** Choices drawn at random. */
  public static Choices random(RandomGenerator random) {
    return new Choices(random, new long[0]);
  }

  /** Choices read from a record; draws past its end are 0. */
  public static Choices replay(long[] record) {
    return new Choices(null, record.clone());
  }

  /** Thrown by a generator to discard a case it cannot make from these choices. */
  public static final class Discard extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Discard(String why) {
      super(why, null, false, false);
    }
  }

  /** Discards the case being generated. */
  public static Discard discard(String why) {
    return new Discard(why);
  }

  /** A choice in {@code [0, bound)}; 0 is the simplest. */
  public long draw(long bound) {
    if (bound < 1) {
      throw new IllegalArgumentException("bound must be positive, got " + bound);
    }
    int index = drawn.size();
    if (index >= MAX_CHOICES) {
      throw new Discard("more than " + MAX_CHOICES + " choices");
    }
    long value;
    if (index < replayed.length) {
      value = Math.max(0, Math.min(replayed[index], bound - 1));
    } else if (random != null) {
      value = random.nextLong(bound);
    } else {
      value = 0;
    }
    drawn.add(value);
    return value;
  }

  /** An int in {@code [0, bound)}. */
  public int below(int bound) {
    return (int) draw(bound);
  }

  /**
   * A long in {@code [min, max]}, uniform when drawn at random; it shrinks towards the value
   * closest to 0 (0 itself when the range holds it, then 1, -1, 2, -2, ...).
   */
  public long between(long min, long max) {
    if (min > max) {
      throw new IllegalArgumentException("empty range [" + min + ", " + max + "]");
    }
    long span = max - min + 1;
    if (span <= 0) {
      throw new IllegalArgumentException("range too wide: [" + min + ", " + max + "]");
    }
    long v = draw(span);
    if (min >= 0) {
      return min + v;
    }
    if (max <= 0) {
      return max - v;
    }
    long below = -min;
    long above = max;
    long both = Math.min(below, above);
    if (v <= 2 * both) {
      return (v & 1) == 1 ? (v + 1) / 2 : -(v / 2);
    }
    long rest = v - 2 * both;
    return above > below ? both + rest : -(both + rest);
  }

  /** An int in {@code [min, max]}, shrinking like {@link #between}. */
  public int intBetween(int min, int max) {
    return (int) between(min, max);
  }

  /** True {@code percent} times in a hundred; false is the simpler answer. */
  public boolean chance(int percent) {
    return draw(100) >= 100 - percent;
  }

  /** The index of one of the weights, drawn in proportion to them; 0 is the simplest. */
  public int weighted(int... weights) {
    long total = Arrays.stream(weights).asLongStream().sum();
    long v = draw(total);
    for (int i = 0; i < weights.length; i++) {
      if (v < weights[i]) {
        return i;
      }
      v -= weights[i];
    }
    throw new AssertionError("unreachable");
  }

  /** One of the values; the first is the simplest. */
  public <T> T pick(List<T> values) {
    return values.get(below(values.size()));
  }

  /** One of the values; the first is the simplest. */
  @SafeVarargs
  public final <T> T pick(T... values) {
    return values[below(values.length)];
  }

  /**
   * A list of at most {@code max} values, each added after an "another?" choice that is true {@code
   * percentMore} times in a hundred.
   */
  public <T> List<T> list(int max, int percentMore, Gen<T> element) {
    List<T> values = new ArrayList<>();
    while (values.size() < max) {
      // An element's choices, its "another?" included, form a span the shrinker can drop whole.
      int start = drawn.size();
      if (!chance(percentMore)) {
        break;
      }
      values.add(element.next(this));
      spans.add(new int[] {start, drawn.size()});
    }
    return values;
  }

  /** Bytes of a length in {@code [0, maxLength]}. */
  public byte[] bytes(int maxLength) {
    byte[] bytes = new byte[below(maxLength + 1)];
    for (int i = 0; i < bytes.length; i++) {
      bytes[i] = (byte) draw(256);
    }
    return bytes;
  }

  /** Text of at most {@code maxLength} characters, mostly letters, now and then anything. */
  public String text(int maxLength) {
    StringBuilder text = new StringBuilder();
    int length = below(maxLength + 1);
    for (int i = 0; i < length; i++) {
      text.appendCodePoint(
          switch (weighted(8, 1, 1)) {
            case 0 -> 'a' + below(26);
            case 1 -> below(128);
            default -> pick(0xE9, 0x65E5, 0x1F600, 0x202E, 0xFEFF, 0x10FFFF);
          });
    }
    return text.toString();
  }

  /** The spans of list elements drawn so far: {start, end} indexes into the record. */
  List<int[]> spans() {
    return List.copyOf(spans);
  }

  /** The choices drawn so far. */
  long[] record() {
    long[] record = new long[drawn.size()];
    for (int i = 0; i < record.length; i++) {
      record[i] = drawn.get(i);
    }
    return record;
  }
}

package dev.kdelay.schemas.generators;

import java.util.Arrays;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * Runs a property over generated cases and shrinks the first that fails: a small property-based
 * testing engine in the manner of Hypothesis, where a case is the record of the random {@link
 * Choices} it was made of and shrinking searches for a shorter or smaller record that still fails
 * the same way. Generators need no shrinkers of their own, and a sequence of steps shrinks by
 * losing steps.
 *
 * <pre>{@code
 * PropertyCheck.forAll("odd requests", 5_000, requests::odd, request -> assertAnswered(request));
 * }</pre>
 *
 * <p>Runs are deterministic: the seed is fixed per property (its name's hash) unless {@value #SEED}
 * names one, or {@code random}. {@value #CASES} sets every property's case count, for long runs. A
 * failure names its seed, case and record; {@value #REPLAY}{@code =<property>:<record>} runs that
 * case alone.
 */
public final class PropertyCheck {

  /** System property: every property's case count. */
  public static final String CASES = "kdelay.properties.cases";

  /** System property: the seed, a number or {@code random}. */
  public static final String SEED = "kdelay.properties.seed";

  /** System property: {@code <property name>:<comma-separated record>}, a case to run alone. */
  public static final String REPLAY = "kdelay.properties.replay";

  /** Property runs spent shrinking at most, and the time. */
  private static final int SHRINK_RUNS = 3_000;

  private static final long SHRINK_NANOS = 90_000_000_000L;

  private static final int[] CHUNKS = {16, 8, 4, 2, 1};

  private PropertyCheck() {}

  /**
   * Checks a property over {@code cases} generated cases (or {@value #CASES}).
   *
   * @param name the property's name, which also seeds it
   * @param cases how many cases to run by default
   * @param generator what each case is
   * @param property the check, which throws (an assertion, or anything) when the case fails
   * @return how many cases ran
   * @throws AssertionError describing the shrunk case, if one fails
   */
  public static <T> long forAll(
      String name, int cases, Gen<T> generator, Consumer<? super T> property) {
    Objects.requireNonNull(generator, "generator cannot be null");
    String replay = System.getProperty(REPLAY, "");
    if (replay.startsWith(name + ":")) {
      long[] record = parse(replay.substring(name.length() + 1));
      Outcome outcome = run(Choices.replay(record), generator, property);
      if (outcome.failure != null) {
        throw failure(name, "replayed", outcome, outcome, 0, 0, -1);
      }
      return 1;
    }
    long seed = seed(name);
    long total = Long.getLong(CASES, cases);
    long discarded = 0;
    long started = System.nanoTime();
    SplittableRandom seeds = new SplittableRandom(seed);
    for (long i = 0; i < total; i++) {
      Outcome outcome = run(Choices.random(seeds.split()), generator, property);
      if (outcome.discarded) {
        discarded++;
        continue;
      }
      if (outcome.failure != null) {
        Shrunk shrunk = shrink(outcome, generator, property);
        throw failure(name, "seed " + seed, outcome, shrunk.best, i, shrunk.runs, total);
      }
    }
    System.out.printf(
        "property \"%s\": %d cases passed (%d discarded), seed %d, %d ms%n",
        name, total - discarded, discarded, seed, (System.nanoTime() - started) / 1_000_000);
    return total - discarded;
  }

  private static long seed(String name) {
    String given = System.getProperty(SEED, "");
    if (given.equals("random")) {
      return new SplittableRandom().nextLong();
    }
    if (!given.isEmpty()) {
      return Long.parseLong(given);
    }
    return name.hashCode() * 0x9E3779B97F4A7C15L;
  }

  /** One run of a case: what it was, and how it failed, if it did. */
  private static final class Outcome {
    long[] record;
    java.util.List<int[]> spans = java.util.List.of();
    String value;
    Throwable failure;
    String kind;
    boolean discarded;
  }

  private static <T> Outcome run(Choices choices, Gen<T> generator, Consumer<? super T> property) {
    Outcome outcome = new Outcome();
    T value;
    try {
      value = generator.next(choices);
    } catch (Choices.Discard discard) {
      outcome.discarded = true;
      outcome.record = choices.record();
      return outcome;
    }
    outcome.record = choices.record();
    outcome.spans = choices.spans();
    outcome.value = describe(value);
    try {
      property.accept(value);
    } catch (Throwable failure) { // every failure of the property, errors included
      if (failure instanceof VirtualMachineError fatal) {
        throw fatal;
      }
      outcome.failure = failure;
      outcome.kind = kind(failure);
    }
    return outcome;
  }

  private static String describe(Object value) {
    try {
      return String.valueOf(value);
    } catch (RuntimeException e) {
      return "(toString failed: " + e + ")";
    }
  }

  /**
   * How a failure is told from another: its root cause's type and where in kdelay it was thrown, so
   * that shrinking does not slip from one bug to another.
   */
  static String kind(Throwable failure) {
    Throwable root = failure;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String where = "";
    for (Throwable t : new Throwable[] {root, failure}) {
      for (StackTraceElement frame : t.getStackTrace()) {
        if (frame.getClassName().startsWith("dev.kdelay.")
            && !frame.getClassName().startsWith("dev.kdelay.schemas.generators.")) {
          where = frame.getClassName() + ":" + frame.getLineNumber();
          break;
        }
      }
      if (!where.isEmpty()) {
        break;
      }
    }
    return root.getClass().getName() + "@" + where;
  }

  private record Shrunk(Outcome best, int runs) {}

  /** Searches for a shorter or smaller record that fails the same way. */
  private static <T> Shrunk shrink(Outcome failed, Gen<T> generator, Consumer<? super T> property) {
    Outcome best = failed;
    int runs = 0;
    long deadline = System.nanoTime() + SHRINK_NANOS;
    boolean improved = true;
    while (improved && runs < SHRINK_RUNS && System.nanoTime() < deadline) {
      improved = false;
      // Whole list elements first, the last first: a sequence loses steps.
      for (int s = best.spans.size() - 1; s >= 0; s--) {
        if (runs >= SHRINK_RUNS || System.nanoTime() >= deadline) {
          return new Shrunk(best, runs);
        }
        if (s >= best.spans.size()) {
          continue;
        }
        int[] span = best.spans.get(s);
        runs++;
        Outcome tried =
            run(
                Choices.replay(without(best.record, span[0], span[1] - span[0])),
                generator,
                property);
        if (failsAlike(tried, best)) {
          best = tried;
          improved = true;
        }
      }
      for (int pass = 0; pass < 3; pass++) {
        for (int chunk : CHUNKS) {
          for (int i = best.record.length - chunk; i >= 0; i--) {
            if (runs >= SHRINK_RUNS || System.nanoTime() >= deadline) {
              return new Shrunk(best, runs);
            }
            if (i + chunk > best.record.length) {
              continue;
            }
            long[] candidate =
                pass == 0 ? without(best.record, i, chunk) : zeroed(best.record, i, chunk, pass);
            if (candidate == null) {
              continue;
            }
            runs++;
            Outcome tried = run(Choices.replay(candidate), generator, property);
            if (failsAlike(tried, best)) {
              best = tried;
              improved = true;
            }
          }
        }
      }
      for (int i = 0; i < best.record.length; i++) {
        // Binary search for the smallest value at i that still fails alike.
        long lo = 0;
        long hi = best.record[i];
        while (lo < hi && runs < SHRINK_RUNS && System.nanoTime() < deadline) {
          long mid = lo + (hi - lo) / 2;
          long[] candidate = best.record.clone();
          candidate[i] = mid;
          runs++;
          Outcome tried = run(Choices.replay(candidate), generator, property);
          if (failsAlike(tried, best)) {
            best = tried;
            improved = true;
            hi = i < best.record.length ? Math.min(mid, best.record[i]) : 0;
          } else {
            lo = mid + 1;
          }
        }
        if (i >= best.record.length) {
          break;
        }
      }
    }
    return new Shrunk(best, runs);
  }

  /** Whether a run failed the same way and from a record no larger than the best one's. */
  private static boolean failsAlike(Outcome tried, Outcome best) {
    return tried.failure != null
        && tried.kind.equals(best.kind)
        && smaller(tried.record, best.record);
  }

  /** Shortlex order: shorter, or as long and smaller at the first difference. */
  private static boolean smaller(long[] a, long[] b) {
    if (a.length != b.length) {
      return a.length < b.length;
    }
    return Arrays.compare(a, b) < 0;
  }

  private static long[] without(long[] record, int from, int length) {
    long[] shorter = new long[record.length - length];
    System.arraycopy(record, 0, shorter, 0, from);
    System.arraycopy(record, from + length, shorter, from, record.length - from - length);
    return shorter;
  }

  /** Pass 1 zeroes the chunk; pass 2 halves it; null when nothing would change. */
  private static long[] zeroed(long[] record, int from, int length, int pass) {
    long[] smaller = record.clone();
    boolean changed = false;
    for (int i = from; i < from + length; i++) {
      long next = pass == 1 ? 0 : smaller[i] / 2;
      changed |= next != smaller[i];
      smaller[i] = next;
    }
    return changed ? smaller : null;
  }

  private static AssertionError failure(
      String name,
      String origin,
      Outcome first,
      Outcome shrunk,
      long caseIndex,
      int shrinkRuns,
      long total) {
    String record =
        Arrays.stream(shrunk.record).mapToObj(Long::toString).collect(Collectors.joining(","));
    String message =
        String.format(
            "property \"%s\" failed (%s, case %d of %d)%n"
                + "  shrunk in %d runs to: %s%n"
                + "  failure: %s%n"
                + "  first failing case: %s%n"
                + "  run it alone: -D%s=\"%s:%s\"",
            name,
            origin,
            caseIndex,
            total,
            shrinkRuns,
            shrunk.value,
            shrunk.failure,
            first.value,
            REPLAY,
            name,
            record);
    AssertionError error = new AssertionError(message, shrunk.failure);
    return error;
  }

  private static long[] parse(String record) {
    if (record.isBlank()) {
      return new long[0];
    }
    return Arrays.stream(record.split(",")).mapToLong(Long::parseLong).toArray();
  }
}

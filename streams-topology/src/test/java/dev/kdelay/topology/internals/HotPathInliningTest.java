package dev.kdelay.topology.internals;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.topology.FireRateLimitsInEffect;
import dev.kdelay.topology.internals.limits.FireSlots;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.Modifier;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.Test;

/**
 * The fire path compiles once and stays compiled. Its per-task methods stay small enough for C2 to
 * compile them into the punctuation's loop: HotSpot inlines a hot callee of at most {@code
 * FreqInlineSize} (325) bytecodes and calls a larger one. {@code DueEntries.onDue} at 482 bytecodes
 * was compiled on its own, late: on a fresh instance only during its first burst, which ran in C1's
 * code meanwhile (the benchmark's burst section: the stream threads' CPU for 20,000 fires on a
 * fresh instance 371 ms before, 202-312 ms once inlined, with the two-pass warm-up; medians of
 * 3-run sets). And what it calls per task through an interface sees the same class in the start-up
 * warm-up as in the service: compiled code that saw one class at an interface call is thrown away
 * at the first call with another. What it checks is the class files, not a timing.
 */
class HotPathInliningTest {

  /** HotSpot's default {@code -XX:FreqInlineSize} on x86_64 and aarch64. */
  private static final int FREQ_INLINE_SIZE = 325;

  @Test
  void shouldKeepThePerTaskFireMethodSmallEnoughToBeInlined() {
    assertThat(bytecodeSize(DueEntries.class, "onDue"))
        .as("bytecodes of DueEntries.onDue, called once per due task from the punctuation's loop")
        .isLessThanOrEqualTo(FREQ_INLINE_SIZE);
  }

  @Test
  void shouldReadTheFireRateLimitsAtEachFireThroughAFinalClass() {
    // The warm-up's topology had fixed limits (a lambda), the service's its limits topic's feed:
    // the first real fire failed the class check of FireSlots.take's Supplier.get, inlined into
    // FirePunctuator.fireDue, and a fresh instance's first burst ran while it was compiled again.
    assertThat(Modifier.isFinal(FireRateLimitsInEffect.class.getModifiers())).isTrue();
    List<String> code = javap(FireSlots.class);
    assertThat(code)
        .as("FireSlots reads the limits by a call to the final class")
        .anyMatch(
            line -> line.contains("invokevirtual") && line.contains("FireRateLimitsInEffect.get"));
    assertThat(code)
        .as("FireSlots calls no Supplier")
        .noneMatch(
            line ->
                line.contains("invokeinterface")
                    && line.contains("java/util/function/Supplier.get:"));
  }

  /** The code length of the one method of {@code type} named {@code method}, from javap. */
  private static int bytecodeSize(Class<?> type, String method) {
    List<String> lines = javap(type);
    Pattern header = Pattern.compile("^  \\S.*\\s" + Pattern.quote(method) + "\\(.*\\);$");
    Pattern instruction = Pattern.compile("^\\s+(\\d+): (\\w+)");
    int size = -1;
    boolean inMethod = false;
    for (String line : lines) {
      if (header.matcher(line).matches()) {
        assertThat(size).as("more than one method named %s", method).isEqualTo(-1);
        inMethod = true;
        size = 0;
        continue;
      }
      if (inMethod && line.startsWith("  ") && !line.startsWith("   ")) {
        inMethod = false; // the next member
      }
      Matcher at = instruction.matcher(line);
      if (inMethod && at.find()) {
        size = Integer.parseInt(at.group(1)) + 1; // at least the last instruction's opcode
      }
    }
    assertThat(size).as("method %s in javap's output", method).isPositive();
    return size;
  }

  /** The disassembled class file of {@code type}, with its private members, line by line. */
  private static List<String> javap(Class<?> type) {
    ToolProvider javap = ToolProvider.findFirst("javap").orElseThrow();
    StringWriter out = new StringWriter();
    Path classes = Path.of(type.getProtectionDomain().getCodeSource().getLocation().getPath());
    int status =
        javap.run(
            new PrintWriter(out),
            new PrintWriter(out),
            "-c",
            "-p",
            "-cp",
            classes.toString(),
            type.getName());
    assertThat(status).as("javap's exit status; its output:%n%s", out).isZero();
    return out.toString().lines().toList();
  }
}

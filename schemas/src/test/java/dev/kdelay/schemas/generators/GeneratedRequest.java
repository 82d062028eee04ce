package dev.kdelay.schemas.generators;

import dev.kdelay.schemas.Action;
import dev.kdelay.schemas.CronFlavor;
import dev.kdelay.schemas.Misfire;
import dev.kdelay.schemas.RejectionReason;
import java.nio.charset.StandardCharsets;
import java.time.ZoneId;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * A generated request written as a record, with what the contract says must become of it as far as
 * the request alone tells ({@link Expectation}); what the state of its id adds is a model's to say.
 *
 * @param spec what the generator drew
 * @param key the record key
 * @param value the record value
 * @param headers the record headers, in order
 * @param timestamp the record timestamp, epoch ms; -1 for none
 * @param sentAtMs the moment it was written for
 * @param expectation what must become of it
 */
public record GeneratedRequest(
    RequestSpec spec,
    byte[] key,
    byte[] value,
    List<Header> headers,
    long timestamp,
    long sentAtMs,
    Expectation expectation) {

  GeneratedRequest withExpectation(Expectation expected) {
    return new GeneratedRequest(spec, key, value, headers, timestamp, sentAtMs, expected);
  }

  /** The headers as Kafka's type. */
  public RecordHeaders recordHeaders() {
    return new RecordHeaders(headers.toArray(Header[]::new));
  }

  /**
   * What must become of a request, as far as the request alone tells: a dead letter with one of
   * {@code codes}, or, if {@code accepted} is present, no dead letter from parsing and the request
   * applied as it says (a request may still be refused for its target or its id's state).
   *
   * @param codes the codes a dead letter may carry; empty if the request must be accepted
   * @param accepted what the request means, when the contract accepts it
   */
  public record Expectation(Set<RejectionReason> codes, Optional<Intent> accepted) {

    static Expectation rejected(Set<RejectionReason> codes) {
      return new Expectation(Set.copyOf(codes), Optional.empty());
    }

    static Expectation accepted(Intent intent, Set<RejectionReason> orCodes) {
      return new Expectation(Set.copyOf(orCodes), Optional.of(intent));
    }

    /** Whether the contract leaves no choice: rejected with one code, or accepted. */
    public boolean exact() {
      return accepted.isPresent() ? codes.isEmpty() : codes.size() == 1;
    }

    @Override
    public String toString() {
      if (accepted.isEmpty()) {
        return "rejected " + codes;
      }
      return "accepted " + accepted.get() + (codes.isEmpty() ? "" : " or rejected " + codes);
    }
  }

  /**
   * What an accepted request means.
   *
   * @param action the action
   * @param id the schedule id
   * @param stampedMs the time the request counts as stamped (its timestamp, or when it was read if
   *     it has none or one too far ahead)
   * @param target the target topic (schedules)
   * @param targetKey the fired record's key, or null for the id (schedules)
   * @param partition the fired record's partition, or -1 for the default (schedules)
   * @param timing when it fires (schedules and reschedules)
   * @param payload the payload (schedules)
   * @param carried the headers carried to the fired record (schedules)
   */
  public record Intent(
      Action action,
      String id,
      long stampedMs,
      String target,
      byte[] targetKey,
      int partition,
      Timing timing,
      byte[] payload,
      List<Header> carried) {

    @Override
    public String toString() {
      return action.wireName() + " " + id + (timing == null ? "" : " " + timing);
    }
  }

  /** When an accepted schedule fires. */
  public sealed interface Timing {
    /** Once, at {@code dueMs}. */
    record Once(long dueMs) implements Timing {}

    /**
     * On a cron cadence.
     *
     * @param expression the expression
     * @param flavor its flavour
     * @param zone its zone
     * @param startAtMs start bound, or Long.MIN_VALUE
     * @param endAtMs end bound, or Long.MAX_VALUE
     * @param maxFires fire limit, or 0 for none
     * @param misfire the misfire policy
     * @param periodMs its period, counted from the epoch, when the model can compute its
     *     occurrences; 0 when it cannot (then only safety is checked: never early, never twice)
     */
    record Cron(
        String expression,
        CronFlavor flavor,
        ZoneId zone,
        long startAtMs,
        long endAtMs,
        long maxFires,
        Misfire misfire,
        long periodMs)
        implements Timing {}
  }

  /** Every code a dead letter may carry. */
  public static Set<RejectionReason> anyCode() {
    return EnumSet.allOf(RejectionReason.class);
  }

  static String text(byte[] bytes) {
    return new String(bytes, StandardCharsets.UTF_8);
  }

  @Override
  public String toString() {
    return spec + " @" + sentAtMs + " -> " + expectation;
  }
}

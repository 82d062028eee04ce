package dev.kdelay.topology.internals;

import com.cronutils.model.Cron;
import com.cronutils.model.field.CronFieldName;
import com.cronutils.model.field.expression.Always;
import com.cronutils.model.field.expression.Every;
import com.cronutils.model.field.expression.FieldExpression;
import com.cronutils.model.time.ExecutionTime;
import dev.kdelay.schemas.CronExpressions;
import dev.kdelay.schemas.CronSpec;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Computes the occurrences of a cron schedule as instants, with precise rules for daylight-saving
 * changes. The expression matches local wall-clock time in the schedule's zone; what an instant is
 * depends on what kind of schedule it is:
 *
 * <ul>
 *   <li><b>Schedules tied to hours of the day</b> (a specific hour field, such as a daily 02:30
 *       job): a local time that does not exist (spring forward) fires at the first instant after
 *       the gap, never skipped; a local time that exists twice (fall back) fires once, at the
 *       first.
 *   <li><b>Schedules that run every hour or more often</b> (hour field {@code *}): they keep their
 *       cadence in absolute time. Every instant whose local time matches fires, so the repeated
 *       hour of a fall-back fires twice (its wall-clock times happen twice) and the skipped hour of
 *       a spring-forward has nothing to fire: every 15 minutes stays every 15 minutes.
 * </ul>
 *
 * <p>Thread-safe; parsed expressions are cached per spec by the caller's reuse of this object.
 * Public only for {@link dev.kdelay.topology.CronOccurrences}, which shows people the same
 * occurrences the topology fires.
 */
public final class Occurrences {

  private final long horizonMs;

  /**
   * @param horizonMs how far after now an occurrence may be
   */
  public Occurrences(long horizonMs) {
    this.horizonMs = horizonMs;
  }

  /** The first occurrence at or after {@code fromMs} and the start bound, within the bounds. */
  public OptionalLong first(CronSpec spec, long fromMs) {
    return after(spec, fromMs - 1, fromMs);
  }

  /**
   * The first occurrence strictly after {@code afterMs} (and not before the start bound), no later
   * than the end bound and {@code nowMs} plus the horizon.
   */
  public OptionalLong after(CronSpec spec, long afterMs, long nowMs) {
    long from =
        spec.startAtMs() == CronSpec.NO_START ? afterMs : Math.max(afterMs, spec.startAtMs() - 1);
    long limit = Math.min(spec.endAtMs(), saturatedAdd(nowMs, horizonMs));
    Cron cron = CronExpressions.parse(spec.expression(), spec.flavor());
    Evaluation evaluation =
        new Evaluation(ExecutionTime.forCron(cron), spec.zone().getRules(), limit);
    long next = everyHour(cron) ? evaluation.absoluteAfter(from) : evaluation.localAfter(from);
    return next <= limit ? OptionalLong.of(next) : OptionalLong.empty();
  }

  /** Whether the hour field matches every hour: the schedule's cadence is absolute time. */
  static boolean everyHour(Cron cron) {
    FieldExpression hours = cron.retrieve(CronFieldName.HOUR).getExpression();
    return hours instanceof Always
        || (hours instanceof Every every
            && every.getPeriod().getValue() == 1
            && every.getExpression() instanceof Always);
  }

  private static long saturatedAdd(long a, long b) {
    long sum = a + b;
    return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
  }

  /** One evaluation of an expression in a zone, up to a limit. */
  private static final class Evaluation {
    private final ExecutionTime execution;
    private final ZoneRules rules;
    private final long limit;

    Evaluation(ExecutionTime execution, ZoneRules rules, long limit) {
      this.execution = execution;
      this.rules = rules;
      this.limit = limit;
    }

    /** Hour-of-day schedules: walk local time; gaps move forward, overlaps take the first. */
    long localAfter(long afterMs) {
      LocalDateTime local = localAt(afterMs);
      while (true) {
        Optional<LocalDateTime> next = nextLocal(local);
        if (next.isEmpty()) {
          return Long.MAX_VALUE;
        }
        local = next.get();
        long instant = firstInstantOf(local);
        if (instant > afterMs || instant > limit) {
          return instant;
        }
      }
    }

    /** Every-hour schedules: the next instant whose local time matches. */
    long absoluteAfter(long afterMs) {
      long best = Long.MAX_VALUE;
      LocalDateTime local = localAt(afterMs);
      while (best == Long.MAX_VALUE) {
        Optional<LocalDateTime> next = nextLocal(local);
        if (next.isEmpty()) {
          break;
        }
        local = next.get();
        List<ZoneOffset> offsets = rules.getValidOffsets(local);
        if (offsets.isEmpty()) {
          // In a spring-forward gap: nothing of it exists, continue after it.
          local = rules.getTransition(local).getDateTimeAfter().minusSeconds(1);
          continue;
        }
        for (ZoneOffset offset : offsets) {
          long instant = local.toInstant(offset).toEpochMilli();
          if (instant > afterMs) {
            best = Math.min(best, instant);
          }
        }
        if (local.toInstant(offsets.get(0)).toEpochMilli() > limit) {
          break;
        }
      }
      return Math.min(best, repeatedHourAfter(afterMs, best));
    }

    /**
     * After a fall-back transition the local clock runs through the repeated hour again; a match
     * there can come before the one found by walking forward from {@code afterMs}'s local time.
     */
    private long repeatedHourAfter(long afterMs, long notAfter) {
      ZoneOffsetTransition transition = rules.nextTransition(Instant.ofEpochMilli(afterMs));
      if (transition == null
          || transition.isGap()
          || transition.getInstant().toEpochMilli() > notAfter) {
        return Long.MAX_VALUE;
      }
      Optional<LocalDateTime> match = nextLocal(transition.getDateTimeAfter().minusSeconds(1));
      if (match.isEmpty() || !match.get().isBefore(transition.getDateTimeBefore())) {
        return Long.MAX_VALUE;
      }
      long instant = match.get().toInstant(transition.getOffsetAfter()).toEpochMilli();
      return instant > afterMs ? instant : Long.MAX_VALUE;
    }

    private long firstInstantOf(LocalDateTime local) {
      ZoneOffsetTransition transition = rules.getTransition(local);
      if (transition != null && transition.isGap()) {
        return transition.getInstant().toEpochMilli();
      }
      return local.toInstant(rules.getValidOffsets(local).get(0)).toEpochMilli();
    }

    private LocalDateTime localAt(long epochMs) {
      Instant instant = Instant.ofEpochMilli(epochMs);
      // Whole seconds: cron-utils keeps a fraction it is given, and occurrences must not.
      return LocalDateTime.ofInstant(instant, rules.getOffset(instant))
          .truncatedTo(ChronoUnit.SECONDS);
    }

    /** The next local time strictly after {@code local} that the expression matches. */
    private Optional<LocalDateTime> nextLocal(LocalDateTime local) {
      // Evaluated on a zone without transitions, so cron-utils sees plain wall-clock time.
      return execution
          .nextExecution(local.atZone(ZoneOffset.UTC))
          .map(ZonedDateTime::toLocalDateTime);
    }
  }
}

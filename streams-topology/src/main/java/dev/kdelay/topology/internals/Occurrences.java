package dev.kdelay.topology.internals;

import com.cronutils.model.time.ExecutionTime;
import dev.kdelay.schemas.CronExpressions;
import dev.kdelay.schemas.CronSpec;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Computes the occurrences of a cron schedule as instants. The expression is evaluated on local
 * wall-clock time of the schedule's zone; a local time that does not exist (the spring-forward gap)
 * maps to the first instant after the gap, a local time that exists twice (fall back) to the first
 * of the two.
 */
final class Occurrences {

  private final long horizonMs;

  Occurrences(long horizonMs) {
    this.horizonMs = horizonMs;
  }

  /** The first occurrence at or after {@code fromMs} (and the start bound), within the bounds. */
  OptionalLong first(CronSpec spec, long fromMs) {
    long from = Math.max(fromMs, spec.startAtMs());
    return after(spec, from - 1, fromMs);
  }

  /** The first occurrence strictly after {@code afterMs}, within the bounds and the horizon. */
  OptionalLong after(CronSpec spec, long afterMs, long nowMs) {
    ExecutionTime execution =
        ExecutionTime.forCron(CronExpressions.parse(spec.expression(), spec.flavor()));
    ZoneRules rules = spec.zone().getRules();
    LocalDateTime local = LocalDateTime.ofInstant(Instant.ofEpochMilli(afterMs), spec.zone());
    long limit = Math.min(spec.endAtMs(), nowMs + horizonMs);
    while (true) {
      Optional<ZonedDateTime> next = execution.nextExecution(local.atZone(ZoneOffset.UTC));
      if (next.isEmpty()) {
        return OptionalLong.empty();
      }
      local = next.get().toLocalDateTime();
      long instant = instantOf(local, rules);
      if (instant > limit) {
        return OptionalLong.empty();
      }
      if (instant > afterMs) {
        return OptionalLong.of(instant);
      }
    }
  }

  private static long instantOf(LocalDateTime local, ZoneRules rules) {
    ZoneOffsetTransition transition = rules.getTransition(local);
    if (transition != null && transition.isGap()) {
      return transition.getInstant().toEpochMilli();
    }
    // Not in a gap: the earlier offset, which is the first of two in an overlap.
    return local.toInstant(rules.getValidOffsets(local).get(0)).toEpochMilli();
  }
}

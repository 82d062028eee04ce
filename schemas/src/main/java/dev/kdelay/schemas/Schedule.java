package dev.kdelay.schemas;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.apache.kafka.common.header.Header;

/**
 * What a schedule request asks to deliver, where and when.
 *
 * @param target where the payload goes
 * @param timing when it goes
 * @param payload the value of the fired record, byte for byte; null fires a tombstone
 * @param headers the carried headers, in request order
 */
public record Schedule(Target target, Timing timing, byte[] payload, List<Header> headers) {

  /**
   * Creates a schedule.
   *
   * @throws NullPointerException if target, timing or headers is null
   */
  public Schedule {
    Objects.requireNonNull(target, "target cannot be null");
    Objects.requireNonNull(timing, "timing cannot be null");
    headers = List.copyOf(Objects.requireNonNull(headers, "headers cannot be null"));
  }

  /** Whether the schedule recurs on a cron cadence. */
  public boolean recurring() {
    return timing instanceof CronSpec;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Schedule other
        && target.equals(other.target)
        && timing.equals(other.timing)
        && Arrays.equals(payload, other.payload)
        && headers.equals(other.headers);
  }

  @Override
  public int hashCode() {
    return Objects.hash(target, timing, Arrays.hashCode(payload), headers);
  }

  @Override
  public String toString() {
    return "Schedule[target=" + target + ", timing=" + timing + ", headers=" + headers.size() + "]";
  }
}

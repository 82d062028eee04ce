package dev.kdelay.topology.internals;

import java.util.List;

/** Names of the topology's nodes and stores. */
public final class Names {

  /**
   * The schedule store. The suffix is the layout's format ({@link ScheduleEntry#FORMAT_2}): a new
   * name means a new changelog topic, so state of the first layout (stores {@code delay-tasks} and
   * {@code delay-schedules}) is never read as this one.
   */
  public static final String SCHEDULES_STORE = "delay-schedules-v2";

  /** The stores of kdelay's first layout, which this version neither reads nor migrates. */
  public static final List<String> FIRST_LAYOUT_STORES = List.of("delay-tasks", "delay-schedules");

  public static final String REQUESTS_SOURCE = "requests";
  public static final String REROUTED_SOURCE = "rerouted-requests";
  public static final String PROCESSOR = "request-processor";
  public static final String REROUTE_SINK = "reroute-sink";
  public static final String DLQ_SINK = "dead-letter-sink";
  public static final String FIRE_SINK = "fire-sink";
  public static final String FIRE_PARTITIONED_SINK = "fire-partitioned-sink";

  private Names() {}
}

package dev.kdelay.topology.internals;

/** Names of the topology's nodes and stores. */
public final class Names {

  /** The time-bucketed store of pending entries. */
  public static final String TASKS_STORE = "delay-tasks";

  /** The store mapping a schedule id to its state. */
  public static final String SCHEDULES_STORE = "delay-schedules";

  public static final String REQUESTS_SOURCE = "requests";
  public static final String REROUTED_SOURCE = "rerouted-requests";
  public static final String PROCESSOR = "request-processor";
  public static final String REROUTE_SINK = "reroute-sink";
  public static final String DLQ_SINK = "dead-letter-sink";
  public static final String FIRE_SINK = "fire-sink";
  public static final String FIRE_PARTITIONED_SINK = "fire-partitioned-sink";

  private Names() {}
}

package dev.kdelay.topology.internals.delivery;

/** The names of the topology's sinks: where kdelay's records leave the request processor. */
public final class Sinks {

  /** Requests forwarded to the partition that owns their id. */
  public static final String REROUTE = "reroute-sink";

  /** Dead letters. */
  public static final String DLQ = "dead-letter-sink";

  /** A tenant's dead letters, to its own topic: only in a deployment with tenants. */
  public static final String TENANT_DLQ = "tenant-dead-letter-sink";

  /** Fired records whose target names no partition: the target topic's partitioner decides. */
  public static final String FIRE = "fire-sink";

  /** Fired records for a partition the target names. */
  public static final String FIRE_PARTITIONED = "fire-partitioned-sink";

  private Sinks() {}
}

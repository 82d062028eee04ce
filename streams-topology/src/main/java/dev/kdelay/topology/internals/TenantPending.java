package dev.kdelay.topology.internals;

import dev.kdelay.schemas.Rejection;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.schemas.TenantIds;
import dev.kdelay.topology.Tenants;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The tenants' limits on pending schedules ({@code delay.tenant.<tenant>.max.pending}), as one
 * partition keeps them: each partition holds at most its share of a tenant's limit, counted by
 * {@link PartitionState}, so that instances need no coordination (as with fire-rate limits).
 *
 * <p>Only a new schedule is refused: a replacement of a schedule the tenant holds, a cancel, or
 * anything that ends one, always applies. While a partition that just started here is still
 * counting what it holds, nothing is refused.
 *
 * <p>Runs on the stream thread only.
 */
final class TenantPending {

  /** No tenants, or none with a limit: nothing refused. */
  static final TenantPending NONE = new TenantPending(Tenants.NONE, 1, null);

  private final Tenants tenants;
  private final int partitions;
  private final PartitionState counts;

  /**
   * @param tenants the deployment's tenants
   * @param partitions the request topic's partition count: each partition holds its share
   * @param counts what this partition holds
   */
  TenantPending(Tenants tenants, int partitions, PartitionState counts) {
    this.tenants = tenants;
    this.partitions = partitions;
    this.counts = counts;
  }

  /**
   * Why a new schedule for an id may not be held, or empty if it may.
   *
   * @param id the id as kdelay keeps it; a tenant's is qualified ({@link TenantIds})
   */
  Optional<Rejection> refusesNew(String id) {
    if (tenants.isEmpty() || !TenantIds.isQualified(id)) {
      return Optional.empty();
    }
    String name = TenantIds.tenantOf(id);
    Optional<Tenants.Tenant> tenant = tenants.named(name);
    if (tenant.isEmpty() || tenant.get().maxPending() == Long.MAX_VALUE) {
      return Optional.empty();
    }
    long share = tenant.get().maxPendingPerPartition(partitions);
    OptionalLong held = counts.storedOf(name);
    if (held.isEmpty() || held.getAsLong() < share) {
      return Optional.empty();
    }
    return Optional.of(
        new Rejection(
            RejectionReason.TOO_MANY_PENDING,
            "tenant "
                + name
                + " holds "
                + held.getAsLong()
                + " pending schedules on this partition, its share of delay.tenant."
                + name
                + ".max.pending="
                + tenant.get().maxPending()
                + " over "
                + partitions
                + " partitions; cancel some or let them fire, then send it again"));
  }
}

package dev.kdelay.service.http;

import static java.util.Objects.requireNonNull;

import dev.kdelay.client.DelayClient;
import dev.kdelay.schemas.TenantIds;
import dev.kdelay.topology.Tenants;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Whose schedules and dead letters an API request acts on: a tenant's ({@link Tenants}), or the
 * shared namespace's.
 *
 * <ul>
 *   <li>A caller whose token acts for a tenant ({@link ApiRequest#tenant}) acts on that tenant's,
 *       always; naming another with {@code ?tenant=} is answered 403.
 *   <li>A caller of the whole deployment acts on the tenant {@code ?tenant=} names, or else on the
 *       shared namespace (a listing of schedules then shows every tenant's).
 * </ul>
 *
 * <p>A tenant's changes are written to its own request topic, as its producers would write them, so
 * that kdelay applies them exactly as it applies theirs: with the tenant's ids, target allowlist
 * and payload limit.
 */
final class Namespaces {

  private final Tenants tenants;
  private final DelayClient shared;
  private final Map<String, DelayClient> byTenant;

  /**
   * @param tenants the deployment's tenants
   * @param shared writes to the shared request topic; null for an API that writes nothing (a
   *     test's)
   * @param clientOf a client that writes to a tenant's request topic, given the topic
   */
  Namespaces(Tenants tenants, DelayClient shared, Function<String, DelayClient> clientOf) {
    this.tenants = requireNonNull(tenants, "tenants cannot be null");
    this.shared = shared;
    Map<String, DelayClient> clients = new LinkedHashMap<>();
    for (Tenants.Tenant tenant : tenants.all()) {
      clients.put(tenant.name(), clientOf.apply(tenant.requestsTopic()));
    }
    this.byTenant = Map.copyOf(clients);
  }

  /**
   * The tenant a request acts on, empty for the shared namespace.
   *
   * @throws ApiException 403 if the caller's token acts for another tenant than {@code ?tenant=}
   *     names; 400 {@code UNKNOWN_TENANT} if {@code ?tenant=} names none of the deployment's
   */
  Optional<Tenants.Tenant> of(ApiRequest request) {
    Optional<String> asked = request.param("tenant").filter(name -> !name.isEmpty());
    if (request.tenant().isPresent()) {
      if (asked.isPresent() && !asked.equals(request.tenant())) {
        throw new ApiException(
            403,
            "FORBIDDEN",
            "this token acts for tenant " + request.tenant().get() + " only, not " + asked.get());
      }
      // A token's tenant was checked against the deployment's at start.
      return tenants.named(request.tenant().get());
    }
    if (asked.isEmpty()) {
      return Optional.empty();
    }
    Optional<Tenants.Tenant> tenant = tenants.named(asked.get());
    if (tenant.isEmpty()) {
      throw ApiException.badRequest(
          "UNKNOWN_TENANT",
          "tenant '"
              + asked.get()
              + "' is not one of this deployment's ("
              + (tenants.isEmpty() ? "it has none" : tenants)
              + ")");
    }
    return tenant;
  }

  /** The id kdelay keeps for a tenant's id, or the shared namespace's ({@link TenantIds}). */
  static String kept(Optional<Tenants.Tenant> tenant, String id) {
    return tenant.map(t -> TenantIds.qualified(t.name(), id)).orElse(id);
  }

  /**
   * The client that writes a namespace's requests: to its tenant's request topic, or the shared.
   */
  DelayClient requests(Optional<Tenants.Tenant> tenant) {
    DelayClient client = tenant.map(t -> byTenant.get(t.name())).orElse(shared);
    if (client == null) {
      throw new IllegalStateException("this API was built to write nothing");
    }
    return client;
  }
}

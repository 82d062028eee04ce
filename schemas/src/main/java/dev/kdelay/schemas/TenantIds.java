package dev.kdelay.schemas;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Schedule ids as kdelay keeps them when a deployment has tenants. Each tenant's ids are its own:
 * tenant {@code a}'s {@code x} and tenant {@code b}'s {@code x} are two schedules. Inside kdelay
 * (in its store, its reroute topic, its logs) a tenant's id is kept <em>qualified</em>: U+0000, the
 * tenant's name, U+0000, then the id as the tenant sent it. A plain id is kept as it is.
 *
 * <p>The form cannot be mistaken: a tenant's name is lowercase letters and digits, and no plain id
 * starts with U+0000, since a request whose id does is taken to address a tenant's id in this form
 * (what an operator writing to the shared request topic may do) and is refused {@code BAD_ID}
 * unless it names a tenant of the deployment.
 *
 * <p>What leaves kdelay (a fired record's key, {@code delay-id} and idempotency key, a dead
 * letter's key) carries the id as the tenant sent it, and {@code delay-tenant} names the tenant.
 */
public final class TenantIds {

  /** What starts a qualified id, and ends its tenant's name. */
  public static final char MARK = '\u0000';

  /** A tenant's name: what {@code delay.tenants} accepts. */
  public static final Pattern NAME = Pattern.compile("[a-z0-9]{1,32}");

  private TenantIds() {}

  /**
   * A tenant's id, and its tenant.
   *
   * @param tenant the tenant's name, empty for a plain id
   * @param id the id as the tenant sent it
   */
  public record Split(String tenant, String id) {}

  /** The id kdelay keeps for {@code tenant}'s {@code id}. */
  public static String qualified(String tenant, String id) {
    return MARK + tenant + MARK + id;
  }

  /** The key kdelay keeps for {@code tenant}'s request keyed {@code id}. */
  public static byte[] qualified(String tenant, byte[] id) {
    byte[] name = tenant.getBytes(StandardCharsets.UTF_8);
    byte[] kept = new byte[name.length + 2 + id.length];
    System.arraycopy(name, 0, kept, 1, name.length);
    System.arraycopy(id, 0, kept, name.length + 2, id.length);
    return kept; // the two marks are the zero bytes left at 0 and name.length + 1
  }

  /** Whether a kept id or key is a tenant's: it starts with {@link #MARK}. */
  public static boolean isQualified(String kept) {
    return !kept.isEmpty() && kept.charAt(0) == MARK;
  }

  /** Whether a kept key is a tenant's: it starts with a zero byte. */
  public static boolean isQualified(byte[] kept) {
    return kept != null && kept.length > 0 && kept[0] == 0;
  }

  /**
   * A kept id's tenant and id.
   *
   * @return the split, the tenant empty for a plain id; empty if the id starts with {@link #MARK}
   *     but is not a tenant's name and an id
   */
  public static Optional<Split> split(String kept) {
    if (!isQualified(kept)) {
      return Optional.of(new Split("", kept));
    }
    int end = kept.indexOf(MARK, 1);
    if (end < 0 || !NAME.matcher(kept.substring(1, end)).matches() || end == kept.length() - 1) {
      return Optional.empty();
    }
    return Optional.of(new Split(kept.substring(1, end), kept.substring(end + 1)));
  }

  /** A kept id's tenant: empty for a plain id (or one not in the qualified form). */
  public static String tenantOf(String kept) {
    return isQualified(kept) ? split(kept).map(Split::tenant).orElse("") : "";
  }

  /** A kept id as its tenant sent it (the whole id, if it is not in the qualified form). */
  public static String idOf(String kept) {
    return split(kept).map(Split::id).orElse(kept);
  }

  /**
   * A kept key as its tenant sent it: the bytes after the tenant's name, or the whole key if it is
   * plain or not in the qualified form. What the key's partition is computed from, so that a
   * tenant's requests and its qualified ids meet on the partition its producer chose.
   */
  public static byte[] idBytes(byte[] kept) {
    if (!isQualified(kept)) {
      return kept;
    }
    for (int i = 1; i < kept.length; i++) {
      if (kept[i] == 0) {
        return Arrays.copyOfRange(kept, i + 1, kept.length);
      }
    }
    return kept;
  }
}

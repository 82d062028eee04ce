package dev.kdelay.topology.internals.delivery;

import dev.kdelay.schemas.DelayHeaders;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * What a record kdelay writes is about, as the delivery quarantine remembers refusals: the same for
 * every try of the same write, so that a retry finds the refusal of the try before.
 */
public final class Causes {

  private Causes() {}

  /**
   * The cause of a fired record: its idempotency key, after its tenant's name (two tenants' ids,
   * and so their keys, may be the same).
   */
  public static String fired(Headers headers) {
    return fired(about(headers, text(headers.lastHeader(DelayHeaders.IDEMPOTENCY_KEY))));
  }

  /** The cause of a fired record of no tenant: its idempotency key. */
  public static String fired(String idempotencyKey) {
    return "fired:" + idempotencyKey;
  }

  /** What a record is about, after its tenant's name if it has one. */
  private static String about(Headers headers, String what) {
    String tenant = tenant(headers);
    return tenant.isEmpty() ? what : tenant + "/" + what;
  }

  /**
   * The tenant a record kdelay wrote is of ({@code delay-tenant}, which only kdelay sets), empty if
   * none: what its dead-letter topic and the target policy go by.
   */
  public static String tenant(Headers headers) {
    return text(headers.lastHeader(DelayHeaders.TENANT));
  }

  /**
   * The cause of a dead letter: its code and what it is about, which every form of it keeps (its
   * key, value and carried headers may be left out) and a retry writes again unchanged: a fired
   * record's idempotency key, a request's source position, or a stored entry's id and due time. Not
   * its timestamp (the time it is written) nor its message (which may say how old a record is),
   * which change from one try to the next.
   */
  public static String deadLetter(Headers headers) {
    String about = text(headers.lastHeader(DelayHeaders.IDEMPOTENCY_KEY));
    if (about.isEmpty()) {
      about = text(headers.lastHeader(DelayHeaders.SOURCE));
    }
    if (about.isEmpty()) {
      about =
          text(headers.lastHeader(DelayHeaders.ID))
              + "@"
              + text(headers.lastHeader(DelayHeaders.DUE_AT));
    }
    return "dead-letter:"
        + text(headers.lastHeader(DelayHeaders.ERROR))
        + ":"
        + about(headers, about);
  }

  /**
   * The cause of a request forwarded to the reroute topic: the request itself (its key, value and
   * headers, which carry its timestamp), as every retry forwards it again.
   */
  public static String rerouted(byte[] key, byte[] value, Headers headers) {
    int hash = Arrays.hashCode(key);
    hash = 31 * hash + Arrays.hashCode(value);
    for (Header header : headers) {
      hash = 31 * hash + header.key().hashCode();
      hash = 31 * hash + Arrays.hashCode(header.value());
    }
    return "rerouted:"
        + Integer.toHexString(hash)
        + "/"
        + text(headers.lastHeader(DelayHeaders.REQUESTED_AT));
  }

  static String text(Header header) {
    return header == null || header.value() == null
        ? ""
        : new String(header.value(), StandardCharsets.UTF_8);
  }
}

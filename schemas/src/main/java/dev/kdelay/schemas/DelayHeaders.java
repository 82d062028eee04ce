package dev.kdelay.schemas;

import java.util.Set;

/**
 * Names of the Kafka record headers that make up kdelay's wire contract.
 *
 * <p>Header names are case-sensitive and their values are UTF-8 text. A schedule request is an
 * ordinary Kafka record on the request topic: the key is the schedule id, the value the payload,
 * and the {@code delay-*} request headers below say when and where to deliver it:
 *
 * <pre>{@code
 * ProducerRecord<String, String> request = new ProducerRecord<>("delay-requests", "order-42", "{\"timeout\":true}");
 * request.headers()
 *     .add(DelayHeaders.TARGET_TOPIC, "order-timeouts".getBytes(StandardCharsets.UTF_8))
 *     .add(DelayHeaders.AFTER, "PT15M".getBytes(StandardCharsets.UTF_8));
 * producer.send(request);
 * }</pre>
 *
 * <p>Every header that is not a request header is carried to the fired record unchanged and in
 * order; the fired-record headers are then appended after them.
 */
public final class DelayHeaders {

  /**
   * {@code schedule} (default), {@code cancel}, {@code pause}, {@code resume}, {@code trigger} or
   * {@code reschedule} (with one of the time headers).
   */
  public static final String ACTION = "delay-action";

  /** Topic the payload is delivered to; required for {@code schedule}. */
  public static final String TARGET_TOPIC = "delay-target-topic";

  /** Key of the fired record; absent means the schedule id. */
  public static final String TARGET_KEY = "delay-target-key";

  /** Partition of the fired record; absent means Kafka's default partitioner on the key. */
  public static final String TARGET_PARTITION = "delay-target-partition";

  /** Absolute due time: epoch milliseconds, or an ISO-8601 instant or offset date-time. */
  public static final String FIRE_AT = "delay-fire-at";

  /**
   * Delay counted from the request record's timestamp: milliseconds, or an ISO-8601 duration such
   * as {@code PT30S}.
   */
  public static final String AFTER = "delay-after";

  /** Cron expression of a recurring schedule. */
  public static final String CRON = "delay-cron";

  /** Cron flavour: {@code quartz} (default, with seconds), {@code unix} or {@code spring}. */
  public static final String CRON_TYPE = "delay-cron-type";

  /** IANA time zone the cron expression is evaluated in; default {@code UTC}. */
  public static final String ZONE = "delay-zone";

  /** First instant a recurring schedule may fire at (same formats as {@link #FIRE_AT}). */
  public static final String START_AT = "delay-start-at";

  /** Last instant a recurring schedule may fire at (same formats as {@link #FIRE_AT}). */
  public static final String END_AT = "delay-end-at";

  /** Stop a recurring schedule after this many occurrences. */
  public static final String MAX_FIRES = "delay-max-fires";

  /** Misfire policy: {@code fire-once} (default), {@code fire-all} or {@code skip}. */
  public static final String MISFIRE = "delay-misfire";

  /** Fired records: the schedule id. */
  public static final String ID = "delay-id";

  /**
   * Fired records and dead letters of a deployment with tenants: the tenant whose schedule it is
   * (see {@link TenantIds}). Set by kdelay alone: a request's own is not carried.
   */
  public static final String TENANT = "delay-tenant";

  /** Fired records: {@code <id>@<due epoch ms>}, unique per occurrence. */
  public static final String IDEMPOTENCY_KEY = "delay-idempotency-key";

  /** Fired records: the due time, epoch milliseconds. */
  public static final String DUE_AT = "delay-due-at";

  /** Fired records: when kdelay fired the record, epoch milliseconds. */
  public static final String FIRED_AT = "delay-fired-at";

  /** Fired records of recurring schedules: the 1-based occurrence number. */
  public static final String OCCURRENCE = "delay-occurrence";

  /** Dead-letter records: the stable rejection code (a {@link RejectionReason} name). */
  public static final String ERROR = "delay-error";

  /** Dead-letter records: a human-readable explanation of the rejection. */
  public static final String ERROR_MESSAGE = "delay-error-message";

  /**
   * Dead-letter records: what was left out of a dead letter that would not fit the dead-letter
   * topic whole, with sizes: {@code value (1048600 bytes)}, then {@code headers (3, 900000 bytes)},
   * then {@code key (...)}, each only when leaving out the ones before was not enough.
   */
  public static final String ERROR_OMITTED = "delay-error-omitted";

  /**
   * Dead-letter records of requests: where the request was read, {@code
   * <topic>-<partition>@<offset>}. It names the request that failed, and stays the same when kdelay
   * writes the dead letter again after a restart.
   */
  public static final String SOURCE = "delay-source";

  /**
   * Dead-letter records of requests: the request record's timestamp, epoch milliseconds. A dead
   * letter itself is stamped with the time kdelay wrote it; a replay sends the request with this
   * timestamp again, so that it orders against other requests for its id as the original did.
   */
  public static final String REQUESTED_AT = "delay-requested-at";

  /**
   * Dead-letter records with the code {@code INTERNAL}: the id of the error, which the ERROR log
   * line with its stack trace also carries.
   */
  public static final String ERROR_ID = "delay-error-id";

  /**
   * kdelay's own, never a client's: marks a task's fence on the reroute topic, which a task writes
   * to itself so that its first commit carries its input offsets.
   */
  public static final String FENCE = "kdelay-fence";

  /**
   * kdelay's own, never a client's: a reroute copy of a request that waits for its target topic's
   * look-up; the value is when it started waiting, and a token.
   */
  public static final String WAITING = "kdelay-waiting";

  /**
   * kdelay's own, never a client's: a schedule's stored state moved from another deployment by
   * {@code kdelay move}; the value is the application id it comes from (UTF-8).
   */
  public static final String IMPORT = "kdelay-import";

  /** Headers that steer a request; they are consumed by kdelay and never carried. */
  public static final Set<String> REQUEST_HEADERS =
      Set.of(
          ACTION,
          TARGET_TOPIC,
          TARGET_KEY,
          TARGET_PARTITION,
          FIRE_AT,
          AFTER,
          CRON,
          CRON_TYPE,
          ZONE,
          START_AT,
          END_AT,
          MAX_FIRES,
          MISFIRE);

  /**
   * Headers kdelay itself writes on fired and dead-letter records. A request that carries one of
   * them has it removed, so that a fired record holds exactly one trustworthy value of each.
   */
  public static final Set<String> OUTPUT_HEADERS =
      Set.of(
          ID,
          TENANT,
          IDEMPOTENCY_KEY,
          DUE_AT,
          FIRED_AT,
          OCCURRENCE,
          ERROR,
          ERROR_MESSAGE,
          ERROR_OMITTED,
          ERROR_ID,
          SOURCE,
          REQUESTED_AT);

  private DelayHeaders() {}

  /**
   * Returns whether a request header with this name is carried to the fired record.
   *
   * @param name a header name
   * @return true unless the name is a request header or a header kdelay writes itself
   */
  public static boolean isCarried(String name) {
    return !REQUEST_HEADERS.contains(name) && !OUTPUT_HEADERS.contains(name);
  }

  /**
   * The idempotency key of one occurrence: {@code <id>@<due epoch ms>}.
   *
   * @param id the schedule id
   * @param dueMs the due time of the occurrence, epoch milliseconds
   * @return the idempotency key
   */
  public static String idempotencyKey(String id, long dueMs) {
    return id + "@" + dueMs;
  }
}

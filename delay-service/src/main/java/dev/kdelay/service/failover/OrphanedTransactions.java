package dev.kdelay.service.failover;

import dev.kdelay.schemas.LogValues;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.ThreadUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Aborts, at once, the open transaction of an instance whose tasks this one has taken over, instead
 * of leaving it to the broker's transaction timeout.
 *
 * <p>Under {@code exactly_once_v2} each stream thread writes with the transactional id {@code
 * <application.id>-<process id>-<thread index>}. When an instance dies in the middle of a
 * transaction (kill -9, a lost machine), its open transaction holds the last stable offset of every
 * partition it wrote: target topics, changelogs, the reroute topic. The new owner of its tasks has
 * another transactional id and cannot fence it, so nothing it fires to those partitions is visible
 * to {@code read_committed} readers, and kdelay's own read-back waits too, until the coordinator
 * aborts the dead transaction: {@code transaction.timeout.ms} after it began, checked only every
 * {@code transaction.abort.timed.out.transaction.cleanup.interval.ms} (10 s on a broker with Apache
 * Kafka's defaults). Failover took up to 15 s more than the group needed to notice.
 *
 * <p>A task's changelog partition is written only by the task's owner, and an owner that gives a
 * task up in a rebalance commits first. So an ongoing transaction of another producer of this
 * application that wrote the changelog of a task this instance now owns belongs to an owner that
 * lost the task without giving it up: dead, or a zombie already out of the group. After each
 * rebalance this lists such transactions and fences them ({@link Admin#fenceProducers}): the
 * coordinator bumps the producer's epoch and aborts its transaction at once. A zombie that wakes up
 * fails its next send with {@code ProducerFencedException}, which Kafka Streams handles as a task
 * migration, exactly as after the coordinator's own timeout. Nothing is lost either way; this only
 * ends the wait sooner. A dead transaction that wrote no changelog of the tasks' new owners is left
 * to the timeout.
 *
 * <p>Transactions are listed broker by broker (each lists those it coordinates). A broker that is
 * down, or whose coordinator is moving, does not answer, and while the controller still counts a
 * dead broker in, Kafka's admin client fails calls to live brokers too: what the others answered is
 * acted on, and a check that did not hear every broker, or failed, runs again every {@link
 * #RECHECK} until every broker answers or {@link #UNANSWERED_RECHECKS} checks have passed, long
 * enough for Kafka to elect new leaders of the transaction log's partitions and for the
 * coordinator's own timeout to end what is still open.
 */
public final class OrphanedTransactions implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(OrphanedTransactions.class);

  private static final String PROCESS_ID =
      "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";

  /** How often it looks again while a rebalance is under way. */
  static final Duration RECHECK = Duration.ofMillis(500);

  /**
   * How long a check waits for the brokers' lists. A live broker answers within milliseconds; one
   * that just died would hold every check for the admin client's whole timeout.
   */
  static final Duration LIST_WAIT = Duration.ofSeconds(2);

  /**
   * How many times it looks again, at most, for the transactions of brokers that did not answer.
   */
  static final int UNANSWERED_RECHECKS = 60;

  private final Admin admin;
  private final Supplier<Set<Integer>> ownedPartitions;
  private final Supplier<Set<String>> ownTransactionalIds;
  private final BooleanSupplier settling;
  private final Duration timeout;
  private final Pattern transactionalId;
  private final Pattern changelog;
  private final ScheduledExecutorService executor;
  private final AtomicBoolean pending = new AtomicBoolean();
  private int unansweredChecks; // only on the executor's thread

  /**
   * @param admin the client that lists and fences; not closed here
   * @param applicationId Kafka Streams' {@code application.id}
   * @param ownedPartitions the partitions of the tasks this instance owns now
   * @param ownTransactionalIds the transactional ids of this instance's producers
   * @param settling whether a rebalance is still under way (tasks being created or restored)
   * @param timeout how long each call to Kafka may take
   */
  public OrphanedTransactions(
      Admin admin,
      String applicationId,
      Supplier<Set<Integer>> ownedPartitions,
      Supplier<Set<String>> ownTransactionalIds,
      BooleanSupplier settling,
      Duration timeout) {
    this.admin = admin;
    this.ownedPartitions = ownedPartitions;
    this.ownTransactionalIds = ownTransactionalIds;
    this.settling = settling;
    this.timeout = timeout;
    String app = Pattern.quote(applicationId);
    this.transactionalId = Pattern.compile(app + "-(" + PROCESS_ID + ")-\\d+");
    this.changelog = Pattern.compile(app + "-.+-changelog");
    this.executor =
        Executors.newSingleThreadScheduledExecutor(
            ThreadUtils.createThreadFactory("kdelay-orphaned-transactions", true));
  }

  /**
   * Checks now, on a thread of its own, and again every {@link #RECHECK} while the rebalance is
   * under way, or while a broker does not answer (see {@link #UNANSWERED_RECHECKS}); returns at
   * once. Calls while a check waits to run are folded into it.
   */
  public void checkSoon() {
    if (pending.compareAndSet(false, true)) {
      schedule(Duration.ZERO);
    }
  }

  private void schedule(Duration delay) {
    try {
      executor.schedule(
          () -> {
            pending.set(false);
            boolean complete = false;
            try {
              complete = checkNow().complete();
            } catch (RuntimeException e) {
              if (Thread.currentThread().isInterrupted()) {
                return; // closed meanwhile
              }
              if (unansweredChecks == 0) {
                log.warn(
                    "event=orphaned-transactions-check-failed error={} hint=\"looking again every"
                        + " {} ms, {} times at most\"",
                    LogValues.quote(e),
                    RECHECK.toMillis(),
                    UNANSWERED_RECHECKS);
              } else {
                log.debug("event=orphaned-transactions-check-failed error={}", LogValues.quote(e));
              }
            }
            unansweredChecks = complete ? 0 : unansweredChecks + 1;
            boolean again =
                settling.getAsBoolean() || (!complete && unansweredChecks <= UNANSWERED_RECHECKS);
            if (again && pending.compareAndSet(false, true)) {
              schedule(RECHECK);
            }
          },
          delay.toMillis(),
          TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      // Closed: nothing more to check.
    }
  }

  /**
   * What one check fenced, and whether every broker answered it.
   *
   * @param fenced the transactional ids fenced
   * @param unanswered the brokers that did not list their transactions, with why
   */
  public record Check(Set<String> fenced, Map<Integer, String> unanswered) {

    /** Whether every broker listed its transactions. */
    public boolean complete() {
      return unanswered.isEmpty();
    }
  }

  /**
   * Fences, now and on the caller's thread, the ongoing transactions of other producers of this
   * application that wrote the changelog of a task this instance owns, among those the brokers
   * listed.
   */
  public Check checkNow() {
    Set<Integer> owned = ownedPartitions.get();
    if (owned.isEmpty()) {
      return new Check(Set.of(), Map.of());
    }
    Set<String> ownProcesses =
        ownTransactionalIds.get().stream()
            .map(transactionalId::matcher)
            .filter(Matcher::matches)
            .map(matcher -> matcher.group(1))
            .collect(Collectors.toSet());
    Listings listings =
        Listings.of(
            await(
                admin
                    .listTransactions(
                        new ListTransactionsOptions()
                            .filterStates(List.of(TransactionState.ONGOING)))
                    .byBrokerId()),
            timeout.compareTo(LIST_WAIT) < 0 ? timeout : LIST_WAIT);
    if (!listings.complete()) {
      log.debug(
          "event=orphaned-transactions-brokers-unanswered brokers={} hint=\"acting on what the"
              + " other brokers listed; looking again in {} ms\"",
          LogValues.quote(listings.unanswered().toString()),
          RECHECK.toMillis());
    }
    Set<String> candidates = new TreeSet<>();
    for (TransactionListing listing : listings.answered()) {
      Matcher matcher = transactionalId.matcher(listing.transactionalId());
      if (matcher.matches() && !ownProcesses.contains(matcher.group(1))) {
        candidates.add(listing.transactionalId());
      }
    }
    Set<String> orphans = new TreeSet<>();
    if (!candidates.isEmpty()) {
      await(admin.describeTransactions(candidates).all())
          .forEach(
              (id, transaction) -> {
                if (transaction.state() == TransactionState.ONGOING
                    && transaction.topicPartitions().stream()
                        .anyMatch(p -> ownedChangelog(p, owned))) {
                  orphans.add(id);
                }
              });
    }
    if (!orphans.isEmpty()) {
      await(admin.fenceProducers(orphans).all());
      log.info(
          "event=orphaned-transactions-aborted transactional_ids={} hint=\"open transactions of"
              + " instances whose tasks this one took over; their partitions are readable again\"",
          LogValues.quote(String.join(",", orphans)));
    }
    return new Check(orphans, listings.unanswered());
  }

  /**
   * The ongoing transactions the brokers listed, and the brokers that did not answer within the
   * timeout or failed (a broker that is down, a coordinator that moves).
   */
  record Listings(List<TransactionListing> answered, Map<Integer, String> unanswered) {

    boolean complete() {
      return unanswered.isEmpty();
    }

    /** Waits for every broker's answer, all within one timeout, and keeps what came. */
    static Listings of(
        Map<Integer, KafkaFuture<Collection<TransactionListing>>> byBroker, Duration timeout) {
      long deadline = System.nanoTime() + timeout.toNanos();
      List<TransactionListing> answered = new ArrayList<>();
      Map<Integer, String> unanswered = new TreeMap<>();
      byBroker.forEach(
          (broker, future) -> {
            Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
            try {
              answered.addAll(AdminCalls.await(future, left));
            } catch (RuntimeException e) {
              if (Thread.currentThread().isInterrupted()) {
                throw e;
              }
              unanswered.put(broker, String.valueOf(e.getMessage()));
            }
          });
      return new Listings(List.copyOf(answered), Collections.unmodifiableMap(unanswered));
    }
  }

  private boolean ownedChangelog(TopicPartition partition, Set<Integer> owned) {
    return owned.contains(partition.partition()) && changelog.matcher(partition.topic()).matches();
  }

  private <T> T await(KafkaFuture<T> future) {
    return AdminCalls.await(future, timeout);
  }

  @Override
  public void close() {
    executor.shutdownNow();
  }
}

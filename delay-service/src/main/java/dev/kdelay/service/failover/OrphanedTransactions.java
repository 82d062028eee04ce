package dev.kdelay.service.failover;

import dev.kdelay.schemas.LogValues;
import java.time.Duration;
import java.util.List;
import java.util.Set;
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
 */
public final class OrphanedTransactions implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(OrphanedTransactions.class);

  private static final String PROCESS_ID =
      "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";

  /** How often it looks again while a rebalance is under way. */
  static final Duration RECHECK = Duration.ofMillis(500);

  private final Admin admin;
  private final Supplier<Set<Integer>> ownedPartitions;
  private final Supplier<Set<String>> ownTransactionalIds;
  private final BooleanSupplier settling;
  private final Duration timeout;
  private final Pattern transactionalId;
  private final Pattern changelog;
  private final ScheduledExecutorService executor;
  private final AtomicBoolean pending = new AtomicBoolean();

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
   * under way; returns at once. Calls while a check waits to run are folded into it.
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
            try {
              abortOrphans();
            } catch (RuntimeException e) {
              if (Thread.currentThread().isInterrupted()) {
                return; // closed meanwhile
              }
              log.warn("event=orphaned-transactions-check-failed error={}", LogValues.quote(e));
            }
            if (settling.getAsBoolean() && pending.compareAndSet(false, true)) {
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
   * Fences the ongoing transactions of other producers of this application that wrote the changelog
   * of a task this instance owns.
   *
   * @return the transactional ids fenced
   */
  Set<String> abortOrphans() {
    Set<Integer> owned = ownedPartitions.get();
    if (owned.isEmpty()) {
      return Set.of();
    }
    Set<String> ownProcesses =
        ownTransactionalIds.get().stream()
            .map(transactionalId::matcher)
            .filter(Matcher::matches)
            .map(matcher -> matcher.group(1))
            .collect(Collectors.toSet());
    Set<String> candidates = new TreeSet<>();
    for (TransactionListing listing :
        await(
            admin
                .listTransactions(
                    new ListTransactionsOptions().filterStates(List.of(TransactionState.ONGOING)))
                .all())) {
      Matcher matcher = transactionalId.matcher(listing.transactionalId());
      if (matcher.matches() && !ownProcesses.contains(matcher.group(1))) {
        candidates.add(listing.transactionalId());
      }
    }
    if (candidates.isEmpty()) {
      return Set.of();
    }
    Set<String> orphans = new TreeSet<>();
    await(admin.describeTransactions(candidates).all())
        .forEach(
            (id, transaction) -> {
              if (transaction.state() == TransactionState.ONGOING
                  && transaction.topicPartitions().stream()
                      .anyMatch(p -> ownedChangelog(p, owned))) {
                orphans.add(id);
              }
            });
    if (orphans.isEmpty()) {
      return Set.of();
    }
    await(admin.fenceProducers(orphans).all());
    log.info(
        "event=orphaned-transactions-aborted transactional_ids={} hint=\"open transactions of"
            + " instances whose tasks this one took over; their partitions are readable again\"",
        LogValues.quote(String.join(",", orphans)));
    return orphans;
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

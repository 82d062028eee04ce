package dev.kdelay.topology.internals.delivery;

import dev.kdelay.schemas.LogValues;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.ApplicationRecoverableException;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TransactionAbortableException;
import org.apache.kafka.common.errors.TransactionAbortedException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The producer Kafka Streams writes kdelay's records with: it rescues a write the broker refused a
 * record in, so that one bad record never fails a stream thread.
 *
 * <p>Under exactly-once a refused record makes the producer's transaction abortable: committed as
 * it is, it would fail, and Kafka Streams would stop the stream thread, revive its tasks from their
 * changelogs and fire everything since the last commit again. This producer answers Kafka Streams
 * only once it knows the transaction can commit. It keeps every record of the open transaction;
 * when a send fails, it holds the answers back (the callbacks) and, before the transaction is
 * flushed or committed, rescues it:
 *
 * <ol>
 *   <li>The records the broker refused with an error about the record are suspects. Which of them
 *       the broker really refused is not always known from their errors alone: the producer fails
 *       every batch queued behind a refused one with that batch's error, the same exception object.
 *       The first records to get an object are the refused batch's own (the producer answers them
 *       before it fails the queue), so a record that gets it on another partition is not a suspect;
 *       the others are each sent again alone, in a new transaction: what the broker says of a
 *       record alone is about it.
 *   <li>A record refused alone is replaced by its dead letter ({@link
 *       DeliveryQuarantine#deadLetterFor}): a fired record by its {@code UNDELIVERABLE} dead
 *       letter, a dead letter by its smallest form.
 *   <li>The transaction is aborted and every record of it written again, in order, with the
 *       replacements; the answers go to Kafka Streams as they come.
 * </ol>
 *
 * <p>The store's changes (in the changelog records of the same transaction) already say the task
 * fired; with its dead letter in its place, each task still ends in one fire or one dead letter,
 * exactly once. What cannot be rescued (a refused changelog record or rerouted request, a dead
 * letter refused even in its smallest form, an error about the producer rather than a record, more
 * than {@link #MAX_ROUNDS} rounds or {@link #BUDGET_NANOS} of trying) is answered to Kafka Streams,
 * which fails the stream thread as before: first an error about the producer, as it came; then each
 * record refused alone, which the quarantine learns ({@link DeliveryQuarantine#recordRefused}), so
 * that the retry writes its dead letter; every other answer as a failure of its transaction, so
 * that nobody takes a suspect for the culprit. A transaction that failed with no record at fault
 * (the coordinator aborted it, a partition leader could not reach the coordinator) has nothing to
 * rescue: its records are answered {@link TransactionToRunAgainException}, retriable, so that Kafka
 * Streams runs the work again without failing the thread.
 *
 * <p>At least once there is no transaction to abort: a refused record is sent again alone, and
 * replaced by its dead letter if refused again; its batch-mates are sent again; the other records
 * are answered at once. A failed changelog record is not sent again (it would land after a newer
 * one): the rescue gives up.
 *
 * <p>Thread safety: Kafka Streams calls it from one stream thread; answers arrive on the producer's
 * I/O thread. No call to the producer is made with the lock held.
 */
public final class RescuingProducer implements Producer<byte[], byte[]> {

  private static final Logger log = LoggerFactory.getLogger(RescuingProducer.class);

  /** The most rescue rounds one flush makes, each ending in a replay that failed again. */
  static final int MAX_ROUNDS = 4;

  /** The longest one rescue keeps the stream thread, before it gives up. */
  static final long BUDGET_NANOS = 30_000_000_000L;

  /**
   * The longest one transaction of suspects sent alone stays open, well within {@code
   * transaction.timeout.ms} (kdelay's default 20 s, which an operator may lower): a transaction the
   * coordinator aborts fences the producer.
   */
  static final long ISOLATION_TRANSACTION_NANOS = 1_000_000_000L;

  private final Producer<byte[], byte[]> producer;
  private final DeliveryQuarantine quarantine;

  // The stream thread's.
  private boolean transactional;
  private boolean inTransaction;

  // Shared with the I/O thread: guarded by this.
  /**
   * The records to answer for: under exactly-once every record of the open transaction, in order;
   * at least once, those whose sends failed and are held.
   */
  private final List<Sent> sent = new ArrayList<>();

  /** Where each error object of this try was first answered: its batch, if the broker's. */
  private final Map<Throwable, TopicPartition> firstAnswered = new IdentityHashMap<>();

  /** Numbers the tries at the open transaction: answers to an earlier one are ignored. */
  private int attempt;

  /** Whether a send of this try failed, so that its answers are held. */
  private boolean troubled;

  /** Whether this transaction's answers go to Kafka Streams as they come, rescue given up. */
  private boolean gaveUp;

  /** Why the rescue of this transaction was given up, once it was. */
  private Exception gaveUpFor;

  /**
   * The producer, watched: a write the broker refused a record in is rescued, the record replaced
   * by its dead letter, and a record refused alone that it cannot replace is {@linkplain
   * DeliveryQuarantine#recordRefused recorded} before the caller's callback runs. Give it the
   * producers Kafka Streams creates ({@code KafkaClientSupplier.getProducer}).
   */
  public RescuingProducer(Producer<byte[], byte[]> producer, DeliveryQuarantine quarantine) {
    this.producer = producer;
    this.quarantine = quarantine;
  }

  /** What an error says of the record it came with. */
  public enum Kind {
    /** The broker may have refused the record itself: it is sent alone to find out. */
    SUSPECT,
    /** The record shares another's fate (its batch or transaction failed): it is sent again. */
    COLLATERAL,
    /** The error concerns the producer or the cluster: no rescue, Kafka Streams decides. */
    FATAL
  }

  public static Kind kind(Throwable error) {
    if (error.getClass() == KafkaException.class
        || error instanceof TransactionAbortedException
        || error instanceof TransactionAbortableException
        || error instanceof RetriableException) {
      return Kind.COLLATERAL;
    }
    if (!(error instanceof ApiException)
        || error instanceof ApplicationRecoverableException
        || error instanceof OutOfOrderSequenceException
        || error instanceof InvalidTxnStateException
        || error instanceof AuthenticationException
        || error instanceof UnsupportedVersionException
        || (error instanceof AuthorizationException
            && !(error instanceof TopicAuthorizationException))) {
      return Kind.FATAL;
    }
    return Kind.SUSPECT;
  }

  /** One record handed to this producer, and how its latest try went. */
  private static final class Sent {
    final ProducerRecord<byte[], byte[]> original;
    final Callback callback;
    final CompletableFuture<RecordMetadata> future = new CompletableFuture<>();

    /** What is written for it: the original, or its dead letter. */
    ProducerRecord<byte[], byte[]> current;

    /** 0: the original; 1: its dead letter; 2: the smallest form of that. */
    int replaced;

    /** The broker's refusal of the original alone, once it was replaced. */
    Exception refusal;

    /** The record the broker refused alone and which has no replacement, and its error. */
    ProducerRecord<byte[], byte[]> stuck;

    Exception stuckError;

    int attempt = -1;

    /**
     * Whether the producer took it in this try after its transaction had failed (and said so): it
     * never reaches the broker, so the transaction's error it is answered with later is not its
     * own.
     */
    boolean afterFailure;

    /** Whether its error in this try came on another partition than the error's first answer. */
    boolean elsewhere;

    boolean answered;
    boolean delivered;
    RecordMetadata metadata;
    Exception error;

    Sent(ProducerRecord<byte[], byte[]> original, Callback callback) {
      this.original = original;
      this.callback = callback;
      this.current = original;
    }

    boolean suspect() {
      return error != null && !afterFailure && !elsewhere && kind(error) == Kind.SUSPECT;
    }
  }

  /** An answer to pass to Kafka Streams, outside the lock. */
  private record Answer(Sent sent, RecordMetadata metadata, Exception error) {}

  @Override
  public Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record) {
    return send(record, null);
  }

  @Override
  public Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record, Callback callback) {
    Sent entry = new Sent(record, callback);
    boolean hold;
    synchronized (this) {
      if (transactional && inTransaction) {
        sent.add(entry);
      }
      hold = transactional && inTransaction && troubled && !gaveUp;
      if (hold) {
        // The transaction is failing: the record waits for the rescue rather than meet the
        // producer's error.
        entry.attempt = attempt;
        entry.afterFailure = true;
        entry.answered = true;
        entry.error = new KafkaException("held back: an earlier send of its transaction failed");
      }
    }
    if (!hold) {
      try {
        attemptSend(entry);
      } catch (RuntimeException e) {
        synchronized (this) {
          sent.remove(entry);
        }
        throw e;
      }
    }
    return entry.future;
  }

  /**
   * Hands a record (or its dead letter) to the producer, in this try of the transaction.
   *
   * @throws RuntimeException what the producer throws, but its refusal of a send in a failed
   *     transaction (not for an error about the producer), which the rescue takes in
   */
  private void attemptSend(Sent entry) {
    int current;
    boolean rescuing;
    synchronized (this) {
      current = attempt;
      entry.attempt = current;
      entry.afterFailure = false;
      entry.elsewhere = false;
      entry.answered = false;
      entry.delivered = false;
      entry.metadata = null;
      entry.error = null;
      rescuing = transactional && inTransaction && !gaveUp;
    }
    try {
      producer.send(entry.current, (metadata, error) -> answered(entry, current, metadata, error));
    } catch (KafkaException e) {
      // A producer whose transaction failed refuses sends (it took the record, and will fail it
      // with the transaction's error): this one waits for the rescue.
      if (!rescuing
          || e.getClass() != KafkaException.class
          || e.getCause() == null
          || kind(e.getCause()) == Kind.FATAL) {
        throw e;
      }
      synchronized (this) {
        if (entry.attempt == attempt) {
          entry.afterFailure = true;
          entry.answered = true;
          entry.error = e;
          troubled = true;
        }
      }
    }
  }

  /** An answer from the producer, on its I/O thread (or in {@code send} for a client error). */
  private void answered(Sent entry, int tried, RecordMetadata metadata, Exception error) {
    List<Answer> answers = new ArrayList<>();
    synchronized (this) {
      if (tried != attempt) {
        return; // an abandoned try: the record is written again
      }
      if (entry.afterFailure && error != null) {
        // The producer's error in send said all there is: it shares the failure.
        if (gaveUp && !entry.delivered) {
          answers.add(delivery(entry));
        }
      } else {
        record(entry, metadata, error, answers);
      }
    }
    deliver(answers);
  }

  /**
   * Takes in an answer of the current try, with the lock held; adds what must reach Kafka Streams
   * now.
   */
  private void record(Sent entry, RecordMetadata metadata, Exception error, List<Answer> answers) {
    entry.answered = true;
    entry.metadata = metadata;
    entry.error = error;
    if (error != null && kind(error) == Kind.SUSPECT) {
      TopicPartition here =
          metadata == null || metadata.partition() < 0
              ? null
              : new TopicPartition(metadata.topic(), metadata.partition());
      TopicPartition first = firstAnswered.putIfAbsent(error, here);
      entry.elsewhere = first != null && here != null && !first.equals(here);
    }
    if (error == null) {
      if (!transactional) {
        sent.remove(entry);
        answers.add(delivery(entry));
      } else if (!troubled || gaveUp) {
        answers.add(delivery(entry));
      }
    } else if (gaveUp) {
      answers.add(delivery(entry));
    } else if (kind(error) == Kind.FATAL) {
      if (!sent.contains(entry)) {
        sent.add(entry);
      }
      answers.addAll(giveUp(error));
    } else {
      troubled = true;
      if (!sent.contains(entry)) {
        sent.add(entry); // at least once: held until the flush
      }
    }
  }

  /** Marks an answered record delivered, for {@link #deliver} outside the lock. */
  private Answer delivery(Sent entry) {
    entry.delivered = true;
    return new Answer(entry, entry.metadata, entry.error);
  }

  /**
   * Gives the rescue up, with the lock held; returns the answers to {@link #deliver} after. Kafka
   * Streams hears first of {@code cause} (an error about the producer, such as a fence, which it
   * must see as it is), then of each record the broker refused alone, then of the rest as failures
   * of their transaction; under exactly-once the later answers of the transaction go to it as they
   * come.
   *
   * @param cause the error to answer first, or null
   */
  private List<Answer> giveUp(Exception cause) {
    return giveUp(cause, false);
  }

  /**
   * Gives the rescue up as {@link #giveUp(Exception)} does.
   *
   * @param noneAtFault whether no record is at fault (the transaction failed for a reason of the
   *     cluster's): the records are then answered {@link TransactionToRunAgainException}, which
   *     Kafka Streams retries by reviving the tasks instead of failing the stream thread
   */
  private List<Answer> giveUp(Exception cause, boolean noneAtFault) {
    gaveUp = transactional;
    troubled = false;
    if (gaveUpFor == null) {
      gaveUpFor = cause;
    }
    List<Answer> answers = new ArrayList<>();
    List<Sent> open = new ArrayList<>();
    for (Sent entry : sent) {
      if (!entry.delivered && (entry.answered || entry.attempt != attempt)) {
        open.add(entry);
      }
    }
    String notWritten =
        "not written: kdelay gave up rescuing its transaction"
            + (cause == null ? "" : " (" + cause + ")");
    Exception failed =
        noneAtFault
            ? new TransactionToRunAgainException(notWritten + "; no record of it was at fault")
            : new KafkaException(notWritten);
    if (cause != null && !open.isEmpty()) {
      Sent first = open.remove(0);
      first.delivered = true;
      answers.add(new Answer(first, first.metadata, cause));
    }
    for (Sent entry : open) {
      if (entry.stuck != null) {
        entry.delivered = true;
        answers.add(new Answer(entry, null, entry.stuckError));
      }
    }
    for (Sent entry : open) {
      if (!entry.delivered) {
        // Written or not, it goes with its transaction, which Kafka Streams now aborts.
        entry.delivered = true;
        answers.add(new Answer(entry, entry.metadata, failed));
      }
    }
    if (!transactional) {
      sent.clear();
    }
    return answers;
  }

  private void giveUpAndDeliver(Exception cause) {
    giveUpAndDeliver(cause, false);
  }

  private void giveUpAndDeliver(Exception cause, boolean noneAtFault) {
    List<Answer> answers;
    synchronized (this) {
      answers = giveUp(cause, noneAtFault);
    }
    deliver(answers);
  }

  /** Passes answers to Kafka Streams; never with the lock held. */
  private void deliver(List<Answer> answers) {
    for (Answer answer : answers) {
      Sent entry = answer.sent();
      if (answer.error() != null) {
        if (entry.stuck != null && answer.error() == entry.stuckError) {
          try {
            quarantine.recordRefused(entry.stuck, entry.stuckError);
          } catch (RuntimeException e) {
            // Never keep the caller's callback from running: it decides the transaction's fate.
          }
        }
        entry.future.completeExceptionally(answer.error());
      } else {
        entry.future.complete(answer.metadata());
      }
      if (entry.callback != null) {
        entry.callback.onCompletion(answer.metadata(), answer.error());
      }
    }
  }

  /**
   * Rescues the open transaction (at least once, the failed sends) if a send failed, so that Kafka
   * Streams' flush and commit find every record answered, and none refused that a dead letter can
   * replace.
   */
  private void rescue() {
    synchronized (this) {
      if (!troubled || gaveUp) {
        return;
      }
    }
    long started = System.nanoTime();
    List<Sent> replaced = new ArrayList<>();
    int rounds = 0;
    try {
      while (true) {
        producer.flush(); // every answer of this try is in
        List<Sent> suspects = new ArrayList<>();
        boolean changelog = false;
        synchronized (this) {
          if (!troubled || gaveUp) {
            break;
          }
          for (Sent entry : sent) {
            if (entry.suspect()) {
              suspects.add(entry);
            }
            changelog |= entry.error != null && quarantine.isStoreChangelog(entry.current.topic());
          }
        }
        if (suspects.isEmpty()) {
          // No record is at fault: the transaction failed (the coordinator aborted it, a broker
          // did not answer). Kafka Streams runs the work again, without losing the thread; but
          // not after a round that replaced records, which must not turn into a loop of revivals
          // unbounded by the instance's limit of failed threads.
          giveUpAndDeliver(null, rounds == 0);
          return;
        }
        if (++rounds > MAX_ROUNDS
            || (!transactional && changelog)
            || System.nanoTime() - started > BUDGET_NANOS) {
          giveUpAndDeliver(null);
          return;
        }
        if (!isolate(suspects, replaced, started)) {
          return;
        }
        // Then everything still to write, in order, with the dead letters in place.
        restart();
        List<Sent> again;
        synchronized (this) {
          again = new ArrayList<>(sent);
          if (!transactional) {
            sent.clear();
          }
        }
        for (Sent entry : again) {
          attemptSend(entry);
        }
      }
    } catch (RuntimeException e) {
      // The producer failed under the rescue (fenced, timed out, closed): Kafka Streams hears of it
      // through the answers, as from a send, and handles it as ever.
      giveUpAndDeliver(e);
      return;
    }
    if (!replaced.isEmpty()) {
      for (Sent entry : replaced) {
        quarantine.rescued(entry.original, entry.refusal);
      }
      log.warn(
          "event=write-rescued refused={} rounds={} rescue_ms={}",
          replaced.size(),
          rounds,
          (System.nanoTime() - started) / 1_000_000);
    }
  }

  /**
   * Sends each suspect alone and replaces those the broker refuses by their dead letters.
   *
   * @return false if the rescue was given up
   */
  private boolean isolate(List<Sent> suspects, List<Sent> replaced, long started) {
    restart();
    long opened = System.nanoTime();
    for (Sent suspect : suspects) {
      if (System.nanoTime() - started > BUDGET_NANOS) {
        giveUpAndDeliver(null);
        return false;
      }
      if (System.nanoTime() - opened > ISOLATION_TRANSACTION_NANOS) {
        restart(); // what was sent alone so far is written again anyway
        opened = System.nanoTime();
      }
      attemptSend(suspect);
      producer.flush();
      Exception error;
      synchronized (this) {
        if (gaveUp) {
          return false;
        }
        error = suspect.error;
      }
      if (error == null) {
        continue; // innocent: at least once it is written now, exactly once again below
      }
      if (kind(error) == Kind.SUSPECT && replace(suspect, error)) {
        replaced.add(suspect);
      } else {
        synchronized (this) {
          if (kind(error) == Kind.SUSPECT) {
            suspect.stuck = suspect.current;
            suspect.stuckError = error;
          }
        }
        giveUpAndDeliver(kind(error) == Kind.FATAL ? error : null);
        return false;
      }
      restart();
      opened = System.nanoTime();
    }
    return true;
  }

  /** Replaces a record the broker refused alone by its dead letter; false if it has none left. */
  private boolean replace(Sent entry, Exception error) {
    if (entry.replaced >= 2) {
      return false;
    }
    boolean smallest = entry.replaced == 1;
    Exception refusal = entry.refusal != null ? entry.refusal : error;
    Optional<ProducerRecord<byte[], byte[]>> deadLetter =
        quarantine.deadLetterFor(entry.original, refusal, smallest);
    if (deadLetter.isEmpty()) {
      return false;
    }
    log.warn(
        "event=record-refused topic={} error={} response=dead-letter",
        LogValues.quote(entry.current.topic()),
        LogValues.quote(DeliveryQuarantine.describe(error)));
    boolean ofDeadLetter = entry.original.topic().equals(deadLetter.get().topic());
    synchronized (this) {
      entry.refusal = refusal;
      entry.current = deadLetter.get();
      entry.replaced = smallest || ofDeadLetter ? 2 : 1;
    }
    return true;
  }

  /**
   * Starts a new try: under exactly-once, aborts the transaction and begins another. Answers to the
   * old try are ignored from now on.
   */
  private void restart() {
    synchronized (this) {
      attempt++;
      troubled = false;
      firstAnswered.clear();
    }
    if (transactional && inTransaction) {
      producer.abortTransaction();
      producer.beginTransaction();
    }
  }

  @Override
  public void initTransactions() {
    producer.initTransactions();
    transactional = true;
  }

  @Override
  public void beginTransaction() {
    producer.beginTransaction();
    synchronized (this) {
      startTransaction();
      inTransaction = true;
    }
  }

  @Override
  public void sendOffsetsToTransaction(
      Map<TopicPartition, OffsetAndMetadata> offsets, ConsumerGroupMetadata groupMetadata) {
    producer.flush();
    rescue();
    refuseIfGivenUp();
    try {
      producer.sendOffsetsToTransaction(offsets, groupMetadata);
    } catch (InvalidTxnStateException e) {
      throw fencedBy(e);
    }
  }

  @Override
  public void commitTransaction() {
    producer.flush();
    rescue();
    refuseIfGivenUp();
    try {
      producer.commitTransaction();
    } catch (InvalidTxnStateException e) {
      throw fencedBy(e);
    }
    synchronized (this) {
      startTransaction();
      inTransaction = false;
    }
  }

  @Override
  public void abortTransaction() {
    synchronized (this) {
      startTransaction();
      inTransaction = false;
    }
    producer.abortTransaction();
  }

  /**
   * A commit the transaction coordinator refused as out of state, told to Kafka Streams as a fence.
   *
   * <p>Under transactions v2 (the default from Kafka 4.0), a producer whose transaction the
   * coordinator aborted on its own ({@code transaction.timeout.ms}: the process was paused, or lost
   * its broker for that long) gets {@code INVALID_TXN_STATE} for its commit, not {@code
   * PRODUCER_FENCED}: the coordinator's abort bumped the epoch, and the late commit matches the
   * condition of a retried EndTxn (KAFKA-20785; the 4.3.1 broker still answers so). The producer
   * takes the error as fatal and Kafka Streams replaces the stream thread. Nothing was committed:
   * the transaction was rolled back by the coordinator. A fence is what it is to Kafka Streams: it
   * closes the tasks as lost, makes a new producer and rejoins the group, with no thread lost.
   */
  private static ProducerFencedException fencedBy(InvalidTxnStateException refusal) {
    ProducerFencedException fenced =
        new ProducerFencedException(
            "the transaction coordinator refused the commit as out of state; the transaction was"
                + " rolled back by the coordinator (it timed out, or another producer took over),"
                + " and this producer can no longer write: "
                + refusal.getMessage());
    fenced.initCause(refusal);
    return fenced;
  }

  /**
   * Never commits a transaction whose rescue was given up: it may hold only part of what Kafka
   * Streams wrote (the suspects sent alone), and Kafka Streams heard of the failure already.
   */
  private void refuseIfGivenUp() {
    synchronized (this) {
      if (gaveUp) {
        throw new KafkaException(
            "kdelay gave up rescuing this transaction; it must be aborted", gaveUpFor);
      }
    }
  }

  /** Forgets the records of the transaction that ended. */
  private void startTransaction() {
    sent.clear();
    firstAnswered.clear();
    attempt++;
    troubled = false;
    gaveUp = false;
    gaveUpFor = null;
  }

  @Override
  public void flush() {
    producer.flush();
    rescue();
  }

  @Override
  public void registerMetricForSubscription(KafkaMetric metric) {
    producer.registerMetricForSubscription(metric);
  }

  @Override
  public void unregisterMetricFromSubscription(KafkaMetric metric) {
    producer.unregisterMetricFromSubscription(metric);
  }

  @Override
  public List<PartitionInfo> partitionsFor(String topic) {
    return producer.partitionsFor(topic);
  }

  @Override
  public Map<MetricName, ? extends Metric> metrics() {
    return producer.metrics();
  }

  @Override
  public Uuid clientInstanceId(Duration timeout) {
    return producer.clientInstanceId(timeout);
  }

  @Override
  public void close() {
    producer.close();
  }

  @Override
  public void close(Duration timeout) {
    producer.close(timeout);
  }
}

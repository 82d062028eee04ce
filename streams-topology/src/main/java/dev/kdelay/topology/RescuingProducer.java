package dev.kdelay.topology;

import java.time.Duration;
import java.util.ArrayList;
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
 *       the broker really refused is not known from their errors alone (a record queued behind a
 *       refused batch gets the transaction's error too), so each is sent again alone in a new
 *       transaction: what the broker says of it now is about it alone.
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
 * than {@link #MAX_ROUNDS} rounds) is answered as it came, and Kafka Streams fails the stream
 * thread as before; the quarantine has learned the refusals, and the retry writes their dead
 * letters.
 *
 * <p>At least once there is no transaction to abort: a refused record is sent again alone, and
 * replaced by its dead letter if refused again; its batch-mates are sent again; the other records
 * are answered at once.
 *
 * <p>Every failed send is also {@linkplain DeliveryQuarantine#recordRefused reported} to the
 * quarantine before Kafka Streams hears of it, as a refusal it gets no rescue for. Thread safety:
 * Kafka Streams calls it from one stream thread; answers arrive on the producer's I/O thread.
 */
final class RescuingProducer implements Producer<byte[], byte[]> {

  private static final Logger log = LoggerFactory.getLogger(RescuingProducer.class);

  /** The most rescue rounds one flush makes, each ending in a replay that failed again. */
  static final int MAX_ROUNDS = 4;

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

  /** Numbers the tries at the open transaction: answers to an earlier one are ignored. */
  private int attempt;

  /** Whether a send of this try failed, so that its answers are held. */
  private boolean troubled;

  /** Whether this transaction's answers go to Kafka Streams as they come, rescue given up. */
  private boolean gaveUp;

  RescuingProducer(Producer<byte[], byte[]> producer, DeliveryQuarantine quarantine) {
    this.producer = producer;
    this.quarantine = quarantine;
  }

  /** What an error says of the record it came with. */
  enum Kind {
    /** The broker may have refused the record itself: it is sent alone to find out. */
    SUSPECT,
    /** The record shares another's fate (its batch or transaction failed): it is sent again. */
    COLLATERAL,
    /** The error concerns the producer or the cluster: no rescue, Kafka Streams decides. */
    FATAL
  }

  static Kind kind(Exception error) {
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

    /** The broker's first refusal of the original, once it was replaced. */
    Exception refusal;

    int attempt = -1;

    /**
     * Whether the producer took it in this try after its transaction had failed (and said so): it
     * never reaches the broker, so the transaction's error it is answered with later is not its
     * own.
     */
    boolean afterFailure;

    boolean answered;
    boolean delivered;
    RecordMetadata metadata;
    Exception error;

    Sent(ProducerRecord<byte[], byte[]> original, Callback callback) {
      this.original = original;
      this.callback = callback;
      this.current = original;
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

  /** Hands a record (or its dead letter) to the producer, in this try of the transaction. */
  private void attemptSend(Sent entry) {
    int current;
    boolean rescuing;
    synchronized (this) {
      current = attempt;
      entry.attempt = current;
      entry.afterFailure = false;
      entry.answered = false;
      entry.delivered = false;
      entry.metadata = null;
      entry.error = null;
      rescuing = transactional && inTransaction && !gaveUp;
    }
    try {
      producer.send(entry.current, (metadata, error) -> answered(entry, current, metadata, error));
    } catch (KafkaException e) {
      // A producer whose transaction failed refuses sends: this one waits for the rescue.
      if (!rescuing || e.getClass() != KafkaException.class) {
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
      sent.remove(entry);
      answers.addAll(giveUp());
      answers.add(delivery(entry));
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
   * Gives the rescue up: every answer held goes to Kafka Streams as it came, and under exactly-once
   * the rest of the transaction's as they come. Called with the lock held; returns the answers to
   * {@link #deliver} after.
   */
  private List<Answer> giveUp() {
    gaveUp = transactional;
    troubled = false;
    List<Answer> answers = new ArrayList<>();
    for (Sent entry : sent) {
      if (entry.answered && !entry.delivered) {
        answers.add(delivery(entry));
      }
    }
    if (!transactional) {
      sent.clear();
    }
    return answers;
  }

  private void giveUpAndDeliver() {
    List<Answer> answers;
    synchronized (this) {
      answers = giveUp();
    }
    deliver(answers);
  }

  /** Passes answers to Kafka Streams; never with the lock held. */
  private void deliver(List<Answer> answers) {
    for (Answer answer : answers) {
      Sent entry = answer.sent();
      if (answer.error() != null) {
        try {
          quarantine.recordRefused(entry.current, answer.error());
        } catch (RuntimeException e) {
          // Never keep the caller's callback from running: it decides the transaction's fate.
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
      if (!troubled || (transactional && gaveUp)) {
        return;
      }
    }
    long started = System.nanoTime();
    List<Sent> replaced = new ArrayList<>();
    int rounds = 0;
    while (true) {
      producer.flush(); // every answer of this try is in
      List<Sent> suspects = new ArrayList<>();
      synchronized (this) {
        if (!troubled || gaveUp) {
          break;
        }
        for (Sent entry : sent) {
          if (entry.error != null && kind(entry.error) == Kind.SUSPECT) {
            suspects.add(entry);
          }
        }
      }
      if (suspects.isEmpty() || ++rounds > MAX_ROUNDS) {
        giveUpAndDeliver();
        return;
      }
      // Each suspect alone: a refusal now is the broker's word about that record.
      restart();
      for (Sent suspect : suspects) {
        attemptSend(suspect);
        producer.flush();
        Exception error;
        synchronized (this) {
          if (gaveUp) {
            return;
          }
          error = suspect.error;
        }
        if (error == null) {
          continue; // innocent: at least once it is written now, exactly once again below
        }
        if (kind(error) != Kind.SUSPECT || !replace(suspect, error)) {
          giveUpAndDeliver();
          return;
        }
        replaced.add(suspect);
        restart();
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

  /** Replaces a record the broker refused alone by its dead letter; false if it has none left. */
  private boolean replace(Sent entry, Exception error) {
    if (entry.replaced >= 2) {
      return false;
    }
    boolean smallest = entry.replaced == 1;
    Optional<ProducerRecord<byte[], byte[]>> deadLetter =
        quarantine.deadLetterFor(entry.original, error, smallest);
    if (deadLetter.isEmpty()) {
      return false;
    }
    log.warn(
        "event=record-refused topic={} error={} response=dead-letter",
        LogValues.quote(entry.current.topic()),
        LogValues.quote(DeliveryQuarantine.describe(error)));
    boolean ofDeadLetter = entry.original.topic().equals(deadLetter.get().topic());
    synchronized (this) {
      if (entry.refusal == null) {
        entry.refusal = error;
      }
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
    }
    if (transactional && inTransaction) {
      try {
        producer.abortTransaction();
        producer.beginTransaction();
      } catch (RuntimeException e) {
        giveUpAndDeliver();
        throw e;
      }
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
    rescue();
    producer.sendOffsetsToTransaction(offsets, groupMetadata);
  }

  @Override
  public void commitTransaction() {
    rescue();
    producer.commitTransaction();
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

  /** Forgets the records of the transaction that ended. */
  private void startTransaction() {
    sent.clear();
    attempt++;
    troubled = false;
    gaveUp = false;
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

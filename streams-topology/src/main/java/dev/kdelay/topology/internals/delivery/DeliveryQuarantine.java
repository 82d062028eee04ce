package dev.kdelay.topology.internals.delivery;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.RejectionReason;
import dev.kdelay.topology.DelayConfig;
import dev.kdelay.topology.DelayMetrics;
import dev.kdelay.topology.internals.store.StoreFormat;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.WeakHashMap;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.InvalidPidMappingException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TransactionAbortableException;
import org.apache.kafka.common.errors.TransactionAbortedException;
import org.apache.kafka.common.errors.UnknownProducerIdException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.protocol.Errors;

/**
 * What kdelay does about records the broker refuses: its safety net for what its deliverability
 * checks could not foresee (a topic's limits changed since kdelay read them, a broker-side policy,
 * a permission taken away).
 *
 * <p><b>A refused write is rescued.</b> The producers Kafka Streams uses are watched by a rescuing
 * producer (built on this quarantine, given to Kafka Streams by the client supplier): when the
 * broker refuses a fired record, it finds that record by sending each suspect alone, puts the
 * record's {@code UNDELIVERABLE} dead letter in its place ({@link #deadLetterFor}; a refused dead
 * letter gets its smallest form), and writes the transaction again before Kafka Streams commits it.
 * No stream thread fails, the healthy records of the transaction are late by the rescue's few round
 * trips, and each task still ends in one fire or one dead letter. The refusal is {@linkplain
 * #rescued remembered} as below, so that work done again writes the dead letter at once.
 *
 * <p><b>What cannot be rescued fails the thread, once.</b> A refused changelog record or rerouted
 * request, a dead letter refused even in its smallest form, or an error that is not about a record
 * reaches Kafka Streams as it came: the transaction fails, the stream thread stops, its tasks are
 * revived from their changelogs, and everything since the last commit runs again. Were the refused
 * record simply written again, that would repeat forever. Instead every refusal is recorded here
 * ({@link #recordRefused}), and on the retry kdelay writes a dead letter in its place:
 *
 * <ul>
 *   <li>a fired record ({@link Causes#fired}) is dead-lettered as {@code UNDELIVERABLE};
 *   <li>a dead letter ({@link Causes#deadLetter}) is written without its value and carried headers,
 *       and, refused again, dropped with an ERROR log line: the one loss left, for a dead-letter
 *       topic that refuses even a few hundred bytes;
 *   <li>a request forwarded to the reroute topic ({@link Causes#rerouted}) is dead-lettered;
 *   <li>a topic kdelay may not write to, or that the broker calls invalid, gets no fired records
 *       for {@link #TOPIC_REFUSAL_MS} ({@link #topicRefusal}).
 * </ul>
 *
 * <p>The records it learns of are the ones the rescue found refused alone and could not replace
 * (reported by the producer before Kafka Streams hears of them), and the one Kafka Streams' own
 * handler hears of (the production exception handler, installed with this quarantine). Kafka
 * Streams treats some refusals as fatal and never shows its handler (authorization, {@code
 * InvalidTopicException}); {@link #learn} takes a topic kdelay may not write to from the failure
 * itself. An error that is not the record's own is not held against it: a transaction aborted, a
 * batch-mate's invalid record, a failure of the whole transaction; and the same exception object
 * counts once.
 *
 * <p><b>Progress after a failure.</b> A failed transaction may hold records the broker never
 * judged. So for {@link #RECOVERY_MS} after a refusal that failed a transaction the punctuations
 * fire in small steps, one entry per transaction at first and twice as many after each commit that
 * succeeds, and every failure makes progress however many bad records are due together. Failures
 * the quarantine has handled do not count towards the instance's limit on failing threads ({@link
 * #learn}). Exactly once still holds: the failed transaction is aborted, so neither the refused
 * record nor the removal of its task is visible; the retry removes the task and writes the dead
 * letter in one new transaction.
 *
 * <p>The memory is per instance and bounded. Thread-safe: refusals arrive on producer I/O threads,
 * the checks run on stream threads.
 */
public final class DeliveryQuarantine {

  /** How long a topic that refused kdelay's writes gets no fired records, before it is tried. */
  static final long TOPIC_REFUSAL_MS = 60_000;

  /** How long a size a topic refused is held against later records to it. */
  static final long SIZE_REFUSAL_MS = 10 * 60_000;

  /** How long after a refusal the punctuations fire in small steps. */
  public static final long RECOVERY_MS = 5 * 60_000;

  private static final int CAPACITY = 10_000;

  private final DelayConfig config;
  private final DelayMetrics metrics;
  private final LongSupplier clock;
  private final Map<String, Refusal> refusals = leastRecentlyUsed();
  private final Map<String, TopicRefusal> topics = leastRecentlyUsed();
  private final Map<String, SizeRefusal> sizes = leastRecentlyUsed();

  /** The errors reported (by identity): the same one again counts once. */
  private final Set<Throwable> reported =
      Collections.newSetFromMap(new WeakHashMap<Throwable, Boolean>());

  /**
   * The reported errors something was remembered for (by identity): a stream thread that failed of
   * one was handled, and its retry writes a dead letter instead.
   */
  private final Set<Throwable> remembered =
      Collections.newSetFromMap(new WeakHashMap<Throwable, Boolean>());

  // Read without the lock on every fire: a stream thread asks only once anything was refused.
  private volatile boolean empty = true;
  private volatile long learned;
  private volatile long rescued;
  private volatile long lastRefusalMs = Long.MIN_VALUE;

  /**
   * How often the records written for one cause were refused, and the broker's last word.
   *
   * @param count refusals so far, at least 1
   * @param error the error's name and message, such as {@code MESSAGE_TOO_LARGE: ...}
   */
  public record Refusal(int count, String error) {}

  private record TopicRefusal(String error, long untilMs) {}

  private record SizeRefusal(long bytes, long untilMs) {}

  /**
   * Creates an empty quarantine on the system clock.
   *
   * @param config the service's configuration, for the names of its own topics
   */
  public DeliveryQuarantine(DelayConfig config) {
    this(config, DelayMetrics.NOOP, System::currentTimeMillis);
  }

  /**
   * Creates an empty quarantine on the system clock.
   *
   * @param config the service's configuration, for the names of its own topics
   * @param metrics told of every fired record the producer replaced by its dead letter
   */
  public DeliveryQuarantine(DelayConfig config, DelayMetrics metrics) {
    this(config, metrics, System::currentTimeMillis);
  }

  /**
   * Creates an empty quarantine.
   *
   * @param config the service's configuration, for the names of its own topics
   * @param clock epoch milliseconds
   */
  public DeliveryQuarantine(DelayConfig config, LongSupplier clock) {
    this(config, DelayMetrics.NOOP, clock);
  }

  /**
   * Creates an empty quarantine.
   *
   * @param config the service's configuration, for the names of its own topics
   * @param metrics told of every fired record the producer replaced by its dead letter
   * @param clock epoch milliseconds
   */
  public DeliveryQuarantine(DelayConfig config, DelayMetrics metrics, LongSupplier clock) {
    this.config = Objects.requireNonNull(config, "config cannot be null");
    this.metrics = Objects.requireNonNull(metrics, "metrics cannot be null");
    this.clock = Objects.requireNonNull(clock, "clock cannot be null");
  }

  /**
   * The dead letter to write instead of a record the broker refused alone, if it has one: a fired
   * record's {@code UNDELIVERABLE} dead letter, or a dead letter's smallest form.
   *
   * @param refused the record as the producer was given it
   * @param error the broker's error
   * @param smallest whether to give the smallest form, the whole one having been refused too
   */
  Optional<ProducerRecord<byte[], byte[]>> deadLetterFor(
      ProducerRecord<byte[], byte[]> refused, Exception error, boolean smallest) {
    return RefusedRecords.deadLetter(refused, describe(error), smallest, config, clock.getAsLong());
  }

  /**
   * Notes a record the producer replaced by its dead letter in a rescued write: its cause (or its
   * topic, or its size) is remembered as a refusal's is, so that a retry of the same work writes
   * the dead letter at once. Nothing failed, so nothing slows down: it does not count as
   * {@linkplain #learned learned}.
   */
  void rescued(ProducerRecord<byte[], byte[]> refused, Exception error) {
    synchronized (this) {
      rescued++;
    }
    remember(refused, error);
    if (!config.isDlqTopic(refused.topic())) {
      try {
        metrics.taskUndeliverable(RejectionReason.UNDELIVERABLE);
      } catch (RuntimeException e) {
        // Reporting must not turn a rescued write into a failed one.
      }
    }
  }

  /** How many refused records were replaced by their dead letters in rescued writes. */
  public long rescued() {
    return rescued;
  }

  /**
   * Learns from a record the producer failed to send: the record's own refusal is remembered for
   * its cause (or its topic), anything else is ignored. Called by the producer for a record refused
   * alone, and by Kafka Streams' handler for the failure it hears of: the same error twice counts
   * once. A stream thread that fails of a remembered error was handled ({@link #learn}).
   *
   * @return whether this record's refusal was remembered now
   */
  public boolean recordRefused(ProducerRecord<byte[], byte[]> record, Exception error) {
    if (!refusedItself(error)) {
      return false;
    }
    synchronized (this) {
      if (!reported.add(error)) {
        return false; // reported already: the handler again, or the transaction's error passed on
      }
    }
    if (!remember(record, error)) {
      return false; // nothing to hold against it: a failure of this is not handled
    }
    synchronized (this) {
      remembered.add(error);
    }
    noteLearned();
    return true;
  }

  /** Remembers a record's refusal for its cause, its topic or its size; false if it has none. */
  private boolean remember(ProducerRecord<byte[], byte[]> record, Exception error) {
    String description = describe(error);
    if (error instanceof TopicAuthorizationException || error instanceof InvalidTopicException) {
      Set<String> named =
          error instanceof TopicAuthorizationException denied
                  && !denied.unauthorizedTopics().isEmpty()
              ? denied.unauthorizedTopics()
              : Set.of(record.topic());
      return !quarantineTopics(named, description).isEmpty();
    }
    Optional<String> cause =
        causeOf(record.topic(), record.key(), record.value(), record.headers());
    if (cause.isEmpty()) {
      return false;
    }
    refused(cause.get(), description);
    if (error instanceof RecordTooLargeException) {
      sizeRefused(record.topic(), RecordSize.of(record.key(), record.value(), record.headers()));
    }
    return true;
  }

  /**
   * Whether an error is the record's own refusal by the broker, rather than the fate of its
   * transaction or batch, the producer's, or a passing state of the cluster.
   */
  private static boolean refusedItself(Exception error) {
    if (error instanceof RetriableException
        || error instanceof TransactionAbortedException
        || error instanceof TransactionAbortableException
        || error instanceof ProducerFencedException
        || error instanceof InvalidProducerEpochException
        || error instanceof OutOfOrderSequenceException
        || error instanceof UnknownProducerIdException
        || error instanceof InvalidPidMappingException) {
      return false;
    }
    if (error instanceof AuthorizationException) {
      return error instanceof TopicAuthorizationException; // others concern the whole instance
    }
    // The producer's own words for "another record of the batch was invalid" and "closed".
    return error instanceof ApiException || error.getClass() != KafkaException.class;
  }

  /** The broker's name for an error, then its message: {@code MESSAGE_TOO_LARGE: ...}. */
  static String describe(Exception exception) {
    Errors error = Errors.forException(exception);
    String name =
        error == Errors.UNKNOWN_SERVER_ERROR ? exception.getClass().getSimpleName() : error.name();
    return name + ": " + exception.getMessage();
  }

  /** How many refusals were learned since the instance started. */
  public long learned() {
    return learned;
  }

  /** When the last refusal was learned, epoch ms; {@code Long.MIN_VALUE} if none was. */
  public long lastRefusalMs() {
    return lastRefusalMs;
  }

  /** Whether a refusal was learned less than {@link #RECOVERY_MS} ago. */
  public boolean recovering() {
    long last = lastRefusalMs;
    return last != Long.MIN_VALUE && clock.getAsLong() - last < RECOVERY_MS;
  }

  /**
   * The cause of a record kdelay wrote, told from the record alone (the handler's context names
   * whatever the stream thread is processing when the broker's answer arrives, not the record's
   * origin).
   *
   * @return the cause, or empty for a record this class does not quarantine (kdelay's changelog)
   */
  Optional<String> causeOf(String topic, byte[] key, byte[] value, Headers headers) {
    if (config.isDlqTopic(topic)) {
      return Optional.of(Causes.deadLetter(headers));
    }
    if (topic.equals(config.rerouteTopic())) {
      return Optional.of(Causes.rerouted(key, value, headers));
    }
    Header idempotencyKey = headers.lastHeader(DelayHeaders.IDEMPOTENCY_KEY);
    if (idempotencyKey != null && !topic.equals(changelogTopic())) {
      return Optional.of(Causes.fired(headers));
    }
    return Optional.empty();
  }

  /** Whether a topic is the changelog of kdelay's schedule store. */
  boolean isStoreChangelog(String topic) {
    return topic.equals(changelogTopic());
  }

  /** kdelay's own changelog, matched by its name: a user topic may end in -changelog too. */
  private String changelogTopic() {
    return StoreFormat.changelogTopic(config.applicationId());
  }

  /** A map that forgets its least recently used entry beyond {@link #CAPACITY}; not thread-safe. */
  private static <V> Map<String, V> leastRecentlyUsed() {
    return new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, V> eldest) {
        return size() > CAPACITY;
      }
    };
  }

  /** Whether nothing was ever refused: then no record needs checking against the quarantine. */
  public boolean isEmpty() {
    return empty;
  }

  /** Remembers that the producer refused a record written for this cause. */
  public synchronized void refused(String cause, String error) {
    Refusal previous = refusals.get(cause);
    refusals.put(cause, new Refusal(previous == null ? 1 : previous.count() + 1, error));
    empty = false;
  }

  /** Counts a refusal that failed a transaction: the punctuations fire in steps for a while. */
  private synchronized void noteLearned() {
    learned++;
    lastRefusalMs = clock.getAsLong();
  }

  /**
   * Remembers that a topic refused a record of this size as too large: its {@code
   * max.message.bytes} shrank since kdelay last read it. Until the topic's metadata is read again,
   * every record at least this large to it would fail a transaction of its own, so each is
   * dead-lettered instead; the smallest refused size counts, for {@link #SIZE_REFUSAL_MS}.
   */
  public synchronized void sizeRefused(String topic, long bytes) {
    SizeRefusal previous = sizes.get(topic);
    long smallest = previous == null ? bytes : Math.min(previous.bytes(), bytes);
    sizes.put(topic, new SizeRefusal(smallest, clock.getAsLong() + SIZE_REFUSAL_MS));
    empty = false;
  }

  /** The smallest record size this topic refused lately, if it refused any. */
  public synchronized OptionalLong refusedSize(String topic) {
    SizeRefusal refusal = sizes.get(topic);
    if (refusal == null) {
      return OptionalLong.empty();
    }
    if (clock.getAsLong() >= refusal.untilMs()) {
      sizes.remove(topic);
      return OptionalLong.empty();
    }
    return OptionalLong.of(refusal.bytes());
  }

  /** Whether records written for this cause were refused before. */
  public synchronized Optional<Refusal> refusal(String cause) {
    if (refusals.isEmpty()) {
      return Optional.empty();
    }
    return Optional.ofNullable(refusals.get(cause));
  }

  /**
   * What a stream thread's failure was, as far as the quarantine is concerned.
   *
   * @param topics topics quarantined now, for want of permission (Kafka Streams treats that as
   *     fatal, and a producer that is not watched never reports it)
   * @param handled whether the failure was a refusal the quarantine learned: the retry dead-letters
   *     the refused record instead, so the failure is progress, not a loop
   */
  public record Learned(Set<String> topics, boolean handled) {}

  /**
   * Learns from a stream thread's failure. kdelay's own topics are never quarantined: a service
   * that may not write to them cannot work at all.
   *
   * @param failure what the stream thread died of
   */
  public synchronized Learned learn(Throwable failure) {
    Set<String> learnedTopics = new TreeSet<>();
    boolean handled = false;
    for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
      if (remembered.contains(cause)) {
        handled = true;
      } else if (cause instanceof TopicAuthorizationException denied) {
        learnedTopics.addAll(
            quarantineTopics(
                denied.unauthorizedTopics(), "TOPIC_AUTHORIZATION_FAILED: " + denied.getMessage()));
      }
      if (cause.getCause() == cause) {
        break;
      }
    }
    if (!learnedTopics.isEmpty()) {
      noteLearned();
    }
    return new Learned(learnedTopics, handled || !learnedTopics.isEmpty());
  }

  /** Holds fires back from the topics that are not kdelay's own; returns those. */
  private synchronized Set<String> quarantineTopics(Set<String> named, String error) {
    Set<String> quarantined = new TreeSet<>();
    for (String topic : named) {
      if (!isOwn(topic)) {
        topics.put(topic, new TopicRefusal(error, clock.getAsLong() + TOPIC_REFUSAL_MS));
        quarantined.add(topic);
      }
    }
    if (!quarantined.isEmpty()) {
      empty = false;
    }
    return quarantined;
  }

  /** Why fired records to this topic are held back, if they are. */
  public synchronized Optional<String> topicRefusal(String topic) {
    if (topics.isEmpty()) {
      return Optional.empty();
    }
    TopicRefusal refusal = topics.get(topic);
    if (refusal == null) {
      return Optional.empty();
    }
    if (clock.getAsLong() >= refusal.untilMs()) {
      topics.remove(topic);
      return Optional.empty();
    }
    return Optional.of(refusal.error());
  }

  private boolean isOwn(String topic) {
    return config.isDlqTopic(topic)
        || config.isRequestsTopic(topic)
        || topic.equals(config.rerouteTopic())
        || topic.startsWith(config.applicationId() + "-");
  }

  @Override
  public synchronized String toString() {
    return "DeliveryQuarantine(records=" + refusals.size() + ", topics=" + topics.size() + ")";
  }
}

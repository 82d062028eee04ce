package dev.kdelay.topology.internals.delivery;

import dev.kdelay.schemas.LogValues;
import dev.kdelay.topology.DelayConfig;
import dev.kdelay.topology.TargetTopic;
import dev.kdelay.topology.TargetTopics;
import java.util.Optional;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes dead letters, each fitted to what the dead-letter topic and the producer accept ({@link
 * DeadLetterForms}), so that no dead letter can fail a transaction for its size. A dead letter the
 * producer refused all the same (the {@link DeliveryQuarantine} remembers) is written in the
 * smallest form on the retry; refused again, it is dropped with an ERROR log line naming it.
 *
 * <p>Runs on the stream thread only.
 */
public final class DeadLetters {

  private static final Logger log = LoggerFactory.getLogger(DeadLetters.class);

  private final ProcessorContext<Object, Object> context;
  private final Deliverability deliverability;
  private final TargetTopics topics;
  private final DelayConfig config;
  private final DeliveryQuarantine quarantine;

  public DeadLetters(
      ProcessorContext<Object, Object> context,
      Deliverability deliverability,
      TargetTopics topics,
      DelayConfig config,
      DeliveryQuarantine quarantine) {
    this.context = context;
    this.deliverability = deliverability;
    this.topics = topics;
    this.config = config;
    this.quarantine = quarantine;
  }

  /**
   * Writes a dead letter, fitted to its dead-letter topic: its tenant's ({@code delay-tenant},
   * which only kdelay sets), else the shared one.
   */
  public void write(Record<byte[], byte[]> deadLetter) {
    String dlqTopic = config.dlqTopic(Causes.tenant(deadLetter.headers()));
    String cause = Causes.deadLetter(deadLetter.headers());
    Optional<DeliveryQuarantine.Refusal> refused = quarantine.refusal(cause);
    TargetTopic topic = topics.cached(dlqTopic);
    Record<byte[], byte[]> fitted;
    if (refused.isEmpty()) {
      fitted = DeadLetterForms.fitted(deadLetter, deliverability.limit(topic));
    } else if (refused.get().count() == 1) {
      fitted = DeadLetterForms.smallest(deadLetter);
    } else {
      log.error(
          "event=dead-letter-dropped topic={} code={} error={} reason=\"the dead-letter topic"
              + " refused even its smallest form\"",
          LogValues.quote(dlqTopic),
          LogValues.quote(DeadLetterForms.code(deadLetter.headers())),
          LogValues.quote(refused.get().error()));
      return;
    }
    if (fitted.key() == null && topic.compacted()) {
      // A compacted topic refuses a record without a key: the one of a request that had none, or
      // a smallest form. Keyed by what it is about, two dead letters never compact each other.
      fitted = fitted.withKey(OutputRecords.utf8(cause));
    }
    context.forward(fitted, dlqTopic.equals(config.dlqTopic()) ? Sinks.DLQ : Sinks.TENANT_DLQ);
  }
}

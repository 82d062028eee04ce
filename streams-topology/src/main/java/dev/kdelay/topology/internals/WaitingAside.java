package dev.kdelay.topology.internals;

import dev.kdelay.schemas.DelayRequest;
import dev.kdelay.schemas.LogValues;
import dev.kdelay.topology.DelayMetrics;
import dev.kdelay.topology.internals.delivery.Delivery;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The intake step that sends a request aside to wait for the look-up of its target topic, or behind
 * its id's requests that do, and lets a copy that came back go on when it may: {@link TopicWaits}
 * keeps who waits, this class takes the detour through the reroute topic.
 *
 * <p>Runs on the stream thread only.
 */
final class WaitingAside {

  private static final Logger log = LoggerFactory.getLogger(WaitingAside.class);

  /** Forwards a request through the reroute topic, or dead-letters it if it cannot. */
  @FunctionalInterface
  interface Detour {
    /**
     * @param waiting the {@value TopicWaits#HEADER} header the copy carries, or null for none
     * @return whether it was forwarded
     */
    boolean forward(Record<byte[], byte[]> record, long now, byte[] waiting);
  }

  private final ProcessorContext<?, ?> context;
  private final TopicWaits waits;
  private final Detour detour;
  private final DelayMetrics metrics;
  private final boolean atLeastOnce;

  /**
   * @param lookupTimeoutMs how long a request waits for its topic's look-up before it is taken
   *     unchecked
   * @param atLeastOnce whether the application runs at least once
   */
  WaitingAside(
      ProcessorContext<?, ?> context,
      long lookupTimeoutMs,
      Detour detour,
      DelayMetrics metrics,
      boolean atLeastOnce) {
    this.context = context;
    // Anew at every start: a copy whose transaction aborted never comes back.
    this.waits = new TopicWaits(lookupTimeoutMs);
    this.detour = detour;
    this.metrics = metrics;
    this.atLeastOnce = atLeastOnce;
  }

  /** The record without kdelay's own header: never carried into a stored task or a dead letter. */
  static Record<byte[], byte[]> withoutHeader(Record<byte[], byte[]> record) {
    if (record.headers().lastHeader(TopicWaits.HEADER) == null) {
      return record;
    }
    Headers headers = new RecordHeaders(record.headers().toArray());
    headers.remove(TopicWaits.HEADER);
    return record.withHeaders(headers);
  }

  /** Whether any request of this id waits aside: a new one, or a due fire, waits behind. */
  boolean hasWaiting(String id) {
    return waits.hasWaiting(id);
  }

  /** The header that keeps a copy's place when it takes another detour, or null for none. */
  static byte[] place(TopicWaits.Copy copy) {
    return copy == null ? null : TopicWaits.header(copy.sinceMs(), copy.token());
  }

  /**
   * Sends a request aside, or lets it go on; a copy that came back waits again unless it may go on
   * now.
   *
   * @param topicKnown whether intake knows what it needs of the request's target topic
   * @return whether it waits: then there is nothing more to do with it now
   */
  boolean waitsAside(
      Record<byte[], byte[]> record,
      DelayRequest request,
      boolean topicKnown,
      TopicWaits.Copy copy,
      long now) {
    String id = request.id();
    if (copy != null) {
      if (waits.mayGoOn(id, copy, topicKnown, now)) {
        if (!topicKnown && waits.timedOut(copy, now) && log.isDebugEnabled()) {
          log.debug(
              "event=target-topic-lookup-slow id={} topic={} waited_ms={} response=take-unchecked",
              LogValues.quote(id),
              LogValues.quote(request.schedule().target().topic()),
              now - copy.sinceMs());
        }
        return false;
      }
      if (!detour.forward(record, now, place(copy))) {
        waits.done(id, copy.token());
        return true;
      }
    } else {
      if (topicKnown && !waits.hasWaiting(id)) {
        return false;
      }
      String token = tokenOf(now);
      if (!detour.forward(record, now, TopicWaits.header(now, token))) {
        return true;
      }
      waits.started(id, token);
    }
    if (!atLeastOnce) {
      // The copy comes back once the transaction that wrote it commits; at least once, it comes
      // back once the producer sent it, and the commit waits for that anyway.
      context.commit();
    }
    Delivery.afterward(metrics::requestWaited);
    return true;
  }

  /** A copy that waited goes on, or is dead-lettered: its id's next copy is now first. */
  void goesOn(Record<byte[], byte[]> record, TopicWaits.Copy copy) {
    if (copy != null && record.key() != null) {
      waits.done(new String(record.key(), StandardCharsets.UTF_8), copy.token());
    }
  }

  /** A waiting request's token: the position it was read from, which nothing else has. */
  private String tokenOf(long now) {
    return context
        .recordMetadata()
        .map(m -> m.topic() + "-" + m.partition() + "@" + m.offset())
        .orElse("t" + now + "-" + System.nanoTime());
  }
}

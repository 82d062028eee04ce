package dev.kdelay.client;

import static java.util.Objects.requireNonNull;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.WireText;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * How to submit a dead letter again ({@link DelayClient#replay}): as it was, or with corrections to
 * its target topic or its due time.
 *
 * <p>The replayed request is the dead letter's key, payload and headers, without kdelay's {@code
 * delay-error*} headers and without the headers kdelay writes on fired records, so that the
 * request's own are the ones that count. It keeps the request's timestamp ({@link
 * DeadLetter#requestTimestamp}): kdelay orders requests for one id by timestamp, so a replay never
 * overrides a newer request for the same id, which is then left alone (and the replay dead-lettered
 * {@code SUPERSEDED}).
 *
 * <ul>
 *   <li>A task that came due and could not be delivered ({@code UNDELIVERABLE}) carries no time:
 *       replayed without a correction, it fires at once, to the same key.
 *   <li>{@link #after(Duration)} counts from when the replay is sent, not from the original
 *       request: it is sent as an absolute due time.
 *   <li>A cron schedule's times are its expression: replay it as it was, or schedule it anew.
 * </ul>
 *
 * <p>A dead letter whose payload was left out to fit the dead-letter topic, or whose stored task
 * could not be read ({@code UNREADABLE_TASK}), cannot be replayed.
 */
public final class Replay {

  private static final Set<String> TIME_HEADERS = Set.of(DelayHeaders.FIRE_AT, DelayHeaders.AFTER);

  private final Optional<String> targetTopic;
  private final Optional<Instant> fireAt;
  private final Optional<Duration> after;

  private Replay(Optional<String> targetTopic, Optional<Instant> fireAt, Optional<Duration> after) {
    this.targetTopic = targetTopic;
    this.fireAt = fireAt;
    this.after = after;
  }

  /** The dead letter as it was. */
  public static Replay asIs() {
    return new Replay(Optional.empty(), Optional.empty(), Optional.empty());
  }

  /** With another target topic. */
  public Replay targetTopic(String topic) {
    requireNonNull(topic, "topic cannot be null");
    return new Replay(Optional.of(topic), fireAt, after);
  }

  /** Due at this time instead. */
  public Replay fireAt(Instant dueAt) {
    requireNonNull(dueAt, "dueAt cannot be null");
    return new Replay(targetTopic, Optional.of(dueAt), Optional.empty());
  }

  /** Due this long after the replay is sent. */
  public Replay after(Duration delay) {
    requireNonNull(delay, "delay cannot be null");
    if (delay.isNegative()) {
      throw new IllegalArgumentException("delay cannot be negative, got " + delay);
    }
    return new Replay(targetTopic, Optional.empty(), Optional.of(delay));
  }

  /**
   * The request that submits the dead letter again.
   *
   * @param letter the dead letter
   * @param requestsTopic kdelay's request topic
   * @param clock what "now" is, for {@link #after} and for a task that carries no time
   * @throws IllegalArgumentException if the dead letter cannot be replayed, saying why
   */
  ProducerRecord<byte[], byte[]> request(DeadLetter letter, String requestsTopic, Clock clock) {
    String code = letter.code();
    if (code.isEmpty()) {
      throw new IllegalArgumentException(letter + " has no delay-error header: no dead letter");
    }
    if (code.equals("UNREADABLE_TASK")) {
      throw new IllegalArgumentException(
          letter + " holds a stored task that could not be decoded, not a request");
    }
    if (letter.omitted().isPresent()) {
      throw new IllegalArgumentException(
          letter
              + " was cut to fit the dead-letter topic ("
              + letter.omitted().get()
              + " left out): the request cannot be rebuilt");
    }
    String id =
        letter
            .scheduleId()
            .orElseThrow(
                () -> new IllegalArgumentException(letter + " has no schedule id: no key"));
    Headers headers = new RecordHeaders();
    for (Header header : letter.headers()) {
      if (DelayHeaders.OUTPUT_HEADERS.contains(header.key())) {
        continue; // kdelay's own: the error, and what a fired record carried
      }
      if (targetTopic.isPresent() && header.key().equals(DelayHeaders.TARGET_TOPIC)) {
        continue;
      }
      if ((fireAt.isPresent() || after.isPresent()) && TIME_HEADERS.contains(header.key())) {
        continue;
      }
      headers.add(header.key(), header.value());
    }
    boolean cron = headers.lastHeader(DelayHeaders.CRON) != null;
    if (cron && (fireAt.isPresent() || after.isPresent())) {
      throw new IllegalArgumentException(
          letter + " is a cron schedule: its times come from its expression, not a due time");
    }
    targetTopic.ifPresent(topic -> headers.add(DelayHeaders.TARGET_TOPIC, WireText.of(topic)));
    Optional<Instant> due = fireAt.or(() -> after.map(delay -> clock.instant().plus(delay)));
    if (due.isEmpty() && !cron && !hasTime(headers) && isSchedule(headers, letter.value())) {
      // A task that came due carries its fired headers, not its request's time: now, again.
      due = Optional.of(clock.instant());
    }
    due.ifPresent(at -> headers.add(DelayHeaders.FIRE_AT, WireText.of(at.toEpochMilli())));
    byte[] idBytes = WireText.of(id);
    if (letter.key() != null
        && !Arrays.equals(letter.key(), idBytes)
        && headers.lastHeader(DelayHeaders.TARGET_KEY) == null) {
      // A fired record's key, where the request named another: keep it for the replayed fire.
      headers.add(DelayHeaders.TARGET_KEY, letter.key());
    }
    return new ProducerRecord<>(
        requestsTopic, null, letter.requestTimestamp(), idBytes, letter.value(), headers);
  }

  private static boolean hasTime(Headers headers) {
    return TIME_HEADERS.stream().anyMatch(name -> headers.lastHeader(name) != null);
  }

  /** A schedule says so, or says nothing and has a value: without one it is a cancel. */
  private static boolean isSchedule(Headers headers, byte[] value) {
    Header action = headers.lastHeader(DelayHeaders.ACTION);
    return action == null
        ? value != null
        : new String(action.value(), StandardCharsets.UTF_8).equals("schedule");
  }
}

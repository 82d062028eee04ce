package dev.kdelay.topology.internals;

import dev.kdelay.schemas.DelayHeaders;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * The requests of one partition that wait aside for the look-up of their target topic, so that a
 * topic kdelay has not seen before never holds up the stream thread: such a request takes the
 * reroute topic's detour back to its own partition, durably, and is checked again when it comes
 * back; meanwhile every other request flows.
 *
 * <p>Requests for one id still apply in the order they arrived. Each waiting copy carries a {@value
 * #HEADER} header with a token (the position of the request it copies) and the time it started
 * waiting. Per id this class keeps the tokens in the order their copies were written; a copy that
 * comes back goes on only if it is its id's first, and otherwise waits again, keeping its token.
 * The reroute topic keeps the order of what is written to one partition, so the copies of an id go
 * round in order and the first one out is always the oldest. A request for an id that has copies
 * waiting waits behind them, whatever its target.
 *
 * <p>What this class knows is lost with the task, the copies are not: copies that come back to a
 * new instance are adopted in the order they arrive, which is their order still. A request read
 * from the request topic before its id's copies came back is the one case that can overtake them,
 * and requests apply by their timestamps anyway.
 *
 * <p>Runs on the stream thread only.
 */
final class TopicWaits {

  /** The header a waiting copy carries: {@code <since ms> <token>}. */
  static final String HEADER = DelayHeaders.WAITING;

  /**
   * How long past its deadline a copy keeps its place behind an earlier one that has not come back:
   * a copy is never lost, so this only bounds a bug.
   */
  private static final long ORDER_GRACE_MS = 30_000;

  /** A waiting copy as it came back: its token, and when it started waiting. */
  record Copy(String token, long sinceMs) {}

  private final long lookupTimeoutMs;
  private final Map<String, Deque<String>> waiting = new HashMap<>();

  /**
   * @param lookupTimeoutMs how long a request waits for its topic's look-up before it is taken
   *     unchecked
   */
  TopicWaits(long lookupTimeoutMs) {
    this.lookupTimeoutMs = lookupTimeoutMs;
  }

  /**
   * The waiting copy a record is, if it is one: only records read from the reroute topic count, so
   * a producer cannot forge the header into the request topic.
   */
  static Copy copyOf(Headers headers, boolean fromRerouteTopic) {
    if (!fromRerouteTopic) {
      return null;
    }
    Header header = headers.lastHeader(HEADER);
    if (header == null || header.value() == null) {
      return null;
    }
    String text = new String(header.value(), StandardCharsets.UTF_8);
    int space = text.indexOf(' ');
    if (space <= 0) {
      return null;
    }
    try {
      return new Copy(text.substring(space + 1), Long.parseLong(text.substring(0, space)));
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** Whether any copy of this id waits: a new request for it must wait behind. */
  boolean hasWaiting(String id) {
    return waiting.containsKey(id);
  }

  /**
   * Whether a copy that came back may go on now, rather than wait again: it is its id's first (or
   * has waited far too long to keep its place), and its topic's look-up answered or timed out.
   *
   * @param topicKnown whether the look-up of its target topic answered (true when it has none)
   */
  boolean mayGoOn(String id, Copy copy, boolean topicKnown, long nowMs) {
    Deque<String> tokens = waiting.computeIfAbsent(id, k -> new ArrayDeque<>());
    if (!tokens.contains(copy.token())) {
      tokens.addLast(copy.token()); // came back to a new instance: adopted in arrival order
    }
    boolean first = copy.token().equals(tokens.peekFirst());
    boolean ready = topicKnown || timedOut(copy, nowMs);
    return ready && (first || nowMs - copy.sinceMs() >= lookupTimeoutMs + ORDER_GRACE_MS);
  }

  /** Whether a request's wait for its topic's look-up has run out: it is then taken unchecked. */
  boolean timedOut(Copy copy, long nowMs) {
    return nowMs - copy.sinceMs() >= lookupTimeoutMs;
  }

  /** A request starts waiting: its copy goes last among its id's. */
  void started(String id, String token) {
    waiting.computeIfAbsent(id, k -> new ArrayDeque<>()).addLast(token);
  }

  /** A copy goes on, or was dead-lettered: its id's next copy is now first. */
  void done(String id, String token) {
    Deque<String> tokens = waiting.get(id);
    if (tokens != null) {
      tokens.remove(token);
      if (tokens.isEmpty()) {
        waiting.remove(id);
      }
    }
  }

  /** The header value of a copy. */
  static byte[] header(long sinceMs, String token) {
    return (sinceMs + " " + token).getBytes(StandardCharsets.UTF_8);
  }
}

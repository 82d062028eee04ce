package dev.kdelay.service.http;

import dev.kdelay.service.RestoreProgress;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.apache.kafka.streams.KafkaStreams.State;

/**
 * The answers of {@code GET /health/live} and {@code GET /health/ready}.
 *
 * <ul>
 *   <li><b>live</b>: the process is worth keeping: Kafka Streams has not failed for good ({@code
 *       ERROR}, {@code PENDING_ERROR}) or stopped ({@code NOT_RUNNING}). A rebalance or a long
 *       restoration is alive.
 *   <li><b>ready</b>: the instance does its share of the work: Kafka Streams is {@code RUNNING}, no
 *       state store is being restored from its changelog, and the fire path is warmed up.
 * </ul>
 *
 * <p>Both answer 200 with {@code "status": "UP"}, or 503 with {@code "status": "DOWN"} and the
 * reason.
 */
public final class Health {

  private static final Set<State> DEAD =
      EnumSet.of(State.ERROR, State.PENDING_ERROR, State.NOT_RUNNING);

  private final Supplier<Optional<State>> state;
  private final RestoreProgress restore;
  private final BooleanSupplier warming;

  public Health(Supplier<Optional<State>> state, RestoreProgress restore) {
    this(state, restore, () -> false);
  }

  /**
   * @param warming whether the instance still warms its fire path (not ready until it is done)
   */
  public Health(Supplier<Optional<State>> state, RestoreProgress restore, BooleanSupplier warming) {
    this.state = state;
    this.restore = restore;
    this.warming = warming;
  }

  ApiResponse live() {
    Optional<State> now = state.get();
    if (now.isPresent() && DEAD.contains(now.get())) {
      return down(now, "Kafka Streams is " + now.get() + "; the instance no longer processes");
    }
    return up(now);
  }

  ApiResponse ready() {
    Optional<State> now = state.get();
    if (now.isEmpty() || now.get() != State.RUNNING) {
      return down(
          now, "Kafka Streams is " + now.map(State::name).orElse("not started") + ", not RUNNING");
    }
    List<RestoreProgress.Restoring> restoring = restore.restoring();
    if (!restoring.isEmpty()) {
      return down(now, restoring.size() + " state store partitions are being restored", restoring);
    }
    if (warming.getAsBoolean()) {
      return down(
          now, "warming up: synthetic tasks run through the fire path (delay.warmup.tasks)");
    }
    return up(now);
  }

  private static ApiResponse up(Optional<State> state) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("status", "UP");
    body.put("state", state.map(State::name).orElse("CREATED"));
    return ApiResponse.json(200, body);
  }

  private static ApiResponse down(Optional<State> state, String reason) {
    return down(state, reason, List.of());
  }

  private static ApiResponse down(
      Optional<State> state, String reason, List<RestoreProgress.Restoring> restoring) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("status", "DOWN");
    body.put("state", state.map(State::name).orElse("CREATED"));
    body.put("reason", reason);
    if (!restoring.isEmpty()) {
      body.put("restoring", restoring);
    }
    return ApiResponse.json(503, body);
  }
}

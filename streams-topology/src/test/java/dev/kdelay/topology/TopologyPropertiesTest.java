package dev.kdelay.topology;

import dev.kdelay.schemas.generators.Choices;
import dev.kdelay.schemas.generators.GeneratedRequest;
import dev.kdelay.schemas.generators.PropertyCheck;
import dev.kdelay.schemas.generators.RequestGenerators;
import dev.kdelay.schemas.generators.RequestSpec;
import dev.kdelay.schemas.generators.TimeTexts;
import dev.kdelay.topology.ContractModel.Observed;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kdelay's topology against the {@link ContractModel}, on generated requests and interleavings: no
 * exception escapes, every request ends in exactly one outcome (applied, or a dead letter with a
 * code the contract allows), every live schedule fires exactly once per occurrence and never early,
 * and what the store holds matches the model, after every step.
 *
 * <p>Each property runs its cases on one topology, each case on ids of its own; the cases are
 * generated from {@link RequestGenerators}, which the real-broker fuzz test draws from too. Set
 * {@value PropertyCheck#CASES} for a long run, {@value PropertyCheck#SEED}{@code =random} to
 * explore beyond the fixed seeds.
 */
class TopologyPropertiesTest {

  private static final long START = 1_772_366_400_000L; // 2026-03-01T12:00:00Z
  private static final List<String> POOL = List.of("a", "b", "c");
  private static final RequestGenerators REQUESTS =
      new RequestGenerators(
          POOL,
          List.copyOf(TopologyHarness.TARGETS.keySet()),
          List.of(
              "absent",
              "bad topic",
              "__consumer_offsets",
              "delay-requests",
              "delay-dlq",
              "kdelay-prop-store-changelog",
              "customers-changelog",
              "_schemas",
              "x".repeat(250)),
          1024,
          TopologyHarness.MAX_PAYLOAD_BYTES);

  @TempDir Path tempDir;

  /**
   * Where the drivers keep their state: in memory where the machine has a tmpfs, since a test
   * driver writes (and syncs) a checkpoint file after every record and punctuation.
   */
  private Path stateDir() {
    Path shm = Path.of("/dev/shm");
    if (java.nio.file.Files.isDirectory(shm) && java.nio.file.Files.isWritable(shm)) {
      try {
        return java.nio.file.Files.createTempDirectory(shm, "kdelay-properties-");
      } catch (java.io.IOException e) {
        return tempDir;
      }
    }
    return tempDir;
  }

  /**
   * One odd request among healthy tasks due around it, then a few well-formed requests for its id,
   * while the clock moves on in uneven steps.
   */
  record OddCase(
      RequestSpec odd,
      List<Long> healthyDueOffsets,
      List<RequestSpec> followUps,
      List<Long> steps) {

    @Override
    public String toString() {
      return "OddCase[" + odd + ", healthy " + healthyDueOffsets + ", then " + followUps + "]";
    }
  }

  @Test
  void shouldAnswerEveryOddRequestAndKeepTheTasksAroundItOnTime() {
    try (Fixture fixture = new Fixture(stateDir(), StreamsConfig.EXACTLY_ONCE_V2)) {
      PropertyCheck.forAll(
          "topology: odd requests among healthy tasks",
          8_000,
          TopologyPropertiesTest::oddCase,
          oddCase ->
              fixture.run((harness, model, prefix) -> runOddCase(harness, model, oddCase, prefix)));
    }
  }

  /** What a case runs against. */
  @FunctionalInterface
  interface CaseRun {
    void run(TopologyHarness harness, ContractModel model, String prefix);
  }

  /**
   * One topology and its model, shared by the cases of a property, each case on ids of its own. A
   * case that fails leaves them in a state the next case must not inherit: the next case gets new
   * ones, so that a failure shrinks to a case that fails on its own.
   */
  static final class Fixture implements AutoCloseable {
    private final Path root;
    private final String guarantee;
    private TopologyHarness harness;
    private ContractModel model;
    private int cases;
    private int fixtures;
    private long crashes;

    Fixture(Path root, String guarantee) {
      this.root = root;
      this.guarantee = guarantee;
    }

    void run(CaseRun run) {
      if (harness == null) {
        harness =
            new TopologyHarness(root.resolve("fixture-" + fixtures++), START, guarantee, Map.of());
        model = new ContractModel(harness.modelConfig());
      }
      try {
        run.run(harness, model, "c" + cases++);
      } catch (RuntimeException | AssertionError failure) {
        crashes += harness.crashes();
        harness.close();
        harness = null;
        throw failure;
      }
    }

    long crashes() {
      return crashes + (harness == null ? 0 : harness.crashes());
    }

    @Override
    public void close() {
      try {
        if (harness != null) {
          harness.close();
        }
      } finally {
        try {
          org.apache.kafka.common.utils.Utils.delete(root.toFile());
        } catch (java.io.IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      }
    }
  }

  private static OddCase oddCase(Choices c) {
    RequestSpec odd = c.chance(80) ? REQUESTS.odd(c) : REQUESTS.chaos(c);
    List<Long> healthy = c.list(4, 60, choices -> choices.between(10, 250));
    List<RequestSpec> followUps = c.list(2, 25, REQUESTS::wellFormed);
    List<Long> steps = new ArrayList<>();
    long total = 0;
    while (total < 320) {
      long step = c.chance(90) ? c.between(5, 60) : c.between(100, 2_000);
      steps.add(step);
      total += step;
    }
    return new OddCase(odd, healthy, followUps, steps);
  }

  private static void runOddCase(
      TopologyHarness harness, ContractModel model, OddCase oddCase, String prefix) {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < oddCase.healthyDueOffsets().size(); i++) {
      String id = prefix + "-h" + i;
      ids.add(id);
      long due = harness.now() + oddCase.healthyDueOffsets().get(i);
      RequestSpec healthy =
          new RequestSpec(
              id.getBytes(StandardCharsets.UTF_8),
              null,
              ("payload of " + id).getBytes(StandardCharsets.UTF_8),
              "target",
              null,
              null,
              new RequestSpec.Time.FireAt(
                  new TimeTexts.Moment(false, due, TimeTexts.Style.EPOCH_MS, 0, null, null)),
              RequestSpec.CronOptions.NONE,
              List.of(),
              null,
              0);
      send(harness, model, healthy);
    }
    int maxIdBytes = harness.limits().maxIdBytes();
    RequestSpec odd = namespaced(oddCase.odd(), prefix, maxIdBytes);
    send(harness, model, odd);
    heldId(odd, prefix).ifPresent(ids::add);
    for (RequestSpec followUp : oddCase.followUps()) {
      send(harness, model, namespaced(followUp, prefix, maxIdBytes));
    }
    for (String id : POOL) {
      ids.add(prefix + "-" + id);
    }
    for (long step : oddCase.steps()) {
      advance(harness, model, step);
    }
    checkStore(harness, model, ids);
    // Leave nothing behind for the next case: every id cancelled.
    for (String id : ids) {
      send(harness, model, cancel(id));
    }
  }

  /** A request for one of the pool's ids, for the first of them instead. */
  private static RequestSpec onFirstId(RequestSpec spec) {
    return spec.id() != null && POOL.contains(new String(spec.id(), StandardCharsets.UTF_8))
        ? spec.withId(POOL.get(0).getBytes(StandardCharsets.UTF_8))
        : spec;
  }

  /**
   * A request moved to this case's own ids: one of the pool's to {@code <prefix>-<id>}, any other
   * that can name an id prefixed too ({@link RequestSpec#withIdPrefix}), so that no case inherits
   * what another left behind and a failure shrinks to a case that fails alone.
   */
  private static RequestSpec namespaced(RequestSpec spec, String prefix, int maxIdBytes) {
    if (spec.id() == null) {
      return spec;
    }
    String id = new String(spec.id(), StandardCharsets.UTF_8);
    return POOL.contains(id)
        ? spec.withId((prefix + "-" + id).getBytes(StandardCharsets.UTF_8))
        : spec.withIdPrefix(prefix, maxIdBytes);
  }

  /** The id a namespaced request names, if it can hold state: text, within the limit. */
  private static Optional<String> heldId(RequestSpec spec, String prefix) {
    if (spec.id() == null) {
      return Optional.empty();
    }
    String id = new String(spec.id(), StandardCharsets.UTF_8);
    return id.startsWith(prefix + "-") ? Optional.of(id) : Optional.empty();
  }

  private static RequestSpec cancel(String id) {
    return new RequestSpec(
        id.getBytes(StandardCharsets.UTF_8),
        null,
        null,
        null,
        null,
        null,
        new RequestSpec.Time.None(),
        RequestSpec.CronOptions.NONE,
        List.of(),
        null,
        0);
  }

  /** One step of a sequence. */
  sealed interface Step {
    record Send(RequestSpec request) implements Step {}

    record Advance(long ms) implements Step {}

    record Crash() implements Step {}

    record Damage(String id, boolean headerToo, byte[] garbage) implements Step {
      @Override
      public String toString() {
        return "Damage[" + id + (headerToo ? ", header" : ", task") + "]";
      }
    }
  }

  @Test
  void shouldMatchTheModelOverSequencesOfRequestsClockStepsAndCrashes() {
    try (Fixture fixture = new Fixture(stateDir(), StreamsConfig.EXACTLY_ONCE_V2)) {
      PropertyCheck.forAll(
          "topology: sequences with crashes",
          2_000,
          TopologyPropertiesTest::sequence,
          steps ->
              fixture.run((harness, model, prefix) -> runSequence(harness, model, steps, prefix)));
      System.out.printf("  (%d crashes and restores from the changelog)%n", fixture.crashes());
    }
  }

  /**
   * A sequence of steps; on one id only, when {@code oneId}, so that actions meet the states other
   * actions left (a trigger while paused, then a pause, then a resume) more often.
   */
  record Sequence(boolean oneId, List<Step> steps) {
    @Override
    public String toString() {
      return (oneId ? "one id: " : "") + steps;
    }
  }

  private static Sequence sequence(Choices c) {
    return new Sequence(c.chance(40), steps(c));
  }

  private static List<Step> steps(Choices c) {
    return c.list(
        30,
        93,
        choices ->
            switch (choices.weighted(50, 35, 4, 3, 6)) {
              case 0 -> new Step.Send(REQUESTS.wellFormed(choices));
              case 1 ->
                  new Step.Advance(
                      choices.chance(90) ? choices.between(5, 400) : choices.between(1_500, 9_000));
              case 2 -> new Step.Crash();
              case 3 -> new Step.Damage(choices.pick(POOL), choices.chance(50), choices.bytes(20));
              default -> new Step.Send(REQUESTS.odd(choices));
            });
  }

  private static void runSequence(
      TopologyHarness harness, ContractModel model, Sequence sequence, String prefix) {
    Set<String> ids = new LinkedHashSet<>();
    POOL.forEach(id -> ids.add(prefix + "-" + id));
    int maxIdBytes = harness.limits().maxIdBytes();
    for (Step step : sequence.steps()) {
      if (step instanceof Step.Send send) {
        RequestSpec request = sequence.oneId() ? onFirstId(send.request()) : send.request();
        RequestSpec namespaced = namespaced(request, prefix, maxIdBytes);
        heldId(namespaced, prefix).ifPresent(ids::add);
        send(harness, model, namespaced);
      } else if (step instanceof Step.Advance advance) {
        advance(harness, model, advance.ms());
      } else if (step instanceof Step.Crash) {
        harness.crash();
        model.restarted();
      } else if (step instanceof Step.Damage damage) {
        String id = prefix + "-" + (sequence.oneId() ? POOL.get(0) : damage.id());
        if (model.entry(id) != null) {
          // Only what the model holds: a restore may bring back a marker the model forgot
          // already (expired), and damaging it would be damage the model cannot follow.
          harness.damage(id, damage.headerToo(), damage.garbage());
          model.damage(id, damage.headerToo());
        }
      }
      checkStore(harness, model, ids);
    }
    // Let what is due come due, then leave nothing behind for the next case.
    for (int i = 0; i < 4; i++) {
      advance(harness, model, 5_000);
    }
    for (String id : ids) {
      send(harness, model, cancel(id));
    }
    checkStore(harness, model, ids);
  }

  private static void send(TopologyHarness harness, ContractModel model, RequestSpec spec) {
    GeneratedRequest request = spec.render(harness.now(), harness.limits());
    Observed observed = harness.send(request);
    model.request(request, harness.now(), observed);
  }

  private static void advance(TopologyHarness harness, ContractModel model, long ms) {
    Observed observed = harness.advance(ms);
    model.punctuate(harness.now(), observed);
  }

  private static void checkStore(
      TopologyHarness harness, ContractModel model, Collection<String> ids) {
    for (String id : ids) {
      model.checkStore(id, harness.store().view(id), harness.now());
    }
  }
}

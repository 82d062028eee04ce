package dev.kdelay.service.faults;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Objects;

/**
 * What one fault test gets from {@link FaultExtension}: its seed, and scenarios and other resources
 * that are closed after the test in the reverse order of their creation, also after a failed
 * assertion, so that no child JVM outlives its test.
 */
final class FaultRun {

  private final long seed;
  private final Deque<AutoCloseable> resources = new ArrayDeque<>();
  private final List<FaultScenario> scenarios = new ArrayList<>();

  FaultRun(long seed) {
    this.seed = seed;
  }

  /** The class's {@link FaultSeed}, or the value of its system property. */
  long seed() {
    return seed;
  }

  /**
   * A fresh scenario (its topics created on the broker), closed after the test, with the child JVMs
   * of its fleets. Closing it earlier is fine: closing twice does nothing.
   */
  FaultScenario scenario(String name, String bootstrapServers) {
    return scenario(name, bootstrapServers, (short) 1);
  }

  /** As {@link #scenario(String, String)}, its topics with {@code replicas} replicas each. */
  FaultScenario scenario(String name, String bootstrapServers, short replicas) {
    FaultScenario scenario = closeAfter(new FaultScenario(name, bootstrapServers, replicas));
    scenarios.add(scenario);
    return scenario;
  }

  /** Closes the resource after the test, before everything registered earlier. */
  <T extends AutoCloseable> T closeAfter(T resource) {
    resources.push(Objects.requireNonNull(resource, "resource cannot be null"));
    return resource;
  }

  /** The scenarios created so far, for a failure to point at their logs. */
  List<FaultScenario> scenarios() {
    return List.copyOf(scenarios);
  }

  /**
   * Closes every resource, newest first; one that fails does not stop the others.
   *
   * @throws Exception the first failure, with the later ones suppressed
   */
  void closeAll() throws Exception {
    Exception first = null;
    while (!resources.isEmpty()) {
      try {
        resources.pop().close();
      } catch (Exception e) {
        if (first == null) {
          first = e;
        } else {
          first.addSuppressed(e);
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }
}

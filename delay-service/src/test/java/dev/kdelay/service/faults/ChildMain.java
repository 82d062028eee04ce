package dev.kdelay.service.faults;

import dev.kdelay.service.Main;
import java.util.Arrays;
import java.util.List;

/**
 * Entry point of the child JVMs the fault harness starts: {@code service ARGS...} runs kdelay's own
 * {@link Main} with those arguments, {@code broker DIR HOST PORT CONTROLLER_PORT [NODE_ID VOTERS
 * CLUSTER_ID NODES]} a {@link StandaloneBroker}, a single node or one of a cluster.
 *
 * <p>Before that it ties the child's life to the test JVM: a child whose parent is gone halts at
 * once, so that a test JVM killed mid-run never leaves kdelay instances or a broker behind. Nothing
 * else differs from running {@code java -cp ... dev.kdelay.service.Main run}: same process, same
 * signal handling, same shutdown hooks.
 */
public final class ChildMain {

  private ChildMain() {}

  public static void main(String[] args) throws Exception {
    haltWhenOrphaned();
    String[] rest = Arrays.copyOfRange(args, 1, args.length);
    switch (args[0]) {
      case "service" -> Main.main(rest);
      case "broker" -> StandaloneBroker.run(StandaloneBroker.Node.of(List.of(rest)));
      default -> throw new IllegalArgumentException("expected service or broker, got " + args[0]);
    }
  }

  private static void haltWhenOrphaned() {
    ProcessHandle.current()
        .parent()
        .ifPresent(
            parent ->
                parent
                    .onExit()
                    .thenRun(
                        () -> {
                          System.err.println("ChildMain: the test JVM is gone; halting");
                          Runtime.getRuntime().halt(3);
                        }));
  }
}

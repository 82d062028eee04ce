package dev.kdelay.service.faults;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

/**
 * The scaffold of every fault test: hands a {@link FaultRun} (seed, scenarios) to the test method
 * (every wait scales its timeout by {@code -Dkdelay.faults.timeout.factor} in {@link Await}), and
 * after the test, passed or failed, closes what the run created, killing the child JVMs still
 * running. A failed test also says where its scenarios' logs and evidence are.
 *
 * <pre>{@code
 * @FaultSeed(20_240_401L)
 * @ExtendWith({KafkaClusterExtension.class, FaultExtension.class})
 * class SomethingIT {
 *   @Test
 *   void shouldSurvive(KafkaTestCluster kafka, FaultRun run) throws Exception {
 *     FaultScenario scenario = run.scenario("something", kafka.bootstrapServers());
 *     ...
 *   }
 * }
 * }</pre>
 */
final class FaultExtension
    implements ParameterResolver, AfterEachCallback, TestExecutionExceptionHandler {

  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(FaultExtension.class);

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == FaultRun.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    return run(context);
  }

  @Override
  public void handleTestExecutionException(ExtensionContext context, Throwable failure)
      throws Throwable {
    FaultRun run = context.getStore(NAMESPACE).get(FaultRun.class, FaultRun.class);
    if (run != null) {
      for (FaultScenario scenario : run.scenarios()) {
        System.out.println(
            "FAULTS "
                + scenario.name()
                + ": FAILED (seed "
                + run.seed()
                + ", timeout factor "
                + Await.factor()
                + "); logs and evidence in "
                + scenario.dir());
      }
    }
    throw failure;
  }

  /** Runs after the test's own {@code @AfterEach} methods, also when the test failed. */
  @Override
  public void afterEach(ExtensionContext context) throws Exception {
    FaultRun run = context.getStore(NAMESPACE).remove(FaultRun.class, FaultRun.class);
    if (run != null) {
      run.closeAll();
    }
  }

  private static FaultRun run(ExtensionContext context) {
    return context
        .getStore(NAMESPACE)
        .getOrComputeIfAbsent(FaultRun.class, type -> new FaultRun(seed(context)), FaultRun.class);
  }

  private static long seed(ExtensionContext context) {
    Class<?> testClass = context.getRequiredTestClass();
    FaultSeed seed = testClass.getAnnotation(FaultSeed.class);
    if (seed == null) {
      throw new ExtensionConfigurationException(
          testClass.getSimpleName() + " uses FaultExtension but has no @FaultSeed");
    }
    return Long.getLong(seed.property(), seed.value());
  }
}

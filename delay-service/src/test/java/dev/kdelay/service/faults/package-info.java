/**
 * Fault tests: nothing lost, nothing doubled, nothing early, through crashes, rebalances,
 * scale-out, broker restarts, frozen instances and hostile input.
 *
 * <h2>The harness</h2>
 *
 * <ul>
 *   <li>kdelay instances are separate JVMs ({@link dev.kdelay.service.faults.ServiceInstance}),
 *       {@code dev.kdelay.service.Main run} configured through {@code DELAY_*} environment
 *       variables like an operator does it, with the same application id, each with its own state
 *       directory; their logs go to {@code target/faults/<scenario>/<instance>.log}. Faults are
 *       real signals: SIGKILL, SIGTERM, SIGSTOP/SIGCONT.
 *   <li>The broker is the shared in-JVM KRaft test kit ({@code KafkaClusterExtension}), except for
 *       the broker restart, which runs a {@link dev.kdelay.service.faults.StandaloneBroker} in a
 *       child JVM on fixed ports and data so that it can be stopped, killed and started again.
 *   <li>{@link dev.kdelay.service.faults.TaskLoad} sends a seeded load of schedules (and cancels
 *       and replacements) at an even pace; {@link dev.kdelay.service.faults.Ledger} records what
 *       was acknowledged; {@link dev.kdelay.service.faults.CommittedRecords} reads every target
 *       topic as a {@code read_committed} consumer; {@link dev.kdelay.service.faults.Verdict} is
 *       the checker: lost, duplicated (by idempotency key), early, unexpected, corrupt, and the
 *       lateness distribution. {@link dev.kdelay.service.faults.IntakeProgress} samples the group's
 *       committed offsets, so that a cancelled task that fired can be told apart: fine if it fired
 *       before its cancel was applied, a bug if after.
 *   <li>{@link dev.kdelay.service.faults.FaultExtension} is the scaffold of every test class: it
 *       hands the test a {@link dev.kdelay.service.faults.FaultRun} (the class's {@link
 *       dev.kdelay.service.faults.FaultSeed}, its scenarios) and closes what the run created after
 *       the test, passed or failed, so that no child JVM or broker outlives it.
 *   <li>Every scenario prints its figures as lines starting with {@code FAULTS} and appends them to
 *       {@code target/faults/figures.txt}; {@code ledger.csv} and {@code fired.csv} beside the logs
 *       hold the raw evidence.
 * </ul>
 *
 * <h2>Running</h2>
 *
 * <p>Short versions are tagged {@code integration} and run with the rest of the integration tests
 * ({@code mvn -B -ntp verify}). The long versions are tagged {@code fault-long} and left out of the
 * default build; run them with
 *
 * <pre>
 * mvn -B -ntp verify -pl delay-service -am -Pfault-long
 * mvn -B -ntp verify -pl delay-service -am -Dgroups=fault-long      (the same)
 * mvn -B -ntp verify -pl delay-service -am -Pfault-long -Dit.test=InstanceCrashIT   (one class)
 * </pre>
 *
 * <p>Seeds: {@code -Dkdelay.faults.seed=N} (loads), {@code -Dkdelay.fuzz.seed=N} (fuzz). Slow
 * machine: {@code -Dkdelay.faults.timeout.factor=2}. Child JVMs run the test classpath, or {@code
 * -Dkdelay.faults.classpath=...} (for instance the shaded jar plus {@code target/test-classes}).
 */
package dev.kdelay.service.faults;

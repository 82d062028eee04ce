package dev.kdelay.topology;

import static dev.kdelay.topology.DelayDriver.header;
import static dev.kdelay.topology.DelayDriver.headerText;
import static dev.kdelay.topology.DelayDriver.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.TenantIds;
import dev.kdelay.schemas.generators.Choices;
import dev.kdelay.schemas.generators.PropertyCheck;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tenants are kept apart exactly: on generated interleavings of requests from the shared request
 * topic and two tenants' topics, on the same few ids (schedules, cancels, pauses, resumes,
 * triggers, one-shots and crons, targets of their own and of others, the shared topic addressing a
 * tenant's id), with the clock moving in between, each namespace's fires and dead letters are
 * exactly those a deployment without tenants gives when it is sent that namespace's requests alone
 * (with the tenant's allowlist as its own); and a tenant's carry its name in {@code delay-tenant}.
 */
class TenantIsolationPropertiesTest {

  /** The shared topic's namespace, then the tenants'. */
  private static final List<String> NAMESPACES = List.of("", "teama", "teamb");

  private static final List<String> TARGETS = List.of("shared.t", "teama.t", "teamb.t");
  private static final int IDS = 3;
  private static final long STEP_MS = 50;

  @TempDir Path tempDir;

  /** One case: the steps. */
  record Case(List<Step> steps) {}

  /** One step. */
  sealed interface Step {}

  /**
   * A request on namespace {@code from}'s topic; from the shared topic, {@code as} may name a
   * tenant whose id it addresses (else 0).
   */
  record Send(int from, int as, int id, Action action, int target, long dueInMs, boolean cron)
      implements Step {

    /** The namespace whose schedule it acts on. */
    int namespace() {
      return from == 0 ? as : from;
    }
  }

  /** What a request asks. */
  enum Action {
    SCHEDULE,
    CANCEL,
    PAUSE,
    RESUME,
    TRIGGER
  }

  /** The wall clock moved on. */
  record Advance(long ms) implements Step {}

  @Test
  void shouldGiveEachNamespaceExactlyWhatItAloneWouldGetWithoutTenants() {
    PropertyCheck.forAll(
        "tenants: each namespace as if alone",
        60,
        TenantIsolationPropertiesTest::generate,
        this::check);
  }

  private static Case generate(Choices choices) {
    return new Case(
        choices.list(
            30,
            90,
            c -> {
              if (c.chance(25)) {
                return new Advance(c.between(0, 1_500));
              }
              int from = c.below(3);
              int as = from == 0 && c.chance(30) ? 1 + c.below(2) : 0;
              Action action =
                  switch (c.weighted(6, 2, 1, 1, 1)) {
                    case 0 -> Action.SCHEDULE;
                    case 1 -> Action.CANCEL;
                    case 2 -> Action.PAUSE;
                    case 3 -> Action.RESUME;
                    default -> Action.TRIGGER;
                  };
              int namespace = from == 0 ? as : from;
              // mostly its own target, sometimes another namespace's
              int target = c.chance(75) ? namespace : c.below(3);
              return new Send(
                  from, as, c.below(IDS), action, target, c.between(-200, 2_000), c.chance(20));
            }));
  }

  private void check(Case c) {
    try (DelayDriver tenants =
            DelayDriver.exactlyOnce(
                newStateDir(), Map.of(DelayConfig.TENANTS_CONFIG, "teama,teamb"));
        DelayDriver shared = alone(".*");
        DelayDriver teama = alone("teama\\..*");
        DelayDriver teamb = alone("teamb\\..*")) {
      List<DelayDriver> alone = List.of(shared, teama, teamb);
      int index = 0;
      for (Step step : c.steps()) {
        index++;
        if (step instanceof Advance advance) {
          advance(tenants, alone, advance.ms());
          continue;
        }
        Send send = (Send) step;
        String id = "id-" + send.id();
        String value = send.action() == Action.CANCEL ? null : "v" + index;
        Header[] headers = headers(send, tenants.now().toEpochMilli());
        if (send.from() == 0) {
          tenants.request(
              send.as() == 0 ? id : TenantIds.qualified(NAMESPACES.get(send.as()), id),
              value,
              headers);
        } else {
          tenants.requestAs(NAMESPACES.get(send.from()), id, value, headers);
        }
        alone.get(send.namespace()).request(id, value, headers);
      }
      // everything that can come due does: the crons fire twice at most
      advance(tenants, alone, 5_000);

      // then: each namespace got exactly what it would alone
      Map<String, List<TestRecord<byte[], byte[]>>> fired = new java.util.HashMap<>();
      for (String target : TARGETS) {
        fired.put(target, tenants.output(target).readRecordsToList());
      }
      for (int n = 0; n < NAMESPACES.size(); n++) {
        String namespace = NAMESPACES.get(n);
        DelayDriver reference = alone.get(n);
        for (String target : TARGETS) {
          List<String> got =
              fired.get(target).stream()
                  .filter(record -> namespace.equals(tenantOf(record)))
                  .map(TenantIsolationPropertiesTest::fire)
                  .toList();
          List<String> expected =
              reference.output(target).readRecordsToList().stream()
                  .map(TenantIsolationPropertiesTest::fire)
                  .toList();
          assertThat(got).as("fires of '%s' to %s", namespace, target).isEqualTo(expected);
        }
        String dlq = n == 0 ? "delay-dlq" : "delay-dlq." + namespace;
        List<String> dead =
            tenants.output(dlq).readRecordsToList().stream()
                .peek(
                    record ->
                        assertThat(tenantOf(record)).as("tenant of %s", dlq).isEqualTo(namespace))
                .map(TenantIsolationPropertiesTest::deadLetter)
                .toList();
        List<String> expectedDead =
            reference.deadLetters().stream()
                .map(TenantIsolationPropertiesTest::deadLetter)
                .toList();
        assertThat(dead).as("dead letters of '%s'", namespace).isEqualTo(expectedDead);
      }
    }
  }

  /** Moves every driver's wall clock on, in steps of a few punctuations, as a stream thread's. */
  private static void advance(DelayDriver tenants, List<DelayDriver> alone, long ms) {
    for (long left = ms; left > 0; left -= STEP_MS) {
      Duration step = Duration.ofMillis(Math.min(STEP_MS, left));
      tenants.advance(step);
      alone.forEach(driver -> driver.advance(step));
    }
  }

  private static Header[] headers(Send send, long nowMs) {
    return switch (send.action()) {
      case SCHEDULE ->
          send.cron()
              ? new Header[] {
                header(DelayHeaders.TARGET_TOPIC, TARGETS.get(send.target())),
                header(DelayHeaders.CRON, "*/2 * * * * ?"),
                header(DelayHeaders.MAX_FIRES, "2")
              }
              : new Header[] {
                header(DelayHeaders.TARGET_TOPIC, TARGETS.get(send.target())),
                header(DelayHeaders.FIRE_AT, Long.toString(nowMs + send.dueInMs()))
              };
      case CANCEL -> new Header[] {header(DelayHeaders.ACTION, "cancel")};
      case PAUSE -> new Header[] {header(DelayHeaders.ACTION, "pause")};
      case RESUME -> new Header[] {header(DelayHeaders.ACTION, "resume")};
      case TRIGGER -> new Header[] {header(DelayHeaders.ACTION, "trigger")};
    };
  }

  /** A deployment without tenants whose targets are those of a namespace. */
  private DelayDriver alone(String allow) {
    return DelayDriver.exactlyOnce(
        newStateDir(), Map.of(DelayConfig.TARGET_TOPIC_ALLOW_CONFIG, allow));
  }

  private static String tenantOf(TestRecord<byte[], byte[]> record) {
    String tenant = headerText(record.headers(), DelayHeaders.TENANT);
    return tenant == null ? "" : tenant;
  }

  /** What a consumer sees of a fire, but its tenant. */
  private static String fire(TestRecord<byte[], byte[]> record) {
    return String.join(
        " ",
        text(record.key()),
        text(record.value()),
        headerText(record.headers(), DelayHeaders.ID),
        headerText(record.headers(), DelayHeaders.IDEMPOTENCY_KEY),
        headerText(record.headers(), DelayHeaders.DUE_AT),
        headerText(record.headers(), DelayHeaders.FIRED_AT),
        String.valueOf(headerText(record.headers(), DelayHeaders.OCCURRENCE)));
  }

  /** What a dead letter is about, and why. */
  private static String deadLetter(TestRecord<byte[], byte[]> record) {
    return text(record.key()) + " " + headerText(record.headers(), DelayHeaders.ERROR);
  }

  private Path newStateDir() {
    try {
      return Files.createTempDirectory(tempDir, "state-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}

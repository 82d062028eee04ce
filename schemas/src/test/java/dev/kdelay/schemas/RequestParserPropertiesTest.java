package dev.kdelay.schemas;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.generators.GeneratedRequest;
import dev.kdelay.schemas.generators.GeneratedRequest.Intent;
import dev.kdelay.schemas.generators.ParseOracle;
import dev.kdelay.schemas.generators.PropertyCheck;
import dev.kdelay.schemas.generators.RequestGenerators;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The parser against the contract's oracle, on generated requests: it never throws, and each
 * request is either rejected with a code the contract allows, or accepted meaning what the contract
 * says it means.
 */
class RequestParserPropertiesTest {

  private static final long NOW = 1_772_366_400_000L; // 2026-03-01T12:00:00Z
  private static final ParseOracle.Limits LIMITS =
      new ParseOracle.Limits(1024, 1000, 64, RequestLimits.DEFAULTS.horizonMs(), 60_000);
  private static final RequestParser PARSER =
      new RequestParser(new RequestLimits(1024, 1000, 64, RequestLimits.DEFAULTS.horizonMs()));
  private static final RequestGenerators REQUESTS =
      new RequestGenerators(
          List.of("a", "b", "c"),
          List.of("target"),
          List.of("absent", "bad topic", "__consumer_offsets", "x".repeat(250)),
          1024,
          1000);

  @Test
  void shouldAnswerEveryOddRequestAsTheContractSays() {
    PropertyCheck.forAll(
        "parser: odd requests", 4_000, REQUESTS::odd, spec -> check(spec.render(NOW, LIMITS)));
  }

  @Test
  void shouldAnswerEveryWellFormedRequestAsTheContractSays() {
    PropertyCheck.forAll(
        "parser: well-formed requests",
        2_000,
        REQUESTS::wellFormed,
        spec -> check(spec.render(NOW, LIMITS)));
  }

  @Test
  void shouldGiveEveryRequestExactlyOneAnswer() {
    PropertyCheck.forAll(
        "parser: any header values",
        4_000,
        REQUESTS::chaos,
        spec -> check(spec.render(NOW, LIMITS)));
  }

  private static void check(GeneratedRequest request) {
    long stamped =
        request.timestamp() < 0 || request.timestamp() - NOW > LIMITS.maxClockSkewMs()
            ? NOW
            : request.timestamp();
    ParseResult result =
        PARSER.parse(request.key(), request.value(), request.recordHeaders(), stamped, NOW);
    GeneratedRequest.Expectation expected = request.expectation();
    if (result instanceof ParseResult.Rejected rejected) {
      assertThat(rejected.rejection().reason())
          .as("code of %s (%s)", request, rejected.rejection().message())
          .isIn(expected.codes());
      return;
    }
    DelayRequest parsed = ((ParseResult.Accepted) result).request();
    assertThat(expected.accepted()).as("accepted %s", request).isPresent();
    Intent intent = expected.accepted().get();
    assertThat(parsed.action()).isEqualTo(intent.action());
    assertThat(parsed.id()).isEqualTo(intent.id());
    assertThat(parsed.timestamp()).isEqualTo(intent.stampedMs());
    Timing timing = parsed.schedule() != null ? parsed.schedule().timing() : parsed.newTiming();
    if (intent.timing() instanceof GeneratedRequest.Timing.Once once) {
      assertThat(timing).as("timing of %s", request).isEqualTo(new Timing.Once(once.dueMs()));
    } else if (intent.timing() instanceof GeneratedRequest.Timing.Cron cron) {
      CronSpec spec = (CronSpec) timing;
      assertThat(spec.expression()).isEqualTo(cron.expression());
      assertThat(spec.flavor()).isEqualTo(cron.flavor());
      assertThat(spec.zone()).isEqualTo(cron.zone());
      assertThat(spec.startAtMs()).isEqualTo(cron.startAtMs());
      assertThat(spec.endAtMs()).isEqualTo(cron.endAtMs());
      assertThat(spec.maxFires()).isEqualTo(cron.maxFires());
      assertThat(spec.misfire()).isEqualTo(cron.misfire());
    }
    if (intent.action() == Action.SCHEDULE) {
      Schedule schedule = parsed.schedule();
      assertThat(schedule.target().topic()).isEqualTo(intent.target());
      assertThat(schedule.target().key()).isEqualTo(intent.targetKey());
      assertThat(schedule.target().partition().orElse(-1)).isEqualTo(intent.partition());
      assertThat(schedule.payload()).isEqualTo(intent.payload());
      assertThat(schedule.headers()).isEqualTo(intent.carried());
    }
  }
}

package dev.kdelay.schemas;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Runs the language-neutral request vectors in {@code vectors/requests.json} through {@link
 * RequestParser}. The format is described in {@code vectors/README.md}.
 */
class RequestVectorsTest {

  private static final String VECTORS = "/vectors/requests.json";

  /**
   * Decided by the service from its configuration and state, never by the parser from the record
   * alone, so no vector can show them. A reason added to {@link RejectionReason} must either get a
   * vector or be listed here: the coverage test below fails until one of the two is done.
   */
  static final Set<RejectionReason> DECIDED_BY_SERVICE =
      EnumSet.of(
          RejectionReason.UNKNOWN_TOPIC,
          RejectionReason.TARGET_NOT_ALLOWED,
          RejectionReason.SUPERSEDED,
          RejectionReason.NOT_APPLICABLE,
          RejectionReason.UNREADABLE_TASK,
          RejectionReason.INTERNAL,
          RejectionReason.UNDELIVERABLE,
          RejectionReason.IMPORT_REFUSED,
          RejectionReason.TOO_MANY_PENDING);

  static Stream<Arguments> vectors() {
    return allVectors().stream().map(v -> Arguments.of(v.get("name").asText(), v));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("vectors")
  void shouldParseAsTheVectorExpectsWhenGivenItsRecord(String name, JsonNode vector) {
    assumeTrue(!vector.hasNonNull("knownIssue"), () -> "known issue: " + vector.get("knownIssue"));

    ParseResult result = parse(vector);

    JsonNode expect = vector.get("expect");
    if (expect.has("rejected")) {
      assertRejected(result, expect.get("rejected").asText());
    } else {
      assertAccepted(result, expect);
    }
  }

  @Test
  void shouldCoverEveryRejectionReasonTheParserCanEmitWhenVectorsAreRead() {
    Set<RejectionReason> covered =
        allVectors().stream()
            .filter(v -> !v.hasNonNull("knownIssue"))
            .map(v -> v.get("expect"))
            .filter(e -> e.has("rejected"))
            .map(e -> RejectionReason.valueOf(e.get("rejected").asText()))
            .collect(Collectors.toCollection(() -> EnumSet.noneOf(RejectionReason.class)));

    Set<RejectionReason> parserReasons = EnumSet.complementOf(EnumSet.copyOf(DECIDED_BY_SERVICE));
    assertThat(covered).containsExactlyInAnyOrderElementsOf(parserReasons);
  }

  @Test
  void shouldCoverEveryActionCronFlavorAndMisfireWhenVectorsAreRead() {
    List<JsonNode> accepted =
        allVectors().stream().map(v -> v.get("expect")).filter(e -> e.has("action")).toList();

    assertThat(accepted.stream().map(e -> e.get("action").asText()).distinct())
        .containsExactlyInAnyOrder(wireNames(Action.values(), Action::wireName));
    List<JsonNode> crons =
        accepted.stream().filter(e -> e.has("cron")).map(e -> e.get("cron")).toList();
    assertThat(crons.stream().map(c -> c.get("type").asText()).distinct())
        .containsExactlyInAnyOrder(wireNames(CronFlavor.values(), CronFlavor::wireName));
    assertThat(crons.stream().map(c -> c.get("misfire").asText()).distinct())
        .containsExactlyInAnyOrder(wireNames(Misfire.values(), Misfire::wireName));
  }

  @Test
  void shouldHaveUniqueNamesAndWellFormedCasesWhenVectorsAreRead() {
    List<JsonNode> vectors = allVectors();

    assertThat(vectors).hasSizeGreaterThanOrEqualTo(60);
    assertThat(vectors.stream().map(v -> v.get("name").asText())).doesNotHaveDuplicates();
    for (JsonNode v : vectors) {
      String name = v.get("name").asText();
      assertThat(v.has("key") && v.has("value") && v.has("timestamp") && v.has("now"))
          .as("%s has key, value, timestamp and now", name)
          .isTrue();
      assertThat(v.get("headers").isArray()).as("%s has a header array", name).isTrue();
      JsonNode expect = v.get("expect");
      assertThat(expect.has("rejected") != expect.has("action"))
          .as("%s expects either a rejection or an action", name)
          .isTrue();
      if (expect.has("rejected")) {
        assertThat(name)
            .as("rejection cases are named after their code")
            .startsWith(expect.get("rejected").asText() + ":");
      } else if (expect.get("action").asText().equals("schedule")) {
        assertThat(fieldNames(expect))
            .as("%s names every schedule field once, and no unknown one", name)
            .containsAll(SCHEDULE_FIELDS.subList(0, 7))
            .containsAnyOf("dueMs", "cron")
            .isSubsetOf(SCHEDULE_FIELDS)
            .doesNotContain(expect.has("cron") ? "dueMs" : "cron");
        if (expect.has("cron")) {
          assertThat(fieldNames(expect.get("cron")))
              .as("%s cron fields", name)
              .containsExactlyInAnyOrder(
                  "expression", "type", "zone", "startAtMs", "endAtMs", "maxFires", "misfire");
        }
      } else if (expect.get("action").asText().equals("reschedule")) {
        assertThat(fieldNames(expect))
            .as(name)
            .containsAnyOf("dueMs", "cron")
            .isSubsetOf("action", "id", "timestamp", "dueMs", "cron")
            .doesNotContain(expect.has("cron") ? "dueMs" : "cron");
      } else {
        assertThat(fieldNames(expect)).as(name).isSubsetOf("action", "id", "timestamp");
      }
    }
  }

  /** The fields of an accepted schedule: always the first seven, then one of dueMs and cron. */
  private static final List<String> SCHEDULE_FIELDS =
      List.of(
          "action",
          "id",
          "targetTopic",
          "targetKey",
          "targetPartition",
          "payload",
          "carried",
          "dueMs",
          "cron",
          "timestamp");

  private static List<String> fieldNames(JsonNode node) {
    List<String> names = new ArrayList<>();
    node.fieldNames().forEachRemaining(names::add);
    return names;
  }

  // ---------------------------------------------------------------------------------------------

  private static void assertRejected(ParseResult result, String code) {
    if (!(result instanceof ParseResult.Rejected rejected)) {
      fail("expected rejection %s but was %s", code, result);
      return;
    }
    assertThat(rejected.rejection().reason().name())
        .as("rejection code (message: %s)", rejected.rejection().message())
        .isEqualTo(code);
    assertThat(rejected.rejection().message()).isNotBlank();
  }

  private static void assertAccepted(ParseResult result, JsonNode expect) {
    if (!(result instanceof ParseResult.Accepted accepted)) {
      fail("expected %s but was %s", expect, result);
      return;
    }
    DelayRequest request = accepted.request();
    assertThat(request.action().wireName()).as("action").isEqualTo(expect.get("action").asText());
    assertThat(request.id()).as("id").isEqualTo(expect.get("id").asText());
    if (expect.has("timestamp")) {
      assertThat(request.timestamp()).as("timestamp").isEqualTo(expect.get("timestamp").asLong());
    }
    if (request.action() == Action.RESCHEDULE) {
      assertThat(request.schedule()).as("schedule of a reschedule").isNull();
      assertTiming(request.newTiming(), expect);
      return;
    }
    if (request.action() != Action.SCHEDULE) {
      assertThat(request.schedule()).as("schedule of a %s", request.action()).isNull();
      assertThat(request.newTiming()).as("new timing of a %s", request.action()).isNull();
      return;
    }
    Schedule schedule = request.schedule();
    Target target = schedule.target();
    assertThat(target.topic()).as("targetTopic").isEqualTo(expect.get("targetTopic").asText());
    assertThat(target.key()).as("targetKey").isEqualTo(expectedBytes(expect.get("targetKey")));
    JsonNode partition = expect.get("targetPartition");
    if (partition == null || partition.isNull()) {
      assertThat(target.partition()).as("targetPartition").isEmpty();
    } else {
      assertThat(target.partition()).as("targetPartition").hasValue(partition.asInt());
    }
    assertTiming(schedule.timing(), expect);
    assertThat(schedule.payload()).as("payload").isEqualTo(expectedBytes(expect.get("payload")));
    assertThat(schedule.headers())
        .as("carried headers")
        .containsExactlyElementsOf(headers(expect.get("carried")));
  }

  private static void assertTiming(Timing timing, JsonNode expect) {
    if (expect.has("cron")) {
      assertCron(timing, expect.get("cron"));
    } else {
      assertThat(timing).as("timing").isEqualTo(new Timing.Once(expect.get("dueMs").asLong()));
    }
  }

  private static void assertCron(Timing timing, JsonNode cron) {
    assertThat(timing).as("timing").isInstanceOf(CronSpec.class);
    CronSpec spec = (CronSpec) timing;
    assertThat(spec.expression()).as("cron expression").isEqualTo(cron.get("expression").asText());
    assertThat(spec.flavor().wireName()).as("cron type").isEqualTo(cron.get("type").asText());
    assertThat(spec.zone().getId()).as("cron zone").isEqualTo(cron.get("zone").asText());
    assertThat(spec.startAtMs())
        .as("cron startAtMs")
        .isEqualTo(longOr(cron.get("startAtMs"), CronSpec.NO_START));
    assertThat(spec.endAtMs())
        .as("cron endAtMs")
        .isEqualTo(longOr(cron.get("endAtMs"), CronSpec.NO_END));
    assertThat(spec.maxFires())
        .as("cron maxFires")
        .isEqualTo(longOr(cron.get("maxFires"), CronSpec.UNLIMITED));
    assertThat(spec.misfire().wireName())
        .as("cron misfire")
        .isEqualTo(cron.get("misfire").asText());
  }

  // ---------------------------------------------------------------------------------------------

  /** Runs one vector's record through a parser with the vector's limits. */
  static ParseResult parse(JsonNode vector) {
    return new RequestParser(limits(vector.get("limits")))
        .parse(
            bytes(vector, "key", "keyBase64"),
            bytes(vector, "value", "valueBase64"),
            headers(vector.get("headers")),
            vector.get("timestamp").asLong(),
            vector.get("now").asLong());
  }

  static List<JsonNode> allVectors() {
    try (InputStream in = RequestVectorsTest.class.getResourceAsStream(VECTORS)) {
      if (in == null) {
        throw new IllegalStateException(VECTORS + " is not on the test classpath");
      }
      List<JsonNode> vectors = new ArrayList<>();
      new ObjectMapper().readTree(in).forEach(vectors::add);
      return vectors;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static RequestLimits limits(JsonNode limits) {
    RequestLimits d = RequestLimits.DEFAULTS;
    if (limits == null) {
      return d;
    }
    return new RequestLimits(
        limits.path("maxIdBytes").asInt(d.maxIdBytes()),
        limits.path("maxPayloadBytes").asInt(d.maxPayloadBytes()),
        limits.path("maxHeaders").asInt(d.maxHeaders()),
        limits.path("horizonMs").asLong(d.horizonMs()));
  }

  /** A textual field, or its base64 alternative for bytes that are not UTF-8. */
  private static byte[] bytes(JsonNode vector, String textField, String base64Field) {
    if (vector.hasNonNull(base64Field)) {
      return Base64.getDecoder().decode(vector.get(base64Field).asText());
    }
    return expectedBytes(vector.get(textField));
  }

  /** {@code null}, UTF-8 text, or {@code {"base64": ...}}. */
  private static byte[] expectedBytes(JsonNode value) {
    if (value == null || value.isNull()) {
      return null;
    }
    if (value.isObject()) {
      return Base64.getDecoder().decode(value.get("base64").asText());
    }
    return value.asText().getBytes(StandardCharsets.UTF_8);
  }

  private static RecordHeaders headers(JsonNode pairs) {
    RecordHeaders headers = new RecordHeaders();
    if (pairs != null) {
      for (JsonNode pair : pairs) {
        headers.add(new RecordHeader(pair.get(0).asText(), expectedBytes(pair.get(1))));
      }
    }
    return headers;
  }

  private static long longOr(JsonNode value, long absent) {
    return value == null || value.isNull() ? absent : value.asLong();
  }

  private static <T> String[] wireNames(T[] values, Function<T, String> wireName) {
    return Stream.of(values).map(wireName).toArray(String[]::new);
  }
}

package dev.kdelay.service.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code GET /cron/preview}: the topology's occurrences, as JSON, with the changes marked. */
class CronPreviewTest {

  private static final long HORIZON = Duration.ofDays(3650).toMillis();

  @Test
  void shouldListTheNextOccurrencesInTheZoneWithTheDaylightSavingChangesMarked() throws Exception {
    // when: a daily 02:30 in Berlin, over the spring-forward of 29 March 2026
    ApiResponse answer =
        CronPreview.answer(
            Map.of(
                "cron", "0 30 2 * * ?",
                "zone", "Europe/Berlin",
                "count", "3",
                "from", "2026-03-27T12:00:00Z"),
            0,
            HORIZON);

    // then
    JsonNode json = ApiResponse.MAPPER.readTree(answer.body());
    assertThat(answer.status()).isEqualTo(200);
    assertThat(json.path("cronType").asText()).isEqualTo("quartz");
    JsonNode occurrences = json.path("occurrences");
    assertThat(occurrences).hasSize(3);
    assertThat(occurrences.get(1).path("at").asText()).isEqualTo("2026-03-29T01:00:00Z");
    assertThat(occurrences.get(1).path("local").asText()).isEqualTo("2026-03-29T03:00");
    assertThat(occurrences.get(1).path("offset").asText()).isEqualTo("+02:00");
    assertThat(occurrences.get(1).path("transition").asText()).isEqualTo("in-gap");
    assertThat(occurrences.get(0).path("transition").isNull()).isTrue();
  }

  @Test
  void shouldMarkTheFallBackForAUnixExpression() throws Exception {
    ApiResponse answer =
        CronPreview.answer(
            Map.of(
                "cron", "30 2 * * *",
                "cronType", "unix",
                "zone", "Europe/Berlin",
                "count", "2",
                "from", "2026-10-24T12:00:00Z"),
            0,
            HORIZON);

    JsonNode occurrences = ApiResponse.MAPPER.readTree(answer.body()).path("occurrences");
    assertThat(occurrences.get(0).path("transition").asText()).isEqualTo("in-overlap-first");
    assertThat(occurrences.get(1).path("transition").asText()).isEqualTo("after-fall-back");
  }

  @Test
  void shouldAnswer400WithTheRequestTopicsCodesForBadInput() {
    assertCode(Map.of(), "BAD_CRON");
    assertCode(Map.of("cron", "every day"), "BAD_CRON");
    assertCode(Map.of("cron", "0 0 * * * ?", "cronType", "cronie"), "BAD_CRON");
    assertCode(Map.of("cron", "0 0 * * * ?", "zone", "Mars/Olympus"), "BAD_ZONE");
    assertCode(Map.of("cron", "0 0 * * * ?", "from", "soon"), "BAD_TIME");
    assertCode(Map.of("cron", "0 0 * * * ?", "count", "101"), "BAD_REQUEST");
    assertCode(Map.of("cron", "0 0 * * * ?", "limit", "1"), "BAD_REQUEST");
  }

  @Test
  void shouldSayWhatIsExpectedAsScheduleBodyDoesWhenAnOptionIsBad() {
    assertThatThrownBy(
            () -> CronPreview.answer(Map.of("cron", "0 0 * * * ?", "zone", "Mars"), 0, HORIZON))
        .hasMessage("zone is 'Mars'; expected an IANA time zone such as Europe/Berlin");
    assertThatThrownBy(
            () -> CronPreview.answer(Map.of("cron", "0 0 * * * ?", "cronType", "x"), 0, HORIZON))
        .hasMessage("cronType is 'x'; expected quartz, unix or spring");
  }

  private static void assertCode(Map<String, String> query, String code) {
    assertThatThrownBy(() -> CronPreview.answer(query, 0, HORIZON))
        .as(query.toString())
        .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.code()).isEqualTo(code));
  }
}

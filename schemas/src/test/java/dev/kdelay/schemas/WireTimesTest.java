package dev.kdelay.schemas;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class WireTimesTest {

  @ParameterizedTest
  @CsvSource({
    "0, 0",
    "1767225900000, 1767225900000",
    "2026-01-01T00:05:00Z, 1767225900000",
    "2026-01-01T00:05:00.250Z, 1767225900250",
    "2026-01-01T01:05:00+01:00, 1767225900000",
    "2025-12-31T19:05:00-05:00, 1767225900000",
    "1969-12-31T23:59:59Z, -1000",
  })
  void shouldParseInstantWhenTextIsEpochMillisOrIso8601(String text, long expected) {
    assertThat(WireTimes.epochMillis(text)).hasValue(expected);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "-1000",
        "tomorrow",
        "2026-01-01",
        "2026-01-01T00:05:00",
        "2026-13-01T00:00:00Z",
        "1767225900.5",
        "1000000000000000000", // 19 digits: more than a decimal may hold, not TOO_FAR
        "١٢٣", // digits, but not ASCII ones
        "+1000000000-12-31T23:59:59Z", // a valid Instant beyond the range of epoch millis
      })
  void shouldBeEmptyWhenTextIsNotAnInstant(String text) {
    assertThat(WireTimes.epochMillis(text)).isEmpty();
  }

  @ParameterizedTest
  @CsvSource({
    "0, 0",
    "30000, 30000",
    "PT30S, 30000",
    "PT15M, 900000",
    "P1D, 86400000",
    "P1DT1H, 90000000",
    "PT1.5S, 1500",
    "PT0S, 0",
  })
  void shouldParseDurationWhenTextIsMillisOrIso8601(String text, long expected) {
    assertThat(WireTimes.durationMillis(text)).hasValue(expected);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "-1",
        "PT-1S",
        "-PT1S",
        "30s",
        "P1Y",
        "P1M",
        "soon",
        "1000000000000000000",
        "PT9999999999999999S"
      })
  void shouldBeEmptyWhenTextIsNotANonNegativeDuration(String text) {
    assertThat(WireTimes.durationMillis(text)).isEmpty();
  }
}

package dev.kdelay.service.input;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class TimeArgumentsTest {

  @ParameterizedTest
  @CsvSource({
    "PT30S, 30000",
    "pt1m30s, 90000",
    "P1DT1H, 90000000",
    "500ms, 500",
    "30s, 30000",
    "5m, 300000",
    "2h, 7200000",
    "1d, 86400000",
    "1500, 1500",
    "0s, 0",
    "' 10S ', 10000"
  })
  void shouldParseDurationWhenIsoOrPlain(String text, long expectedMillis) {
    assertThat(TimeArguments.duration(text)).isEqualTo(Duration.ofMillis(expectedMillis));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {"", "soon", "30 s", "5w", "1.5s", "-5s", "-PT5S", "PT", "99999999999999999d"})
  void shouldRejectDurationWhenMalformedOrNegative(String text) {
    assertThatThrownBy(() -> TimeArguments.duration(text))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(text.trim());
  }

  @ParameterizedTest
  @CsvSource({
    "2030-01-01T09:00:00Z, 1893488400000",
    "2030-01-01T10:00:00+01:00, 1893488400000",
    "2030-01-01T09:00:00.250Z, 1893488400250",
    "1893488400000, 1893488400000",
    "' 1893488400000 ', 1893488400000",
    "0, 0"
  })
  void shouldParseInstantWhenIsoOrEpochMillis(String text, long expectedEpochMillis) {
    assertThat(TimeArguments.instant(text)).isEqualTo(Instant.ofEpochMilli(expectedEpochMillis));
  }

  @ParameterizedTest
  @ValueSource(strings = {"tomorrow", "2030-01-01", "2030-01-01T09:00:00", "-5", "12:00Z"})
  void shouldRejectInstantWhenNotIsoWithOffsetNorEpochMillis(String text) {
    assertThatThrownBy(() -> TimeArguments.instant(text))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not an instant: '" + text + "'");
  }
}

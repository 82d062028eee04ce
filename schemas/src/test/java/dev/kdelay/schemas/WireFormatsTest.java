package dev.kdelay.schemas;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.HexFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class WireFormatsTest {

  // ------------------------------------------------------------------------------ utf8

  @ParameterizedTest
  @ValueSource(strings = {"", "order-42", "é", "日本", "🕒", "\u0000"})
  void shouldDecodeWhenBytesAreValidUtf8(String text) {
    assertThat(WireFormats.utf8(text.getBytes(UTF_8))).hasValue(text);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "ff", // never valid
        "c3", // truncated two-byte sequence
        "c0af", // overlong encoding of '/'
        "eda080", // encoded UTF-16 surrogate
        "f4908080", // above U+10FFFF
        "80", // lone continuation byte
        "6f72646572ff" // valid prefix, invalid tail
      })
  void shouldBeEmptyWhenBytesAreNotValidUtf8(String hex) {
    assertThat(WireFormats.utf8(HexFormat.of().parseHex(hex))).isEmpty();
  }

  // ------------------------------------------------------------------------------ decimals

  @ParameterizedTest
  @CsvSource({
    "0, 0",
    "7, 7",
    "007, 7",
    "2147483648, 2147483648",
    "999999999999999999, 999999999999999999"
  })
  void shouldParseWhenTextIsANonNegativeDecimalOfAtMost18Digits(String text, long expected) {
    assertThat(WireFormats.nonNegativeDecimal(text)).hasValue(expected);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {"", "-1", "+1", " 1", "1 ", "1.0", "1e3", "0x10", "1000000000000000000", "١٢"})
  void shouldBeEmptyWhenTextIsNotAPlainDecimalOfAtMost18Digits(String text) {
    assertThat(WireFormats.nonNegativeDecimal(text)).isEmpty();
  }

  // ------------------------------------------------------------------------------ instants

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
    assertThat(WireFormats.instant(text)).hasValue(expected);
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
    assertThat(WireFormats.instant(text)).isEmpty();
  }

  // ------------------------------------------------------------------------------ durations

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
    assertThat(WireFormats.durationMillis(text)).hasValue(expected);
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
    assertThat(WireFormats.durationMillis(text)).isEmpty();
  }

  // ------------------------------------------------------------------------------ topic names

  @ParameterizedTest
  @ValueSource(strings = {"t", "orders.timeouts", "A-z_0.9", "...", "_internal", "-"})
  void shouldAcceptTopicNameWhenItIsLegalInKafka(String name) {
    assertThat(WireFormats.legalTopicName(name)).isTrue();
  }

  @ParameterizedTest
  @ValueSource(strings = {"", ".", "..", "a b", "a/b", "tópico", "a:b", "a\u0000"})
  void shouldRejectTopicNameWhenItIsIllegalInKafka(String name) {
    assertThat(WireFormats.legalTopicName(name)).isFalse();
  }

  @Test
  void shouldAcceptTopicNamesUpTo249CharactersWhenCheckingLength() {
    assertThat(WireFormats.legalTopicName("t".repeat(249))).isTrue();
    assertThat(WireFormats.legalTopicName("t".repeat(250))).isFalse();
  }
}

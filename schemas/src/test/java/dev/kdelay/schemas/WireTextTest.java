package dev.kdelay.schemas;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HexFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class WireTextTest {

  @ParameterizedTest
  @ValueSource(strings = {"", "order-42", "é", "日本", "🕒", "\u0000"})
  void shouldDecodeWhenBytesAreValidUtf8(String text) {
    assertThat(WireText.decode(text.getBytes(UTF_8))).hasValue(text);
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
    assertThat(WireText.decode(HexFormat.of().parseHex(hex))).isEmpty();
  }

  @ParameterizedTest
  @CsvSource({
    "0, 0",
    "7, 7",
    "007, 7",
    "2147483648, 2147483648",
    "999999999999999999, 999999999999999999"
  })
  void shouldParseWhenTextIsANonNegativeDecimalOfAtMost18Digits(String text, long expected) {
    assertThat(WireText.nonNegativeDecimal(text)).hasValue(expected);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {"", "-1", "+1", " 1", "1 ", "1.0", "1e3", "0x10", "1000000000000000000", "١٢"})
  void shouldBeEmptyWhenTextIsNotAPlainDecimalOfAtMost18Digits(String text) {
    assertThat(WireText.nonNegativeDecimal(text)).isEmpty();
  }

  @Test
  void shouldNameTheArgumentWhenRequiredTextIsMalformed() {
    assertThatThrownBy(() -> WireText.requireEncoded("a\uD800", "id"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("id must be well-formed Unicode text, got 'a\uD800'");
    assertThatThrownBy(() -> WireText.requireDecoded(new byte[] {(byte) 0xff}, "key"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("key must be well-formed UTF-8, got 1 bytes that are not");
  }

  @Test
  void shouldRoundTripWhenTextIsWellFormed() {
    byte[] bytes = WireText.requireEncoded("日本 🕒", "text");
    assertThat(bytes).isEqualTo("日本 🕒".getBytes(UTF_8));
    assertThat(WireText.requireDecoded(bytes, "text")).isEqualTo("日本 🕒");
    assertThat(WireText.of(42L)).isEqualTo("42".getBytes(UTF_8));
  }

  @Test
  void shouldDecodeOnlyTheRangeWhenGivenOffsetAndLength() {
    byte[] bytes = "order-42".getBytes(UTF_8);
    assertThat(WireText.decode(bytes, 6, 2)).hasValue("42");
    assertThat(WireText.decode("é".getBytes(UTF_8), 0, 1)).isEmpty();
  }
}

package dev.kdelay.schemas;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LogValuesTest {

  @Test
  void plainTokensStayAsTheyAre() {
    assertThat(LogValues.quote("order-42")).isEqualTo("order-42");
    assertThat(LogValues.quote("tenant/a:b.c_d@e+f")).isEqualTo("tenant/a:b.c_d@e+f");
  }

  @Test
  void anythingElseIsQuotedSoItCannotSplitALineOrFakeAField() {
    assertThat(LogValues.quote("a b")).isEqualTo("\"a b\"");
    assertThat(LogValues.quote("x reason=OK")).isEqualTo("\"x reason=OK\"");
    assertThat(LogValues.quote("say \"hi\"\\")).isEqualTo("\"say \\\"hi\\\"\\\\\"");
    assertThat(LogValues.quote("line\nevent=fired\r\t")).isEqualTo("\"line\\nevent=fired\\r\\t\"");
    assertThat(LogValues.quote("bell\u0007")).isEqualTo("\"bell\\u0007\"");
    assertThat(LogValues.quote("é")).isEqualTo("\"é\"");
    assertThat(LogValues.quote("")).isEqualTo("\"\"");
  }

  @Test
  void nullIsADash() {
    assertThat(LogValues.quote((String) null)).isEqualTo("-");
    assertThat(LogValues.quote((Throwable) null)).isEqualTo("-");
  }

  @Test
  void anErrorIsItsClassAndMessageOnOneLine() {
    assertThat(LogValues.quote(new IllegalStateException("two\nlines")))
        .isEqualTo("\"java.lang.IllegalStateException: two\\nlines\"");
  }
}

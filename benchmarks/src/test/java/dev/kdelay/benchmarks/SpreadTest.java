package dev.kdelay.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SpreadTest {

  @Test
  void shouldTakeTheMiddleValueWhenTheCountIsOdd() {
    Spread spread = Spread.of(30, 10, 20);

    assertThat(spread.median()).isEqualTo(20);
    assertThat(spread.min()).isEqualTo(10);
    assertThat(spread.max()).isEqualTo(30);
    assertThat(spread.format(0)).isEqualTo("20 [10-30]");
  }

  @Test
  void shouldAverageTheMiddleTwoWhenTheCountIsEven() {
    assertThat(Spread.of(4, 1, 3, 2).median()).isEqualTo(2.5);
  }

  @Test
  void shouldPrintASingleValueWithoutRangeAndWithThousandsSeparators() {
    assertThat(Spread.of(52_345.6).format(0)).isEqualTo("52,346");
    assertThat(Spread.of(0.413, 0.38, 0.45).format(2)).isEqualTo("0.41 [0.38-0.45]");
  }

  @Test
  void shouldRejectNoValues() {
    assertThatThrownBy(Spread::of).isInstanceOf(IllegalArgumentException.class);
  }
}

package dev.kdelay.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class LogBudgetTest {

  @Test
  void shouldLogAtMostTheBudgetASecondAndSayHowManyWereSkipped() {
    AtomicLong clock = new AtomicLong(1_000);
    LogBudget budget = new LogBudget(3, clock::get);

    // when: ten lines in the same instant
    int admitted = 0;
    for (int i = 0; i < 10; i++) {
      if (budget.admit().isPresent()) {
        admitted++;
      }
    }
    // a second later
    clock.addAndGet(TimeUnit.SECONDS.toNanos(1));
    OptionalLong next = budget.admit();

    // then
    assertThat(admitted).isEqualTo(3);
    assertThat(next).hasValue(7);
    assertThat(budget.admit()).hasValue(0);
  }
}
